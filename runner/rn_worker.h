/* Workers: a long step of a sandbox's pause or resume (gvisor's `runsc
 * checkpoint`, the wait for a restore) in a child process of its own, so
 * the runner's loop answers every other call meanwhile. The loop hears of
 * its end through SIGCHLD (rn_sandbox_reap), as of an image pull's. */
#ifndef RN_WORKER_H
#define RN_WORKER_H

#include <stddef.h>
#include <sys/types.h>

#include "runner.h"
#include "sbx_err.h"

/* In the child: 0, or -1 with why in msg (n bytes). */
typedef int (*rn_worker_fn)(const struct rn_sandbox *sb, void *arg, char *msg, size_t n);
/* In the loop once it ended: msg NULL when fn returned 0, else why not. */
typedef void (*rn_worker_done_fn)(struct runner *r, struct rn_sandbox *sb, const char *msg);

/* Fork fn(sb, arg) (arg is the child's copy of the caller's memory) and
 * call done when it ended. 0, or -1 with err (nothing started). */
int rn_worker_start(struct runner *r, struct rn_sandbox *sb, rn_worker_fn fn, void *arg,
		    rn_worker_done_fn done, struct sbx_err *err);
/* From the reaper: 1 when pid was a worker (its done ran), else 0. */
int rn_worker_reaped(struct runner *r, pid_t pid, int st);

#endif
