/* The warm pool (--warm-pool N): up to N jail sandboxes of the default
 * image and the default shape, started before anyone asks, each handed
 * whole to one create whose spec it can take (rn_warm_take) and never
 * returned. A warm sandbox sits in the runner's list flagged warm: it is
 * not listed, found, counted in status or visible to any client; it is
 * counted in admission (its memory_mb, its use) and stopped like any
 * other at shutdown; a crash leaves its dir to reconcile, which keeps no
 * record of it (the dir's "warm" file).
 *
 * A refill never blocks the loop: a warmer, a fork of the runner, makes
 * the sandbox (dirs, mounts, cgroup, the clone, the child's setup) while
 * the loop goes on, reports the child's pid (the child is the runner's
 * own: CLONE_PARENT) and then whether the start worked, and exits. One
 * warmer at a time. */
#ifndef RN_WARM_H
#define RN_WARM_H

#include <sys/types.h>

#include "runner.h"

#define RN_WARM_MAX 64               /* --warm-pool at most */
#define RN_WARM_MAX_TEXT "64"
/* --warm-pool's default: none. Each warm sandbox holds its memory_mb of
 * the admission cap (512 MiB by default) and a uid range; a runner that
 * wants creates at bwrap's speed asks for a few. */
#define RN_WARM_DEFAULT 0
#define RN_WARM_MARK "warm"          /* in a warm sandbox's dir until taken */

/* What a warmer writes on its pipe: the child's pid once cloned, then
 * the outcome (err 0: started; else why not). */
enum rn_warm_stage { RN_WARM_CLONED = 1, RN_WARM_DONE };
struct rn_warm_msg {
	int stage;
	pid_t pid;
	int err;
	char msg[240];
};

/* Write one message (err NULL: success). 0 or -1 (errno). */
int rn_warm_report(int fd, enum rn_warm_stage stage, pid_t pid, const struct sbx_err *err);

/* Set the pool's size and its shape (the defaults of a create of the
 * default image). 0, or -1 with err. */
int rn_warm_init(struct runner *r, int size, struct sbx_err *err);
/* Start a warmer when the pool is short and none runs; read nothing.
 * Returns ms until it wants to run again (-1: no need). */
int rn_warm_tick(struct runner *r);
/* A create of spec under drv: a warm sandbox made its own (spec moves
 * into it, the limits that differ applied, created and deadline from
 * now), status running; or NULL when none is ready or spec is not one
 * the pool can serve (spec untouched: the create goes on cold). */
struct rn_sandbox *rn_warm_take(struct runner *r, const struct rn_driver *drv,
				struct rn_spec *spec);
/* A reaped pid the sandbox list did not know: 1 when it was the pool's
 * (a warmer, or a warm child whose pid is still on its way). */
int rn_warm_reaped(struct runner *r, pid_t pid, int status);
/* A warm sandbox reached its end before anyone took it. */
void rn_warm_ended(const struct rn_sandbox *sb);
/* 1 while sb's warmer may still touch its files: its cleanup waits. */
int rn_warm_building(const struct rn_sandbox *sb);
/* Warm sandboxes ready to be taken (their agent answered). */
int rn_warm_ready(const struct runner *r);
/* Stop every warm sandbox of image (NULL: every one): its image is
 * deleted, the runner drains. */
void rn_warm_flush(struct runner *r, const char *image);

#endif
