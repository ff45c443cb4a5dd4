/* Internals shared by the jail driver's parent side (driver_jail.c) and
 * its child side (driver_jail_child.c and the files it calls). */
#ifndef JAIL_H
#define JAIL_H

#include <limits.h>
#include <sys/types.h>

#include "rn_spec.h"
#include "runner.h"
#include "sbx_err.h"

struct jail_seccomp_prog;

#define JAIL_UID_BASE 200000u     /* first host uid of slot 0 */
#define JAIL_UID_COUNT 65536u     /* ids per sandbox: 0..65535 inside */
#define JAIL_SANDBOX_UID 1000
#define JAIL_AGENT_SOCK_DIR "/run/sbx"
#define JAIL_AGENT_SOCK JAIL_AGENT_SOCK_DIR "/agent.sock"
#define JAIL_SOCK_SUBDIR "rw/sock"      /* its host side, under the sandbox's dir */
/* the agent's --ready-fd in a jail (3 is the setup channel, closed at exec) */
#define JAIL_READY_FD 4

/* What the child needs to build the sandbox; filled in by the parent
 * before clone, read by the child from its copy of memory. */
struct jail_plan {
	char dir[PATH_MAX];      /* the sandbox's state dir; holds the next four */
	char lower[PATH_MAX];    /* host path where the parent mounts the image */
	char lowerdir[256];      /* overlay's lowerdir, relative: "l0:l1:lower" */
	char rw[PATH_MAX];       /* tmpfs for the writable layer */
	char root[PATH_MAX];     /* overlay mount point, becomes / */
	char sockdir[PATH_MAX];  /* host dir bound at JAIL_AGENT_SOCK_DIR */
	const char *runtime_dir; /* agent + libs, bound read-only */
	const char *loader;      /* basename of ld.so inside runtime/lib */
	const char *preload;     /* ld.so's --preload list, or "" */
	const struct rn_spec *spec;
	int slot;                /* its veth addresses (the resolver's) */
	int agent_stderr;        /* keep the runner's stderr for the agent */
	const struct jail_seccomp_prog *seccomp;   /* the driver's, compiled */
	int ready_fd;            /* the runner's pipe, the agent's --ready-fd; -1 none */
	int cap_last;            /* the kernel's highest capability (read once) */
};

/* The child's first message: its network namespace exists (one byte, so
 * never taken for a jail_sync_msg). */
#define JAIL_SYNC_NETNS "n"

/* Message the child sends on failure (a successful exec sends nothing:
 * the parent sees EOF because the channel is close-on-exec). */
struct jail_sync_msg {
	int err;
	char msg[480];
};

/* Child side: wait for the parent's go byte on fd, build the jail and exec
 * the agent. Never returns. */
void jail_child_run(const struct jail_plan *plan, int fd) __attribute__((noreturn));

/* Cover the host-wide files of the new /proc (cwd: the new root, before
 * pivot_root). 0 or -1 with err set. */
int jail_mask_proc(const struct jail_plan *p, struct sbx_err *err);

/* driver_jail.c, for driver_jail_snap.c: sb's cgroup path, the host uid
 * of its root. */
const char *jail_cgroup(const struct rn_sandbox *sb);
uid_t jail_uid_base(const struct rn_sandbox *sb);

/* The warm pool's steps (rn_warm.h). In the runner: take sb's slot
 * (sb->drv_data; the runner's cleanup gives it back). In a warmer, a
 * fork of the runner: the rest of a start, the child cloned as the
 * runner's own (CLONE_PARENT) and its pid reported on report_fd first.
 * At a take, in the runner: apply the cgroup limits of spec that differ
 * from sb's (vcpus), and write state.json again
 * (its owner, its shape). Each 0, or -1 with err. */
int jail_warm_reserve(struct rn_sandbox *sb, struct sbx_err *err);
int jail_warm_launch(struct rn_sandbox *sb, int report_fd, struct sbx_err *err);
int jail_warm_apply(struct rn_sandbox *sb, const struct rn_spec *spec, struct sbx_err *err);
int jail_warm_state(const struct rn_sandbox *sb, struct sbx_err *err);

/* driver_jail_snap.c: pause, resume and snapshot of a jail sandbox */
int jail_pause(struct rn_sandbox *sb, struct sbx_err *err);
int jail_resume(struct rn_sandbox *sb, struct sbx_err *err);
/* The API's pause and resume: the freeze and thaw above, with the agent's
 * connections ended first (a `paused` error on streams) and its listener
 * open again after (driver_jail_snap.c). */
int jail_pause_op(struct rn_sandbox *sb, struct sbx_err *err);
int jail_resume_op(struct rn_sandbox *sb, struct sbx_err *err);
int jail_snapshot(struct rn_sandbox *sb, const char *dst, struct rn_layer_stats *st,
		  struct sbx_err *err);

#endif
