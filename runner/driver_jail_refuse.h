/* New TCP connections of a jail refused while its socket buffers are past
 * their budget (the driver's refuse_connections, runner/rn_sockwatch.c). */
#ifndef JAIL_REFUSE_H
#define JAIL_REFUSE_H

#include "runner.h"

/* on: every new TCP connection made in sb's network namespace (loopback
 * and outbound, IPv4 and IPv6, the runner's own into it too) is refused
 * with a reset, so connect(2) fails with ECONNREFUSED; connections already
 * open go on. off: allowed again. The change runs on after the call: its
 * pid, or -1 with err. */
pid_t jail_refuse_connections(struct rn_sandbox *sb, int on, struct sbx_err *err);

#endif
