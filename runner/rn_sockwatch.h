/* The socket-memory backstop. A sandbox's TCP buffers have a budget:
 * memory.kmem.tcp.limit_in_bytes on v1 (rn_cgroup_tcp_bytes, a quarter of
 * memory_mb), a part of memory.max on v2. Past it the kernel still forces
 * about one segment per socket and direction, so many sockets hold more
 * than the budget. Once a second the runner looks at the socket memory of
 * every sandbox of the host in one read (the "sandbox" cgroup above every
 * driver's, which counts its children's): while that total is under the
 * smallest bound any sandbox can have, no sandbox is over and nothing else
 * is read, whatever the number of sandboxes. Otherwise it reads each of its
 * own sandboxes' (v1 memory.kmem.tcp.usage_in_bytes, v2 memory.stat sock):
 * one over its bound (the budget and a quarter more for the forced
 * segments) for RN_SOCK_OVER_MS is stopped as out_of_memory. */
#ifndef RN_SOCKWATCH_H
#define RN_SOCKWATCH_H

#include "runner.h"

#define RN_SOCKWATCH_EVERY_MS 1000
#define RN_SOCK_OVER_MS 3000      /* over its bound this long: stopped */
#define RN_SOCK_CG_TOP "sandbox"  /* every driver's cgroups are below it */

/* The bytes of socket memory a sandbox of memory_mb may hold for long. */
long long rn_sock_bound_bytes(long long memory_mb);
/* Look when due; returns the ms until the next look. */
int rn_sockwatch_tick(struct runner *r);

#endif
