/* What the gvisor driver's files share (driver_gvisor.c: start, stop and
 * cleanup; driver_gvisor_ckpt.c: pause, resume and adopt after a
 * restart): its state, a sandbox's, one start's plan, and the steps both
 * take. Not for any other module: the rest of the runner sees the driver
 * through rn_driver_gvisor only. */
#ifndef DRIVER_GVISOR_INT_H
#define DRIVER_GVISOR_INT_H

#include "driver_gvisor.h"
#include "rn_cgroup.h"
#include "rn_slot.h"

/* A runner's gvisor sandboxes are cgroups below a parent of their own, so
 * reconcile finds them (and only them) even when their dirs are gone; the
 * jail's sandboxes are sandbox/<id>, a level above. */
#define GV_CG_TOP "sandbox"

/* The driver's state (rn_driver.data). */
struct gv_state {
	char runsc[PATH_MAX];
	char root[PATH_MAX];        /* runsc --root: <state>/gvisor */
	char cg_parent[64];         /* sandbox/gvisor_<runner> */
	char loader[64];
	long version;
	struct rn_slots slots;      /* veth addresses of allow-all sandboxes */
};

/* A sandbox's (drv_data). */
struct gv_sb {
	char cg[RN_ID_MAX + 96];    /* its cgroup path */
	int slot;                   /* its veth addresses (allow-all), or -1 */
	int checkpointed;           /* paused to <dir>/checkpoint: no process left */
};

/* One start's paths, runsc's flags and argv, and config.json's inputs:
 * the bundle and argv point into it (it lives on gv_start's stack). */
struct gv_launch {
	char image[PATH_MAX + 64], rootfs[PATH_MAX], sockdir[PATH_MAX], guestdir[PATH_MAX];
	char pidfile[PATH_MAX];
	char cgpath[RN_ID_MAX + 98];
	char netns[PATH_MAX];       /* "" (deny-all), or the held <dir>/netns */
	char rootflag[PATH_MAX + 16], logflag[PATH_MAX + 16];
	char bundle[PATH_MAX + 16], pidflag[PATH_MAX + 16], imageflag[PATH_MAX + 32];
	char *argv[20];
	char *poke[8];              /* restore: `runsc kill <id> USR2` after it */
	struct gv_bundle b;
	int allow_all;
	int restore;                /* `runsc restore` of <dir>/checkpoint, not run:
				     * allow-all's watcher joins netns */
	int sv[2];                  /* allow-all: the watcher's channel, else -1 */
};

static inline struct gv_state *state_of(const struct rn_driver *d)
{
	return d->data;
}

static inline struct gv_sb *sb_of(const struct rn_sandbox *sb)
{
	return sb->drv_data;
}

/* runsc's state files of sandbox id in its --root, removed directly. */
void gv_remove_runsc_state(const struct gv_state *gs, const char *id);
/* Kill and remove a sandbox's cgroups. 0 done, 1 still busy. */
int gv_sweep_cgroup(const struct rn_cgroup *cg, const char *path);
/* The image and the agent runtime into l, or why this runner cannot start it. */
int gv_check_runtime(struct gv_state *gs, const struct rn_sandbox *sb, struct gv_launch *l,
		     struct sbx_err *err);
/* Name everything of a start (or restore, l->restore) in l: nothing is made. */
void gv_plan_launch(struct gv_launch *l, const struct gv_state *gs, const struct rn_sandbox *sb);
/* The sandbox's memory, pids and cpu cgroups with their limits. */
int gv_make_cgroups(const struct rn_sandbox *sb, struct sbx_err *err);
/* Fork the watcher (gv_watch) of l: sb->pid from here on. */
int gv_fork_watcher(struct gv_launch *l, struct rn_sandbox *sb, struct sbx_err *err);
/* The last error runsc logged into sb->error ("runsc: ..."), if any. */
void gv_runsc_error(struct rn_sandbox *sb);
/* `runsc --root=R <op> [flags] ID [sig]`, waited for; its output in err
 * when it fails. */
int gv_runsc_op(const struct rn_sandbox *sb, const char *op, const char *flag, const char *sig,
		struct sbx_err *err);

/* The driver's operations of driver_gvisor_ckpt.c. */
int gv_pause(struct rn_sandbox *sb, struct sbx_err *err);
int gv_resume(struct rn_sandbox *sb, struct sbx_err *err);
int gv_adopt(struct rn_driver *d, const char *id, const char *dir);

#endif
