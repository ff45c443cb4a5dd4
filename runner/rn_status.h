/* What the runner tells a gateway about itself (op `status`): its name, an
 * instance id that changes with every start (a gateway tells a restart
 * from a blip by it), whether it drains, and its room for sandboxes. And
 * the drain switch itself (op `drain`, SIGUSR1). */
#ifndef RN_STATUS_H
#define RN_STATUS_H

#include <cJSON.h>

#include "runner.h"

/* The memory_mb of a sandbox of the default size: slots_free counts how
 * many of those still fit. */
#define RN_SLOT_MB 512

/* Pick r->instance (32 hex from getrandom). 0, or -1 with err. */
int rn_status_init(struct runner *r, struct sbx_err *err);
/* The status object of docs/runner.md. */
cJSON *rn_status_json(const struct runner *r);
/* Drain on or off; how says who asked (logged on a change only). */
void rn_drain_set(struct runner *r, int on, const char *how);

#endif
