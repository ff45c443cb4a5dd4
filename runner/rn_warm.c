/* The warm pool (rn_warm.h): refills by a warmer process, takes by a
 * create whose spec the pool's sandboxes can become. */
#include "rn_warm.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver_jail.h"
#include "rn_admit.h"
#include "rn_drivers.h"
#include "rn_image_config.h"
#include "rn_loop.h"
#include "rn_sandbox.h"
#include "rn_state.h"
#include "sbx_fs.h"
#include "sbx_id.h"
#include "sbx_log.h"

#define RETRY_MS 5000          /* after a warm start failed or admission had no room */
#define FAR_MS (INT64_C(1) << 60)

static struct {
	struct runner *r;
	struct rn_spec spec;        /* the pool's shape: a create of {} */
	struct rn_driver *drv;      /* the jail driver */
	struct rn_ev ev;            /* the warmer's pipe (fd -1: none) */
	pid_t warmer;               /* 0: none (reaped) */
	struct rn_sandbox *sb;      /* the one its warmer makes */
	int done;                   /* its warmer reported the outcome */
	int64_t retry_at;
} pool = { .ev.fd = -1 };

int rn_warm_report(int fd, enum rn_warm_stage stage, pid_t pid, const struct sbx_err *err)
{
	struct rn_warm_msg m = { .stage = stage, .pid = pid };

	if (err) {
		m.err = err->code ? err->code : EIO;
		snprintf(m.msg, sizeof m.msg, "%.200s", err->msg);
	}
	/* under PIPE_BUF: one write, whole */
	return write(fd, &m, sizeof m) == (ssize_t)sizeof m ? 0 : -1;
}

int rn_warm_init(struct runner *r, int size, struct sbx_err *err)
{
	cJSON *empty = cJSON_CreateObject();
	int rc;

	pool.r = r;
	r->warm_size = size;
	if (!size) {
		cJSON_Delete(empty);
		return 0;
	}
	rc = empty ? rn_spec_parse(empty, &pool.spec, err) : sbx_err_set(err, ENOMEM, "no memory");
	cJSON_Delete(empty);
	if (rc < 0 || rn_image_config_apply(r, &pool.spec, err) < 0)
		return -1;
	/* the pool's sandboxes carry nothing of anyone's: an image whose
	 * config sets env would be one more thing to swap at a take */
	if (pool.spec.n_env)
		return sbx_err_set(err, EINVAL, "--warm-pool: image %s sets env; the pool serves "
				   "only an image without", pool.spec.image);
	for (int i = 0; i < r->n_drivers; i++)
		if (!strcmp(r->drivers[i].ops->name, "jail"))
			pool.drv = &r->drivers[i];
	sbx_info("warm pool: %d jail sandbox(es) of image %s, %lld MiB each", size,
		 pool.spec.image, (long long)pool.spec.memory_mb);
	return 0;
}

/* A warm sandbox that will not become one: stopped like any other, the
 * runner's cleanup removes what its warmer left. */
static void fail(struct rn_sandbox *sb, const char *why)
{
	sbx_warn("%s: warm start failed: %s", sb->id, why);
	pool.retry_at = rn_now_mono() + RETRY_MS;
	if (!sb->error[0])
		snprintf(sb->error, sizeof sb->error, "%.200s", why);
	rn_sandbox_stop(pool.r, sb, RN_REASON_ERROR);
	if (!sb->pid)
		sb->reaped = 1;    /* nothing was cloned */
	pool.r->tick_dirty = 1;
}

static void on_msg(const struct rn_warm_msg *m)
{
	struct rn_sandbox *sb = pool.sb;

	if (m->stage == RN_WARM_CLONED) {
		sb->pid = m->pid;
		/* stopped meanwhile (a shutdown): its child goes too */
		if (sb->status == RN_STOPPING)
			sb->drv->ops->kill(sb);
		return;
	}
	pool.done = 1;
	if (m->err) {
		char why[sizeof m->msg];
		memcpy(why, m->msg, sizeof why);
		why[sizeof why - 1] = 0;
		fail(sb, why);
		return;
	}
	rn_state_path(sb->agent_socket, sb, JAIL_SOCK_SUBDIR "/agent.sock");
	sb->ready_by_mono = rn_now_mono() + RN_READY_TIMEOUT_MS;
	pool.r->tick_dirty = 1;
}

/* Every message on the pipe so far; at its end, the warmer is done. */
static void drain_pipe(void)
{
	struct rn_warm_msg m;
	ssize_t n;

	while (pool.ev.fd >= 0) {
		n = read(pool.ev.fd, &m, sizeof m);
		if (n == (ssize_t)sizeof m) {
			on_msg(&m);
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		rn_loop_del(&pool.ev);
		close(pool.ev.fd);
		pool.ev.fd = -1;
		if (!pool.done)
			fail(pool.sb, "the warmer ended without a report");
	}
}

static void on_pipe(struct rn_ev *ev, uint32_t events)
{
	(void)ev;
	(void)events;
	drain_pipe();
}

/* In the warmer: the dir (marked warm first, so that a crash's
 * reconcile keeps no record of it), then the driver's start. */
static void __attribute__((noreturn)) warmer(struct rn_sandbox *sb, int fd)
{
	struct sbx_err err = { 0, "" };
	char mark[PATH_MAX];

	rn_state_path(mark, sb, RN_WARM_MARK);
	if (rn_sandbox_make_dir(sb, &err) == 0 &&
	    sbx_write_file(mark, "", O_CREAT | O_EXCL, 0600) < 0)
		sbx_err_sys(&err, "mark %s", sb->dir);
	if (!err.msg[0])
		jail_warm_launch(sb, fd, &err);
	_exit(rn_warm_report(fd, RN_WARM_DONE, 0, err.msg[0] ? &err : NULL) < 0 || err.msg[0]);
}

/* A sandbox of the pool's shape, in the list flagged warm, and its
 * warmer. 0, or -1 with err. */
static int refill(struct runner *r, struct sbx_err *err)
{
	struct rn_sandbox *sb = calloc(1, sizeof(*sb));
	char prefix[40];
	int fds[2];
	pid_t pid;

	if (!sb)
		return sbx_err_set(err, ENOMEM, "out of memory");
	sb->spec = pool.spec;   /* nothing of it on the heap: no env, no policy */
	sb->drv = pool.drv;
	snprintf(prefix, sizeof(prefix), "sbx_%s_", r->name);
	if (sbx_id_new(prefix, sb->id, sizeof(sb->id)) < 0 ||
	    snprintf(sb->dir, sizeof(sb->dir), "%s/%s", r->sbx_root, sb->id) >=
	    (int)sizeof(sb->dir)) {
		free(sb);
		return sbx_err_set(err, EIO, "cannot make a sandbox id");
	}
	sb->warm = 1;
	sb->status = RN_STARTING;
	sb->created_wall = rn_now_wall();
	sb->created_mono = rn_now_mono();
	sb->deadline_mono = sb->ready_by_mono = FAR_MS;
	if (jail_warm_reserve(sb, err) < 0) {
		free(sb);
		return -1;
	}
	if (pipe2(fds, O_CLOEXEC) < 0) {
		sbx_err_sys(err, "pipe");
		goto undo;
	}
	pid = fork();
	if (pid < 0) {
		sbx_err_sys(err, "fork a warmer");
		close(fds[0]);
		close(fds[1]);
		goto undo;
	}
	if (pid == 0) {
		close(fds[0]);
		warmer(sb, fds[1]);
	}
	close(fds[1]);
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	pool.ev.fd = fds[0];
	pool.ev.cb = on_pipe;
	pool.ev.owner = r;
	if (rn_loop_add(&pool.ev, EPOLLIN) < 0)
		sbx_warn("warm pool: cannot watch the warmer's pipe: %s", strerror(errno));
	pool.warmer = pid;
	pool.sb = sb;
	pool.done = 0;
	sb->next = r->sandboxes;
	r->sandboxes = sb;
	r->n_live++;
	r->n_warm++;
	r->committed_mb += sb->spec.memory_mb;
	return 0;
undo:
	/* its slot back through the driver's cleanup (nothing else made) */
	sb->drv->ops->cleanup(sb, err);
	free(sb);
	return -1;
}

void rn_warm_ended(const struct rn_sandbox *sb)
{
	/* one that failed on its own (its agent died or never answered):
	 * the next waits, or a broken agent would be started again at once */
	if (sb->reason != RN_REASON_REQUESTED)
		pool.retry_at = rn_now_mono() + RETRY_MS;
}

int rn_warm_building(const struct rn_sandbox *sb)
{
	return sb == pool.sb && (pool.warmer > 0 || pool.ev.fd >= 0);
}

int rn_warm_tick(struct runner *r)
{
	struct sbx_err err = { 0, "" };
	struct rn_admit_in in;
	int64_t now;

	if (!r->warm_size || r->n_warm >= r->warm_size || pool.warmer > 0 || pool.ev.fd >= 0 ||
	    r->stopping || r->draining || !pool.drv || !pool.drv->available)
		return -1;
	now = rn_now_mono();
	if (now < pool.retry_at)
		return (int)(pool.retry_at - now);
	/* admission as a create would see it, without a create's log line */
	rn_admit_figures(r, &in);
	if (r->n_live >= RN_MAX_SANDBOXES || rn_admit_decide(&in, pool.spec.memory_mb) != RN_ADMIT_OK) {
		pool.retry_at = now + RETRY_MS;
		return RETRY_MS;
	}
	if (refill(r, &err) < 0) {
		sbx_err_log("warm pool: %s", err.msg);
		pool.retry_at = now + RETRY_MS;
		return RETRY_MS;
	}
	return -1;
}

int rn_warm_reaped(struct runner *r, pid_t pid, int status)
{
	(void)r;
	if (pid == pool.warmer) {
		pool.warmer = 0;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			sbx_debug("warm pool: warmer %d ended with status %d", (int)pid, status);
		drain_pipe();
		return 1;
	}
	/* a child cloned by the warmer whose pid is still in the pipe */
	if (pool.ev.fd >= 0 && pool.sb && !pool.sb->pid) {
		drain_pipe();
		if (pool.sb && pool.sb->pid == pid && !pool.sb->reaped) {
			pool.sb->reaped = 1;
			pool.sb->wait_status = status;
			return 1;
		}
	}
	return 0;
}

/* The pool serves a create of the default image, network, memory_mb,
 * disk, pids and nofile with no env: what the child built from them stays
 * (its /proc/meminfo says its memory_mb, its tmpfs has disk_mb, its
 * rlimits). vcpus (its cgroup's) is applied at the take, the rest is the
 * runner's own (owner, ports, timeouts, preview_auth, persistent). */
static int fits(const struct rn_driver *drv, const struct rn_spec *s)
{
	const struct rn_spec *p = &pool.spec;

	return drv == pool.drv && !strcmp(s->image, p->image) && !s->image_ref[0] &&
	       !s->snapshot[0] && !strcmp(s->workdir, p->workdir) && s->n_env == 0 &&
	       s->network == RN_NET_DENY_ALL && !s->policy && s->disk_mb == p->disk_mb &&
	       s->pids == p->pids && s->nofile == p->nofile && s->memory_mb == p->memory_mb;
}

struct rn_sandbox *rn_warm_take(struct runner *r, const struct rn_driver *drv,
				struct rn_spec *spec)
{
	struct sbx_err err = { 0, "" };
	struct rn_sandbox *sb;
	char mark[PATH_MAX];
	int64_t now;

	if (!r->n_warm || r->stopping || !fits(drv, spec))
		return NULL;
	for (sb = r->sandboxes; sb; sb = sb->next)
		if (sb->warm && sb->status == RN_RUNNING)
			break;
	if (!sb)
		return NULL;
	/* admitted as a create would be, the warm one's share given back */
	r->n_live--;
	r->committed_mb -= sb->spec.memory_mb;
	if (rn_admit(r, spec, &err) < 0 || jail_warm_apply(sb, spec, &err) < 0) {
		r->n_live++;
		r->committed_mb += sb->spec.memory_mb;
		if (err.code != ENOSPC)   /* a limit would not take: not this one */
			fail(sb, err.msg);
		return NULL;
	}
	rn_spec_free(&sb->spec);
	sb->spec = *spec;
	memset(spec, 0, sizeof(*spec));
	now = rn_now_mono();
	sb->created_wall = rn_now_wall();
	sb->created_mono = now;
	sb->deadline_mono = now + sb->spec.timeout_ms;
	sb->warm = 0;
	r->n_warm--;
	r->n_live++;
	r->committed_mb += sb->spec.memory_mb;
	r->tick_dirty = 1;
	/* state.json with its owner, then no longer warm: a crash from here
	 * on keeps its record */
	if (jail_warm_state(sb, &err) < 0)
		sbx_err_log("%s: %s", sb->id, err.msg);
	rn_state_path(mark, sb, RN_WARM_MARK);
	if (unlink(mark) < 0)
		sbx_warn("%s: unlink %s: %s", sb->id, mark, strerror(errno));
	sbx_info("%s: taken from the warm pool (memory %lld MiB, vcpus %lld, timeout %lld ms)",
		 sb->id, (long long)sb->spec.memory_mb, (long long)sb->spec.vcpus,
		 (long long)sb->spec.timeout_ms);
	return sb;
}

int rn_warm_ready(const struct runner *r)
{
	int n = 0;

	if (!r->n_warm)
		return 0;
	for (const struct rn_sandbox *sb = r->sandboxes; sb; sb = sb->next)
		n += sb->warm && sb->status == RN_RUNNING;
	return n;
}

void rn_warm_flush(struct runner *r, const char *image)
{
	for (struct rn_sandbox *sb = r->sandboxes; sb; sb = sb->next)
		if (sb->warm && (!image || !strcmp(sb->spec.image, image)))
			rn_sandbox_stop(r, sb, RN_REASON_REQUESTED);
}
