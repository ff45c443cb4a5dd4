/* Sandbox lifecycles: create, readiness, deadlines, stop, reaping and
 * cleanup, driven from the loop by rn_sandbox_tick and rn_sandbox_reaped. */
#ifndef RN_SANDBOX_H
#define RN_SANDBOX_H

#include <cJSON.h>

#include "runner.h"

/* Create and start a sandbox from spec with drv, an available driver
 * (rn_drivers_pick); its dir is marked with drv's name first. (Ownership of spec's strings moves
 * to the sandbox, also on failure.) Returns the sandbox in status starting,
 * or NULL with err: EINVAL (a field), EAGAIN/ENOSPC (capacity: slots, or
 * memory_mb over what the runner admits), other (internal). */
struct rn_sandbox *rn_sandbox_create(struct runner *r, struct rn_driver *drv,
				     struct rn_spec *spec, struct sbx_err *err);
/* The sandbox's dir, marked with its driver's name (RN_DRIVER_FILE): the
 * runner's before start, or the driver's own step when it makes_dir. 0
 * (sb->dir_made set: a failed start removes it) or -1 with err (nothing
 * left; a dir that was already there is not this start's to remove). */
int rn_sandbox_make_dir(struct rn_sandbox *sb, struct sbx_err *err);
/* Start the final sandbox sb again as it is (its id, spec and driver;
 * rn_persist.c sets what it starts from): status starting, its clocks
 * from now. 0, or -1 with err (EAGAIN/ENOSPC capacity, other: the
 * driver's; sb stays final with the error). */
int rn_sandbox_restart(struct runner *r, struct rn_sandbox *sb, struct sbx_err *err);
/* Begin stopping sb for reason (no-op if already stopping or gone). */
void rn_sandbox_stop(struct runner *r, struct rn_sandbox *sb, enum rn_reason reason);
/* A driver's start: fd (taken over) reaches its end when sb's agent
 * listens (or dies), and the readiness dial goes at once instead of on
 * the next timer tick. */
void rn_sandbox_watch_ready(struct rn_sandbox *sb, int fd);
/* Extend the deadline by ms. -1 with err: EBUSY when not running, EINVAL
 * when expires_at would pass created_at + max_lifetime_ms (itself capped
 * at RN_TIMEOUT_MAX_MS, the most a create may ask for). */
int rn_sandbox_extend(struct runner *r, struct rn_sandbox *sb, int64_t ms,
		      int64_t max_lifetime_ms, struct sbx_err *err);
/* Reap exited children (on SIGCHLD). */
void rn_sandbox_reap(struct runner *r);
/* Readiness checks, deadlines, pending cleanups. Returns the number of ms
 * until it wants to run again (-1: no need). */
int rn_sandbox_tick(struct runner *r);
/* The sandbox as the API shows it (never env values). */
cJSON *rn_sandbox_json(const struct runner *r, const struct rn_sandbox *sb);
/* MiB of memory_mb held by r's sandboxes not yet cleaned up. */
int64_t rn_sandbox_memory_committed(const struct runner *r);
/* 1 when sb has reached a final status. */
int rn_sandbox_final(const struct rn_sandbox *sb);

#endif
