/* sandbox-runner: owns sandbox lifecycles on one host and serves the
 * control API on a UNIX socket, and with --listen-tls on TCP with mutual
 * TLS (docs/runner.md); `sandbox-runner ctl` is its command-line client.
 * One epoll loop, no threads: sandbox creation blocks the loop for its few
 * milliseconds of setup; nothing a client or a sandbox sends can block it. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/un.h>
#include <unistd.h>

#include "rn_child.h"
#include "rn_conn.h"
#include "rn_ctl.h"
#include "rn_drivers.h"
#include "rn_egress.h"
#include "rn_egress_ca.h"
#include "rn_flags.h"
#include "rn_image_cli.h"
#include "rn_persist.h"
#include "rn_sandbox.h"
#include "rn_snap.h"
#include "rn_state.h"
#include "rn_sockwatch.h"
#include "rn_status.h"
#include "rn_tls.h"
#include "rn_warm.h"
#include "driver_gvisor.h"
#include "runner.h"
#include "sbx_fs.h"
#include "sbx_log.h"
#include "sbx_net.h"

#define SHUTDOWN_GRACE_MS 10000

/* mkdir -p; path itself gets mode whatever the umask and whatever it had */
static int mkdir_p(const char *path, mode_t mode)
{
	return sbx_mkdir_p(path, 0755, mode) < 0 ? -1 : chmod(path, mode);
}

static int listen_on(const char *path, struct sbx_err *err)
{
	char dir[PATH_MAX], staged[sizeof(((struct sockaddr_un *)0)->sun_path)], *slash;
	int fd;

	if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return sbx_err_set(err, ENAMETOOLONG, "--socket: path too long");
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir_p(dir, 0755) < 0)
			return sbx_err_sys(err, "mkdir %s", dir);
	}
	/* born 0600; a gateway opens one connection per request and
	 * stream, in bursts. It listens under a name of its own first and is
	 * then renamed over path: whoever waits for the socket to appear (a
	 * supervisor, the test harness starting a gateway) is never refused
	 * between the bind and the listen (a runner held up there had the
	 * gateway's first probe mark it down, and a create at once got 503). */
	if (snprintf(staged, sizeof(staged), "%s.%d~", path, (int)getpid()) >= (int)sizeof(staged))
		memcpy(staged, path, strlen(path) + 1);   /* no room: in place (it fits, see above) */
	fd = sbx_unix_listen(staged, SOMAXCONN);
	if (fd < 0)
		return sbx_err_sys(err, "listen on %s", path);
	if (strcmp(staged, path) && rename(staged, path) < 0) {
		sbx_err_sys(err, "listen on %s: rename from %s", path, staged);
		unlink(staged);
		close(fd);
		return -1;
	}
	return fd;
}

static void default_agent(char *out, size_t n)
{
	char self[PATH_MAX];

	if (sbx_self_dir(self, sizeof(self)) < 0 ||
	    (size_t)snprintf(out, n, "%s/sandbox-agent", self) >= n)
		snprintf(out, n, "sandbox-agent");
}

/* A listening socket: the UNIX control socket or the TLS one. When accept
 * fails for want of descriptors the pending connection stays queued and a
 * level-triggered epoll reports it again at once: listening pauses for
 * ACCEPT_PAUSE_MS instead, and the failures are logged at most once a
 * second, with their count. */
#define ACCEPT_PAUSE_MS 100
struct listener {
	struct rn_ev ev;                /* first: the loop hands us &ev */
	int (*accept)(struct runner *r, int fd);
	int64_t resume_at;              /* 0 = listening */
};
static int64_t accept_logged_at;
static long accept_failures;

static void on_listen(struct rn_ev *ev, uint32_t events)
{
	struct listener *l = (struct listener *)ev;
	int64_t now;

	(void)events;
	if (l->accept(ev->owner, ev->fd) == 0)
		return;
	now = rn_now_mono();
	accept_failures++;
	if (now - accept_logged_at >= 1000) {
		sbx_warn("accept: %s (%ld times since the last line); pausing %d ms",
			 strerror(errno), accept_failures, ACCEPT_PAUSE_MS);
		accept_logged_at = now;
		accept_failures = 0;
	}
	rn_loop_mod(ev, 0);
	l->resume_at = now + ACCEPT_PAUSE_MS;
}

/* Milliseconds until listening resumes (-1: not paused); resumes it when due. */
static int accept_pause_tick(struct listener *l)
{
	int64_t left;

	if (!l->resume_at || l->ev.fd < 0)
		return -1;
	left = l->resume_at - rn_now_mono();
	if (left > 0)
		return (int)left;
	l->resume_at = 0;
	rn_loop_mod(&l->ev, EPOLLIN);
	return -1;
}

static void listener_close(struct listener *l)
{
	if (l->ev.fd < 0)
		return;
	rn_loop_del(&l->ev);
	close(l->ev.fd);
	l->ev.fd = -1;
}

/* A sandbox its driver paused to disk (gvisor's checkpoint: <dir>/paused.json
 * beside the image) has nothing running: a clean stop leaves it as a crash
 * would, and the next start takes it back paused (rn_state_adopt_paused). */
static int kept_on_disk(const struct rn_sandbox *sb)
{
	char p[PATH_MAX];
	struct stat st;

	if (sb->status != RN_PAUSED)
		return 0;
	rn_state_path(p, sb, "paused.json");
	return p[0] && lstat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static void on_signal(struct rn_ev *ev, uint32_t events)
{
	struct runner *r = ev->owner;
	struct signalfd_siginfo si;

	(void)events;
	while (read(ev->fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			rn_sandbox_reap(r);
		else if (si.ssi_signo == SIGUSR1)
			rn_drain_set(r, 1, "SIGUSR1");
		else if (!r->stopping) {
			sbx_info("signal %u: stopping every sandbox, then exiting", si.ssi_signo);
			r->stopping = 1;
			for (struct rn_sandbox *sb = r->sandboxes; sb; sb = sb->next) {
				if (kept_on_disk(sb)) {
					sbx_info("%s: left paused on disk for the next start", sb->id);
					r->n_kept_at_stop++;
				} else {
					rn_persist_stop(r, sb, RN_REASON_REQUESTED);
				}
			}
		}
	}
}

/* The admission cap: --max-memory-mb, else --max-memory-share of the host's
 * RAM (MemTotal; a share of 1 is the host's memory, overcommit's base). 0
 * when neither can be worked out. */
static int64_t memory_cap_mb(int64_t cap_mb, double share)
{
	struct sysinfo si;

	if (cap_mb > 0)
		return cap_mb;
	if (sysinfo(&si) < 0)
		return 0;
	return (int64_t)((double)si.totalram * si.mem_unit * share) >> 20;
}

/* The flags into r: its paths and name, the admission cap, the agent. 0,
 * or -1 after saying what is wrong (exit 2). */
static int configure(struct runner *r, const struct rn_flags *f)
{
	snprintf(r->socket_path, sizeof(r->socket_path), "%s", f->socket);
	snprintf(r->state_dir, sizeof(r->state_dir), "%s", f->state_dir);
	snprintf(r->image_dir, sizeof(r->image_dir), "%s", f->image_dir);
	snprintf(r->name, sizeof(r->name), "%s", f->name);
	r->max_memory_mb = memory_cap_mb(f->max_memory_mb, f->max_memory_share);
	r->host_memory_mb = memory_cap_mb(f->max_memory_mb, 1.0);
	r->overcommit = f->memory_overcommit;
	r->reserve_mb = f->memory_reserve_mb;
	r->tick_dirty = 1;
	r->image_store_bytes = (uint64_t)f->image_store_mb << 20;
	r->image_max_bytes = (uint64_t)f->image_max_mb << 20;
	r->snap_store_max_mb = f->max_snapshot_mb > 0 ? f->max_snapshot_mb : 4096;
	if (r->max_memory_mb <= 0) {
		fprintf(stderr, "sandbox-runner: cannot read the host's memory size; "
			"give --max-memory-mb\n");
		return -1;
	}
	if (f->agent) {
		if (!realpath(f->agent, r->agent_path))
			snprintf(r->agent_path, sizeof(r->agent_path), "%s", f->agent);
	} else {
		default_agent(r->agent_path, sizeof(r->agent_path));
	}
	/* overlayfs options are comma- and colon-separated */
	if (r->state_dir[0] != '/' || r->image_dir[0] != '/' ||
	    strpbrk(r->state_dir, ",:\\") || strpbrk(r->image_dir, ",:\\")) {
		fprintf(stderr, "sandbox-runner: --state-dir and --image-dir must be absolute "
			"and free of ',' ':' '\\'\n");
		return -1;
	}
	if (strlen(r->state_dir) > 200 ||
	    snprintf(r->sbx_root, sizeof(r->sbx_root), "%s/sandboxes", r->state_dir) < 0 ||
	    snprintf(r->runtime_dir, sizeof(r->runtime_dir), "%s/runtime", r->state_dir) < 0) {
		fprintf(stderr, "sandbox-runner: --state-dir is too long (max 200)\n");
		return -1;
	}
	return 0;
}

/* A sandbox's RLIMIT_NOFILE is set inside its user namespace, where it can
 * only be lowered: the runner's hard limit must be at least the largest
 * nofile a create may ask for. The runner is root, so it raises its own
 * (soft = hard: it multiplexes with epoll, never select). Returns the hard
 * limit now in force; a larger nofile is clamped to it. */
static int64_t raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return RN_NOFILE_MAX;
	if (rl.rlim_max < RN_NOFILE_MAX) {
		struct rlimit want = { RN_NOFILE_MAX, RN_NOFILE_MAX };
		if (setrlimit(RLIMIT_NOFILE, &want) == 0)
			rl = want;
		else
			sbx_warn("cannot raise RLIMIT_NOFILE to %d (%s): a sandbox's "
				 "nofile is clamped to %llu", RN_NOFILE_MAX, strerror(errno),
				 (unsigned long long)rl.rlim_max);
	}
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	return rl.rlim_max > (rlim_t)INT64_MAX ? INT64_MAX : (int64_t)rl.rlim_max;
}

/* One runner per name on a host: cgroups are named after sandbox ids, which
 * start with the runner's name, and reconciliation reaps every cgroup of
 * that name whose state is gone; a second runner of the same name would
 * kill the first one's sandboxes. The lock lives as long as the process;
 * a clean exit removes its file (hundreds of runner names would otherwise
 * pile up in /run), so a lock taken on a file that was unlinked meanwhile
 * is taken again on the file now at the path. */
static char lock_path[96];

static int lock_name(const char *name)
{
	snprintf(lock_path, sizeof(lock_path), "/run/sandbox-runner.%s.lock", name);
	for (int tries = 0; tries < 8; tries++) {
		struct stat held, now;
		int fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

		if (fd < 0) {
			sbx_err_log("%s: %s", lock_path, strerror(errno));
			return -1;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			sbx_err_log("another sandbox-runner named '%s' runs on this host (%s); "
				    "give each runner its own --name", name, lock_path);
			close(fd);
			return -1;
		}
		if (fstat(fd, &held) == 0 && stat(lock_path, &now) == 0 &&
		    held.st_dev == now.st_dev && held.st_ino == now.st_ino)
			return 0;   /* fd stays open: the lock lives with the process */
		close(fd);          /* its previous holder removed it as we opened it */
	}
	sbx_err_log("%s keeps being replaced", lock_path);
	return -1;
}

/* Everything before listening: drivers, TLS, status, root, the state dir,
 * this name's lock, cgroups, and what a crash left. 0, or the exit code
 * after saying why. */
static int set_up(struct runner *r, const struct rn_flags *f, const struct rn_tls_opts *tls)
{
	struct sbx_err err = { 0, "" };

	if (rn_drivers_setup(r, f->drivers, f->default_isolation, f->agent_stderr, &err) < 0) {
		fprintf(stderr, "sandbox-runner: %s\n", err.msg);
		return 2;
	}
	if (rn_tls_wanted(tls) && rn_tls_setup(r, tls, &err) < 0) {
		fprintf(stderr, "sandbox-runner: %s\n", err.msg);
		return 2;
	}
	if (rn_status_init(r, &err) < 0) {
		fprintf(stderr, "sandbox-runner: %s\n", err.msg);
		return 1;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "sandbox-runner: needs root (state under /run, sandbox "
			"cgroups and namespaces)\n");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	r->nofile_max = raise_nofile();
	if (sbx_write_file("/proc/self/oom_score_adj", RN_OOM_SCORE_ADJ, 0, 0) < 0)
		sbx_warn("cannot set oom_score_adj %s: %s", RN_OOM_SCORE_ADJ, strerror(errno));
	/* The sandboxes' root (an unprivileged host uid) must walk these. */
	if (mkdir_p(r->state_dir, 0711) < 0 || mkdir_p(r->sbx_root, 0711) < 0) {
		sbx_err_log("state dir %s: %s", r->state_dir, strerror(errno));
		return 1;
	}
	if (lock_name(r->name) < 0)
		return 1;
	if (rn_cgroup_detect(&r->cg, &err) < 0)
		snprintf(r->cg_error, sizeof(r->cg_error), "%s", err.msg);
	rn_drivers_init(r);
	rn_drivers_reconcile(r);
	/* after the drivers: they lay out the runtime dir the CA is shown in */
	if (rn_egress_ca_init(r, &err) < 0) {
		sbx_err_log("egress CA: %s", err.msg);
		return 1;
	}
	if (rn_snap_init(r, &err) < 0) {
		sbx_err_log("%s", err.msg);
		return 1;
	}
	rn_persist_load(r);
	if (rn_warm_init(r, f->warm_pool, &err) < 0) {
		sbx_err_log("%s", err.msg);
		return 1;
	}
	return 0;
}

/* The loop with its signalfd (SIGCHLD, SIGTERM, SIGINT, SIGUSR1 blocked
 * for it), the control socket and, with --listen-tls, the TLS port. 0, or
 * -1 after logging why. */
static int start_listening(struct runner *r, const struct rn_tls_opts *tls,
			   struct rn_ev *sev, struct listener *lu, struct listener *lt)
{
	struct sbx_err err = { 0, "" };
	sigset_t mask;

	if (rn_loop_init() < 0) {
		sbx_err_log("epoll: %s", strerror(errno));
		return -1;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sev->fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	sev->cb = on_signal;
	sev->owner = r;
	lu->ev.fd = listen_on(r->socket_path, &err);
	lu->ev.cb = lt->ev.cb = on_listen;
	lu->ev.owner = lt->ev.owner = r;
	if (sev->fd < 0 || lu->ev.fd < 0 || rn_loop_add(sev, EPOLLIN) < 0 ||
	    rn_loop_add(&lu->ev, EPOLLIN) < 0) {
		sbx_err_log("%s", lu->ev.fd < 0 ? err.msg : strerror(errno));
		return -1;
	}
	if (rn_tls_wanted(tls)) {
		lt->ev.fd = rn_tls_listen(&err);
		if (lt->ev.fd < 0 || rn_loop_add(&lt->ev, EPOLLIN) < 0) {
			sbx_err_log("%s", lt->ev.fd < 0 ? err.msg : strerror(errno));
			return -1;
		}
		sbx_info("runner %s listening for mutual TLS on %s (clients of %s)", r->name,
			 tls->listen, tls->client_ca);
	}
	sbx_info("runner %s listening on %s (state %s, images %s, admits %lld MiB of "
		 "memory_mb%s, nofile up to %lld, default isolation %s)", r->name, r->socket_path,
		 r->state_dir, r->image_dir, (long long)(r->overcommit > 0 ?
		 (int64_t)((double)r->host_memory_mb * r->overcommit) : r->max_memory_mb),
		 r->overcommit > 0 ? " (overcommitted; in use within the budget)" : "",
		 (long long)r->nofile_max, r->default_drv->ops->name);
	return 0;
}

/* The loop, until a signal stopped every sandbox (or SHUTDOWN_GRACE_MS
 * passed since): listening ends at once, the sandboxes' cleanup goes on. */
static void serve(struct runner *r, struct listener *lu, struct listener *lt)
{
	int64_t shutdown_by = 0;

	for (;;) {
		int ts[] = { rn_sandbox_tick(r), rn_snap_tick(r), rn_conn_sweep(), rn_tls_sweep(),
			     rn_egress_sweep(), rn_sockwatch_tick(r), rn_warm_tick(r),
			     accept_pause_tick(lu), accept_pause_tick(lt) }, t = -1;

		for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++)
			if (ts[i] >= 0 && (t < 0 || ts[i] < t))
				t = ts[i];
		if (r->stopping) {
			if (!shutdown_by) {
				shutdown_by = rn_now_mono() + SHUTDOWN_GRACE_MS;
				listener_close(lu);
				listener_close(lt);
				unlink(r->socket_path);
			}
			if (r->n_live <= r->n_kept_at_stop || rn_now_mono() > shutdown_by)
				break;
			if (t < 0 || t > 50)
				t = 50;
		}
		if (rn_loop_run_once(t) < 0) {
			sbx_err_log("epoll_wait: %s", strerror(errno));
			break;
		}
	}
}

int main(int argc, char **argv)
{
	static struct runner r;
	struct listener lu = { .ev.fd = -1, .accept = rn_conn_accept };
	struct listener lt = { .ev.fd = -1, .accept = rn_tls_accept };
	struct rn_ev sev = { .fd = -1 };
	struct rn_flags f;
	struct rn_tls_opts tls;
	int rc;

	/* a gvisor sandbox's watcher (driver_gvisor_watch.c), first: it is
	 * the runner's forked child, gone through exec to shed the heap */
	if (argc > 1 && strcmp(argv[1], GV_WATCH_CMD) == 0)
		return gv_watch_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "ctl") == 0)
		return rn_ctl_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "image") == 0)
		return rn_image_main(argc - 1, argv + 1);
	rc = rn_flags_parse(&f, argc, argv);
	if (rc != 0)
		return rc == 1 ? 0 : 2;
	sbx_log_init("sandbox-runner", f.verbose ? SBX_LOG_DEBUG : SBX_LOG_INFO);
	if (configure(&r, &f) < 0)
		return 2;
	tls = (struct rn_tls_opts){ f.listen_tls, f.cert, f.key, f.client_ca };
	rc = set_up(&r, &f, &tls);
	if (rc != 0)
		return rc;
	if (start_listening(&r, &tls, &sev, &lu, &lt) < 0)
		return 1;
	serve(&r, &lu, &lt);
	rn_conn_close_all();
	rn_tls_close_all();
	if (r.n_live > r.n_kept_at_stop)
		sbx_warn("%d sandbox(es) still being cleaned at exit; the next start "
			 "reconciles them", r.n_live - r.n_kept_at_stop);
	unlink(lock_path);   /* unlinked while held: a runner of this name starting now locks a new file */
	sbx_info("runner %s stopped", r.name);
	return 0;
}
