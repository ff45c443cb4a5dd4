/* The runner's state: its sandboxes, the driver that runs them and the
 * control connections. One struct runner per process, passed explicitly. */
#ifndef RUNNER_H
#define RUNNER_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "rn_loop.h"
#include "rn_spec.h"
#include "sbx_err.h"

enum rn_status { RN_STARTING, RN_RUNNING, RN_STOPPING, RN_STOPPED, RN_FAILED };
enum rn_reason { RN_REASON_NONE, RN_REASON_REQUESTED, RN_REASON_TIMEOUT,
		 RN_REASON_ERROR, RN_REASON_OOM };

#define RN_ID_MAX 64
#define RN_MAX_SLOTS 4096          /* concurrent sandboxes per runner */
#define RN_READY_TIMEOUT_MS 10000  /* agent must listen within this */
#define RN_KEEP_STOPPED 1024       /* stopped entries kept for `get` */
#define RN_SLOT_DIR "/run/sandbox/slots"

struct runner;
struct rn_sandbox;

/* A driver runs sandboxes. Every operation is called from the loop. */
struct rn_driver {
	const char *name;
	/* Start sb (spec, id, dir, slot filled in). On success sb->pid is the
	 * process whose exit means the sandbox is gone, and sb->agent_socket
	 * the host path of the guest's hybrid-vsock socket. On failure
	 * everything it made is removed. */
	int (*start)(struct runner *r, struct rn_sandbox *sb, struct sbx_err *err);
	/* Kill every process of sb; returns at once, the exit of sb->pid is
	 * reported through SIGCHLD. */
	void (*kill)(struct rn_sandbox *sb);
	/* After sb->pid was reaped: remove everything left of sb. Returns 0,
	 * 1 when something is still busy (called again later), or -1 with err
	 * (logged; the sandbox is marked failed but forgotten). */
	int (*cleanup)(struct runner *r, struct rn_sandbox *sb, struct sbx_err *err);
	/* OOM kills seen in the sandbox so far (-1 if unknown). */
	long (*oom_kills)(struct rn_sandbox *sb);
	/* Forks refused at the pids limit so far (-1 if unknown). */
	long (*pids_hits)(struct rn_sandbox *sb);
	/* At start-up: kill and remove whatever a previous run left. */
	void (*reconcile)(struct runner *r);
	/* Optional (NULL: unsupported): a non-blocking TCP socket connected
	 * (or connecting) to 127.0.0.1:port inside sb's network, for the
	 * caller to own; -1 with err, errno ECONNREFUSED when nothing listens.
	 * Lets `connect` hand the socket itself to a local gateway. */
	int (*open_port)(struct rn_sandbox *sb, int port, struct sbx_err *err);
};

struct rn_sandbox {
	char id[RN_ID_MAX];
	enum rn_status status;
	enum rn_reason reason;
	char error[256];                /* why it failed, if it did */
	struct rn_spec spec;
	int64_t created_wall, created_mono, deadline_mono, ready_by_mono;
	int64_t stopped_mono;
	int idle_fd1;                   /* idle probe in flight: fd + 1, or 0 */
	int64_t idle_at;                /* next idle probe step (monotonic ms) */
	int64_t cleanup_retry_mono;     /* cleanup said busy: retry at */
	int cleanup_tries;
	int reaped;
	int wait_status;
	long oom_kills;                 /* last seen, kept after cleanup */
	long pids_hits;
	pid_t pid;
	int slot;
	char dir[PATH_MAX];             /* <state>/sandboxes/<id> */
	char agent_socket[PATH_MAX];
	void *drv_data;
	struct rn_sandbox *next;
};

struct runner {
	char name[24];
	char state_dir[PATH_MAX];
	char sbx_root[PATH_MAX];        /* <state>/sandboxes */
	char image_dir[PATH_MAX];
	char agent_path[PATH_MAX];
	char runtime_dir[PATH_MAX];     /* <state>/runtime: agent + its libs */
	char socket_path[PATH_MAX];
	const struct rn_driver *drv;
	struct rn_sandbox *sandboxes;
	int n_live;
	/* uid-range slots: fd+1 of a flock'd file in RN_SLOT_DIR, 0 = free.
	 * The lock is host-wide, so two runners never share a range. */
	int slots[RN_MAX_SLOTS];
	int stopping;                   /* SIGTERM received */
	int64_t max_memory_mb;          /* admission: sum of live memory_mb */
	int64_t nofile_max;             /* the runner's hard RLIMIT_NOFILE */
};

struct rn_sandbox *rn_sandbox_find(struct runner *r, const char *id);
const char *rn_status_name(enum rn_status s);
const char *rn_reason_name(enum rn_reason s);

#endif
