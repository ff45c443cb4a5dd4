/* The jail driver: Linux namespaces, an overlay root, cgroups, rlimits,
 * no_new_privs, trimmed capabilities and seccomp (docs/runner.md). */
#ifndef JAIL_DRIVER_H
#define JAIL_DRIVER_H

#include "runner.h"

/* Check the host (cgroups, the agent), prepare the runtime dir. Returns the
 * driver, or NULL with err. */
const struct rn_driver *jail_driver_init(struct runner *r, int agent_stderr,
					 struct sbx_err *err);

#endif
