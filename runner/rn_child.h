/* The first steps of every process the runner forks for a sandbox (the
 * jail's child, gvisor's watcher), before it builds or starts anything. */
#ifndef RN_CHILD_H
#define RN_CHILD_H

#include "sbx_err.h"

/* Every signal unblocked and at its default, umask 022, oom_score_adj 0
 * (the runner lowers its own: RN_OOM_SCORE_ADJ). The runner ignores
 * SIGPIPE and blocks SIGCHLD/SIGTERM/SIGINT/SIGUSR1 for its signalfd, and
 * ignored dispositions and the mask survive exec; the sandbox's umask is
 * the usual one, not whatever the runner was started with (under umask 000
 * every file a command made, and once the agent's socket, was writable by
 * every uid inside). */
void rn_child_defaults(void);

/* The runner's own oom_score_adj: on a host short of memory (overcommit,
 * or anything else) the kernel's OOM killer takes a sandbox's process
 * before the runner that would clean up after it. */
#define RN_OOM_SCORE_ADJ "-800"

/* Fresh stdio: 0 and 1 on /dev/null, 2 as well unless keep_stderr (the
 * runner's stderr for the agent). -1 with errno when /dev/null cannot be
 * opened. */
int rn_child_stdio(int keep_stderr);

/* Bring up lo in the calling process's network namespace (needs
 * CAP_NET_ADMIN there); with segment > 0 also set its MTU and GSO size to
 * segment bytes, in the same rtnetlink request. 0 or -1 with err. */
int rn_child_loopback_up(int segment, struct sbx_err *err);
/* The same through s, an rtnetlink socket made in the namespace whose lo
 * it is (the jail's parent does it for its child: driver_jail_port.h). */
int rn_loopback_up(int s, int segment, struct sbx_err *err);

#endif
