/* The runner's state: its sandboxes, the drivers that run them and the
 * control connections. One struct runner per process, passed explicitly. */
#ifndef RUNNER_H
#define RUNNER_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "rn_cgroup.h"
#include "rn_loop.h"
#include "rn_spec.h"
#include "sbx_err.h"

enum rn_status { RN_STARTING, RN_RUNNING, RN_STOPPING, RN_STOPPED, RN_FAILED, RN_PAUSED };
enum rn_reason { RN_REASON_NONE, RN_REASON_REQUESTED, RN_REASON_TIMEOUT,
		 RN_REASON_ERROR, RN_REASON_OOM, RN_REASON_RUNNER_RESTART };
/* A pause or resume in progress off the loop (its status is the one before). */
enum rn_transition { RN_TR_NONE, RN_TR_PAUSING, RN_TR_RESUMING };

#define RN_ID_MAX 64
#define RN_MAX_SANDBOXES 4096      /* not-yet-cleaned sandboxes per runner */
#define RN_READY_TIMEOUT_MS 10000  /* the agent must answer within this */
#define RN_KEEP_STOPPED 1024       /* stopped entries kept for `get` */
#define RN_MAX_DRIVERS 8
#define RN_DRIVER_FILE "driver"    /* <sandbox dir>/driver: who made it */

struct runner;
struct rn_sandbox;
struct rn_driver;
struct rn_snap;
struct rn_layer_stats;

/* A driver runs sandboxes in one kind of isolation; its name is the
 * "isolation" of the API. One static table per driver (runner/driver_*.c),
 * listed in the registry (runner/rn_drivers.c). Every operation is called
 * from the loop. The driver's own state hangs off its struct rn_driver
 * (data), a sandbox's off the sandbox (drv_data): no file-level state. */
struct rn_driver_ops {
	const char *name;
	/* Can the driver run on this host? 0, or -1 with a reason a person
	 * can act on in err->msg (e.g. "runsc not found; install it from
	 * bookworm-backports (mk/deps.sh)"). Looks, changes nothing. */
	int (*probe)(struct rn_driver *d, struct sbx_err *err);
	/* After a passing probe: set up what the driver needs (d->data, host
	 * preparation). 0, or -1 with err: the driver is then unavailable
	 * with err->msg as its reason. */
	int (*init)(struct rn_driver *d, struct sbx_err *err);
	/* Start sb. Called with sb->id, sb->spec, sb->drv set and sb->dir
	 * made (empty but for RN_DRIVER_FILE), unless makes_dir. On success sb->pid is the
	 * runner's child whose exit means the sandbox is gone, and
	 * sb->agent_socket the host path of the guest's hybrid-vsock socket
	 * (the runner dials it: CONNECT/OK, lib/sbx_dial.h). On failure
	 * everything the driver made is removed (the runner removes
	 * sb->dir) and sb->drv_data is freed. err code EINVAL: the request's
	 * fault (e.g. no such image), EAGAIN: out of capacity. */
	int (*start)(struct rn_sandbox *sb, struct sbx_err *err);
	/* Kill every process of sb; returns at once, the exit of sb->pid is
	 * reported through SIGCHLD. */
	void (*kill)(struct rn_sandbox *sb);
	/* After sb->pid was reaped: remove everything left of sb, sb->dir
	 * included, and free sb->drv_data. Returns 0, 1 when something is
	 * still busy (called again later), or -1 with err (logged; the
	 * sandbox is marked failed but forgotten). */
	int (*cleanup)(struct rn_sandbox *sb, struct sbx_err *err);
	/* OOM kills seen in the sandbox so far (-1 if unknown). */
	long (*oom_kills)(struct rn_sandbox *sb);
	/* Forks refused at the pids limit so far (-1 if unknown). */
	long (*pids_hits)(struct rn_sandbox *sb);
	/* Optional: sb's cgroup path (rn_cgroup.h), for what it uses (admission
	 * with overcommit, the socket-memory watch); NULL when it has none. */
	const char *(*cgroup)(const struct rn_sandbox *sb);
	/* At start-up, for each sandbox dir whose RN_DRIVER_FILE names this
	 * driver (and only those): kill and remove what a previous run left
	 * of sandbox id, dir included. Called when the driver is enabled and
	 * its probe passed, even if init failed (d->data may be NULL). */
	void (*reconcile_dir)(struct rn_driver *d, const char *id, const char *dir);
	/* Optional, at start-up before reconcile_dir: take back sandbox id
	 * that a previous run left paused in a form that outlives the runner
	 * (gvisor's checkpoint on disk). 0 when it is the runner's again
	 * (status paused; reconcile_dir is then not called), -1 otherwise. */
	int (*adopt)(struct rn_driver *d, const char *id, const char *dir);
	/* At start-up, after the dirs: what has no dir any more (e.g. cgroups
	 * named sbx_<runner>_* whose dir is gone). May be NULL. */
	void (*reconcile)(struct rn_driver *d);
	/* Optional (NULL: unsupported): a non-blocking TCP socket connected
	 * (or connecting) to 127.0.0.1:port inside sb's network, for the
	 * caller to own; -1 with err, errno ECONNREFUSED when nothing listens.
	 * Lets `connect` hand the socket itself to a local gateway. */
	int (*open_port)(struct rn_sandbox *sb, int port, struct sbx_err *err);
	/* Optional (NULL: the driver's sockets are not the host kernel's):
	 * refuse (on) or allow again (off) new TCP connections in sb's
	 * network, for the socket-memory watch (rn_sockwatch.h). Started, not
	 * waited for (an ip/iptables run takes up to half a second on a busy
	 * host, and a sandbox decides when it crosses its budget): the pid of
	 * the change, or -1 with err. */
	pid_t (*refuse_connections)(struct rn_sandbox *sb, int on, struct sbx_err *err);
	/* Optional (NULL: unsupported): stop every process of sb where it
	 * stands (memory kept), and let it run on. 0 or -1 with err, or
	 * 1: started, and the driver calls rn_sandbox_pause_done (or
	 * rn_sandbox_resume_done, rn_pause.h) from the loop when it is over
	 * (a long step, gvisor's checkpoint and restore, runs off the loop). */
	int (*pause)(struct rn_sandbox *sb, struct sbx_err *err);
	int (*resume)(struct rn_sandbox *sb, struct sbx_err *err);
	/* Optional: copy sb's writable layer to dst (made here) as a
	 * read-only layer (runner/rn_layer.h), sb frozen for the copy unless
	 * it is paused already. 0 or -1 with err (dst removed). */
	int (*snapshot)(struct rn_sandbox *sb, const char *dst, struct rn_layer_stats *st,
			struct sbx_err *err);
	/* Optional: told once, on the loop, when sb's agent first answered
	 * (the vm driver's supervisor stops booting its guest again then). */
	void (*ready)(struct rn_sandbox *sb);
	/* 1: a persistent sandbox's stop pauses it (memory kept) instead of
	 * keeping a snapshot of its files (rn_persist.c) */
	int persist_paused;
	/* How long the agent has to answer after start (0: RN_READY_TIMEOUT_MS);
	 * a VM boots a kernel first. */
	int ready_timeout_ms;
	/* 1: start makes sb->dir itself (rn_sandbox_make_dir) before it makes
	 * anything a reconcile must find, at the point of its own choosing
	 * (the jail: beside its child's first steps) */
	int makes_dir;
};

/* A driver as this runner has it: enabled (--drivers) or not, available
 * (probe and init passed) or not and why. */
struct rn_driver {
	const struct rn_driver_ops *ops;
	struct runner *r;
	int enabled;
	int probed;                     /* the probe passed (init may not have) */
	int available;
	char reason[512];               /* why not available ("" when it is) */
	int agent_stderr;               /* --agent-stderr */
	char accel[16];                 /* how it runs guests (vm: "kvm", "tcg"), or "" */
	char machine[16];               /* and on which machine (vm: "microvm", "q35"), or "" */
	void *data;                     /* the driver's own state */
};

struct rn_sandbox {
	char id[RN_ID_MAX];
	enum rn_status status;
	enum rn_reason reason;
	char error[256];                /* why it failed, if it did */
	int stop_asked;                 /* by rn_sandbox_stop, not its own end */
	struct rn_spec spec;
	int64_t created_wall, created_mono, deadline_mono, ready_by_mono;
	int64_t stopped_mono;
	int64_t paused_mono;            /* when it was paused (RN_PAUSED) */
	int idle_fd1;                   /* idle probe in flight: fd + 1, or 0 */
	int64_t idle_at;                /* next idle probe step (monotonic ms) */
	int64_t cleanup_retry_mono;     /* cleanup said busy: retry at */
	int cleanup_tries;
	int reaped;
	int wait_status;
	long oom_kills;                 /* last seen, kept after cleanup */
	long pids_hits;
	struct rn_ev ready_ev;          /* the readiness dial in flight (cb NULL: none) */
	struct rn_ev agent_up;          /* a pipe the agent closes once it listens (cb NULL: none) */
	int agent_said_ready;           /* that pipe brought the agent's byte: it listens */
	int dir_made;                   /* this start made sb->dir (rn_sandbox_make_dir) */
	int64_t sock_over_since;        /* socket memory over its bound since (0: not) */
	int sock_refusing;              /* new connections refused (rn_sockwatch.h) */
	pid_t sock_job;                 /* that change still running (0: none) */
	pid_t pid;
	struct rn_driver *drv;          /* the driver that runs it */
	char dir[PATH_MAX];             /* <state>/sandboxes/<id> */
	char agent_socket[PATH_MAX];
	void *drv_data;
	struct rn_egress *egress;        /* its resolver, proxy and log (rn_egress.h), or NULL */
	/* persistent sandboxes (rn_persist.h) */
	char persist_snap[RN_ID_MAX];   /* the hidden snapshot of its files ("" none) */
	char source_snap[64];           /* the snapshot its create named, once revived */
	int revived;                    /* started again from persist_snap at least once */
	int warm;                       /* in the warm pool, nobody's yet (rn_warm.h) */
	/* a pause or resume that runs off the loop (rn_pause.h) */
	enum rn_transition transition;
	int tr_keep;                    /* a persistent one being kept: stopped if it fails */
	enum rn_reason tr_reason;       /* ... with this reason */
	char tr_err[256];               /* why the last one failed */
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
	struct rn_driver drivers[RN_MAX_DRIVERS];   /* registry order */
	int n_drivers;
	struct rn_driver *default_drv;  /* --default-isolation */
	struct rn_cgroup cg;            /* the host's layout, for every driver */
	char cg_error[512];             /* why cg is unusable ("" when it is) */
	struct rn_sandbox *sandboxes;
	int n_live;
	int stopping;                   /* SIGTERM received */
	int n_kept_at_stop;             /* ... and the paused sandboxes it leaves on disk */
	int draining;                   /* no new sandboxes (op drain, SIGUSR1) */
	char instance[33];              /* 32 hex, random per process (status) */
	int64_t max_memory_mb;          /* admission: sum of live memory_mb (rn_admit.h) */
	int64_t host_memory_mb;         /* --max-memory-mb, else MemTotal: overcommit's base */
	double overcommit;              /* --memory-overcommit (0: off) */
	int64_t reserve_mb;             /* --memory-reserve-mb */
	int64_t used_sample_mb;         /* in use at the last pass over the cgroups */
	int64_t used_sample_at;
	int used_sampled;
	int64_t committed_mb;           /* memory_mb of the sandboxes not yet cleaned up */
	int64_t tick_at;                /* rn_sandbox_tick: next time a sandbox needs it */
	int tick_dirty;                 /* a sandbox changed: tick before tick_at */
	int64_t sockwatch_at;           /* rn_sockwatch.h: next look */
	int sock_marked;                /* a sandbox may carry sock_over_since */
	int64_t nofile_max;             /* the runner's hard RLIMIT_NOFILE */
	uint64_t image_store_bytes;     /* --image-store-mb (0: no cap) */
	uint64_t image_max_bytes;       /* --image-max-mb: an upload, a pull, a layer */
	char snap_root[PATH_MAX];       /* <state>/snapshots (rn_snap.h) */
	struct rn_snap *snaps;
	int n_snaps;
	int64_t snap_store_max_mb;      /* --max-snapshot-mb */
	int warm_size;                  /* --warm-pool (rn_warm.h) */
	int n_warm;                     /* warm sandboxes in the list, not final */
	struct rn_pull *pulls;          /* creates' image pulls in flight (rn_image_pull_create.h) */
};

struct rn_sandbox *rn_sandbox_find(struct runner *r, const char *id);
const char *rn_status_name(enum rn_status s);
const char *rn_reason_name(enum rn_reason s);

#endif
