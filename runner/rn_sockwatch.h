/* The socket-memory backstop. A sandbox's TCP buffers have a budget:
 * memory.kmem.tcp.limit_in_bytes on v1 (rn_cgroup_tcp_bytes, a quarter of
 * memory_mb), a part of memory.max on v2. At the budget the kernel holds
 * sends (they wait, or fail with EAGAIN) but refuses no new socket or
 * connection, and still forces about one segment into each socket and
 * direction, so many sockets hold more than the budget. Once a second the
 * runner looks at the socket memory of every sandbox of the host in one
 * read (the "sandbox" cgroup above every driver's, which counts its
 * children's): while that total is under the smallest level any sandbox
 * acts at, nothing else is read, whatever the number of sandboxes.
 * Otherwise it reads each of its own sandboxes' (v1
 * memory.kmem.tcp.usage_in_bytes, v2 memory.stat sock):
 * - at its budget (within a sixteenth of it), its new TCP connections are
 *   refused (the driver's refuse_connections: connect fails with
 *   ECONNREFUSED inside) until it is back under three quarters of it;
 * - over its bound (the budget and a quarter more for the forced
 *   segments) for RN_SOCK_OVER_MS, it is stopped as out_of_memory. */
#ifndef RN_SOCKWATCH_H
#define RN_SOCKWATCH_H

#include "runner.h"

#define RN_SOCKWATCH_EVERY_MS 1000
#define RN_SOCK_OVER_MS 3000      /* over its bound this long: stopped */
#define RN_SOCK_CG_TOP "sandbox"  /* every driver's cgroups are below it */

/* The bytes of socket memory of a sandbox of memory_mb: its budget, the
 * level from which its new connections are refused, the level under which
 * they are allowed again, its bound (stopped if over it for long). */
long long rn_sock_budget_bytes(long long memory_mb);
long long rn_sock_refuse_bytes(long long memory_mb);
long long rn_sock_allow_bytes(long long memory_mb);
long long rn_sock_bound_bytes(long long memory_mb);
/* Look when due; returns the ms until the next look. */
int rn_sockwatch_tick(struct runner *r);
/* The reaper's: 1 when pid was a sandbox's refusal change (now done). */
int rn_sockwatch_reaped(struct runner *r, pid_t pid, int st);

#endif
