/* The idle timeout of sandboxes (idle_timeout_ms), probed through the
 * agent's `idle` operation from the runner's tick. */
#ifndef RN_IDLE_H
#define RN_IDLE_H

#include <stdint.h>

#include "runner.h"

/* Advance sb's idle probe; stops sb when it has been idle too long.
 * Returns when to be called again (monotonic ms), or -1 for no need. */
int64_t rn_idle_check(struct runner *r, struct rn_sandbox *sb, int64_t now);
/* Drop a probe in flight (the sandbox stops or goes away). */
void rn_idle_close(struct rn_sandbox *sb);

#endif
