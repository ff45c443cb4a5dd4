#include "rn_idle.h"
#include "rn_sandbox.h"
#include "rn_image_pull_create.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rn_admit.h"
#include "rn_conn.h"
#include "rn_drivers.h"
#include "rn_persist.h"
#include "rn_policy.h"
#include "rn_sockwatch.h"
#include "rn_warm.h"
#include "rn_worker.h"
#include "sbx_dial.h"
#include "sbx_id.h"
#include "sbx_log.h"
#include "sbx_fs.h"

#define CLEANUP_RETRY_MS 5
#define CLEANUP_MAX_TRIES 2000     /* ~10 s of a busy cgroup */

const char *rn_status_name(enum rn_status s)
{
	static const char *const n[] = { "starting", "running", "stopping", "stopped", "failed",
					 "paused" };
	return n[s];
}

const char *rn_reason_name(enum rn_reason s)
{
	static const char *const n[] = { NULL, "requested", "timeout", "error", "out_of_memory",
					 "runner_restart" };
	return n[s];
}

int rn_sandbox_final(const struct rn_sandbox *sb)
{
	return sb->status == RN_STOPPED || sb->status == RN_FAILED;
}

struct rn_sandbox *rn_sandbox_find(struct runner *r, const char *id)
{
	/* a warm sandbox is nobody's: no id of it reaches a client */
	for (struct rn_sandbox *sb = r->sandboxes; sb; sb = sb->next)
		if (!sb->warm && strcmp(sb->id, id) == 0)
			return sb;
	return NULL;
}

/* A descriptor of sb's readiness (the dial in flight, the agent's ready
 * pipe), held while ev->cb is set and watched by the loop when it could
 * be added: a failed add leaves it to the tick's timer. */
static void ready_watch(struct rn_sandbox *sb, struct rn_ev *ev, int fd, rn_ev_cb cb)
{
	*ev = (struct rn_ev){ .fd = fd, .cb = cb, .owner = sb };
	rn_loop_add(ev, EPOLLIN | EPOLLRDHUP);
}

static void ready_unwatch(struct rn_ev *ev)
{
	if (!ev->cb)
		return;
	rn_loop_del(ev);   /* one never added: epoll says ENOENT, nothing else */
	close(ev->fd);
	*ev = (struct rn_ev){ .fd = -1 };
}

static void ready_close(struct rn_sandbox *sb)
{
	ready_unwatch(&sb->agent_up);
	ready_unwatch(&sb->ready_ev);
}

/* Drop the oldest final sandboxes beyond RN_KEEP_STOPPED. */
static void prune(struct runner *r)
{
	int n = 0;
	struct rn_sandbox **pp, *sb;

	/* a warm one that ended leaves no record */
	for (pp = &r->sandboxes; *pp;) {
		sb = *pp;
		if (sb->warm && rn_sandbox_final(sb) && !rn_warm_building(sb)) {
			*pp = sb->next;
			rn_spec_free(&sb->spec);
			free(sb);
			continue;
		}
		pp = &sb->next;
	}
	/* a persisted sandbox is kept until it is deleted (rn_persist.h) */
	for (sb = r->sandboxes; sb; sb = sb->next)
		n += rn_sandbox_final(sb) && !sb->persist_snap[0];
	/* the list is newest first: walk to the tail for the oldest */
	while (n > RN_KEEP_STOPPED) {
		struct rn_sandbox **victim = NULL;
		for (pp = &r->sandboxes; *pp; pp = &(*pp)->next)
			if (rn_sandbox_final(*pp) && !(*pp)->persist_snap[0] &&
			    !rn_conn_waiting_on(*pp))
				victim = pp;
		if (!victim)
			return;
		sb = *victim;
		*victim = sb->next;
		rn_spec_free(&sb->spec);
		free(sb);
		n--;
	}
}

/* MiB of memory limits held by this runner's sandboxes: every one not yet
 * cleaned up (a stopping sandbox's pages are still in RAM). A count kept
 * by create and finish: status asks every second, whatever the number of
 * sandboxes. */
int64_t rn_sandbox_memory_committed(const struct runner *r)
{
	return r->committed_mb;
}

/* The sandbox's dir, marked with the driver's name before the driver makes
 * anything in it: reconcile hands it to that driver only. */
int rn_sandbox_make_dir(struct rn_sandbox *sb, struct sbx_err *err)
{
	if (mkdir(sb->dir, 0700) < 0)
		return sbx_err_sys(err, "mkdir %s", sb->dir);
	if (rn_driver_mark_dir(sb->dir, sb->drv->ops->name) < 0) {
		sbx_err_sys(err, "mark %s", sb->dir);
		sbx_rmtree(sb->dir);
		return -1;
	}
	sb->dir_made = 1;
	return 0;
}

struct rn_sandbox *rn_sandbox_create(struct runner *r, struct rn_driver *drv,
				     struct rn_spec *spec, struct sbx_err *err)
{
	struct rn_sandbox *sb;
	char prefix[40];
	int64_t t0 = rn_now_mono();

	if (r->stopping) {
		rn_spec_free(spec);
		sbx_err_set(err, EAGAIN, "the runner is shutting down");
		return NULL;
	}
	/* a sandbox can only lower the hard limit it inherits: when the runner
	 * could not raise its own (no CAP_SYS_RESOURCE), nofile is clamped to
	 * it, and the sandbox object shows the value in force */
	if (spec->nofile > r->nofile_max) {
		sbx_debug("nofile %lld clamped to the runner's hard limit %lld",
			(long long)spec->nofile, (long long)r->nofile_max);
		spec->nofile = r->nofile_max;
	}
	if (rn_admit(r, spec, err) < 0) {
		rn_spec_free(spec);
		return NULL;
	}
	sb = calloc(1, sizeof(*sb));
	if (!sb) {
		rn_spec_free(spec);
		sbx_err_set(err, ENOMEM, "out of memory");
		return NULL;
	}
	sb->spec = *spec;
	memset(spec, 0, sizeof(*spec));
	sb->drv = drv;
	if (r->n_live >= RN_MAX_SANDBOXES) {
		sbx_err_set(err, EAGAIN, "this runner has %d sandboxes, its maximum",
			    RN_MAX_SANDBOXES);
		goto fail;
	}
	/* sbx_<runner>_<24 random base32>: the runner is recoverable, and
	 * no '-' (it separates port and id in preview hosts). */
	snprintf(prefix, sizeof(prefix), "sbx_%s_", r->name);
	if (sbx_id_new(prefix, sb->id, sizeof(sb->id)) < 0) {
		sbx_err_set(err, EIO, "cannot make a sandbox id");
		goto fail;
	}
	if (snprintf(sb->dir, sizeof(sb->dir), "%s/%s", r->sbx_root, sb->id) >=
	    (int)sizeof(sb->dir)) {
		sbx_err_set(err, ENAMETOOLONG, "state dir path too long");
		goto fail;
	}
	sb->created_wall = rn_now_wall();
	sb->created_mono = t0;
	sb->deadline_mono = t0 + sb->spec.timeout_ms;
	sb->ready_by_mono = t0 + (sb->drv && sb->drv->ops->ready_timeout_ms ?
				  sb->drv->ops->ready_timeout_ms : RN_READY_TIMEOUT_MS);
	sb->status = RN_STARTING;
	if (!drv->ops->makes_dir && rn_sandbox_make_dir(sb, err) < 0) {
		sbx_err_log("create: %s", err->msg);
		goto fail;
	}
	if (drv->ops->start(sb, err) < 0) {
		if (err->code != EINVAL)
			sbx_err_log("create (%s): %s", drv->ops->name, err->msg);
		if (sb->dir_made)
			sbx_rmtree(sb->dir);
		goto fail;
	}
	sb->next = r->sandboxes;
	r->sandboxes = sb;
	r->n_live++;
	r->committed_mb += sb->spec.memory_mb;
	r->tick_dirty = 1;
	sbx_info("%s: started by %s (pid %d, setup %lld ms, memory %lld MiB, pids %lld, "
		 "disk %lld MiB, timeout %lld ms, %d env vars)", sb->id, drv->ops->name, (int)sb->pid,
		 (long long)(rn_now_mono() - t0), (long long)sb->spec.memory_mb,
		 (long long)sb->spec.pids, (long long)sb->spec.disk_mb,
		 (long long)sb->spec.timeout_ms, sb->spec.n_env);
	return sb;
fail:
	rn_spec_free(&sb->spec);
	free(sb);
	return NULL;
}

int rn_sandbox_restart(struct runner *r, struct rn_sandbox *sb, struct sbx_err *err)
{
	int64_t t0 = rn_now_mono();

	if (r->stopping || r->draining)
		return sbx_err_set(err, EAGAIN, "runner %s takes no new sandboxes now", r->name);
	if (r->n_live >= RN_MAX_SANDBOXES)
		return sbx_err_set(err, EAGAIN, "this runner has %d sandboxes, its maximum",
				   RN_MAX_SANDBOXES);
	if (!sb->drv->available)
		return sbx_err_set(err, EAGAIN, "isolation %s is unavailable on this runner: %s",
				   sb->drv->ops->name, sb->drv->reason);
	if (rn_admit(r, &sb->spec, err) < 0)
		return -1;
	sb->status = RN_STARTING;
	sb->reason = RN_REASON_NONE;
	sb->error[0] = 0;
	sb->reaped = sb->wait_status = sb->cleanup_tries = sb->stop_asked = 0;
	sb->cleanup_retry_mono = sb->stopped_mono = sb->paused_mono = 0;
	sb->idle_fd1 = 0;
	sb->ready_ev.cb = sb->agent_up.cb = NULL;
	sb->agent_said_ready = 0;
	sb->idle_at = 0;
	sb->pid = 0;
	sb->agent_socket[0] = 0;
	sb->drv_data = NULL;
	sb->egress = NULL;
	sb->created_wall = rn_now_wall();
	sb->created_mono = t0;
	sb->deadline_mono = t0 + sb->spec.timeout_ms;
	sb->ready_by_mono = t0 + (sb->drv->ops->ready_timeout_ms ?
				  sb->drv->ops->ready_timeout_ms : RN_READY_TIMEOUT_MS);
	sb->dir_made = 0;
	if (!sb->drv->ops->makes_dir && rn_sandbox_make_dir(sb, err) < 0)
		goto fail;
	if (sb->drv->ops->start(sb, err) < 0) {
		if (sb->dir_made)
			sbx_rmtree(sb->dir);
		goto fail;
	}
	r->n_live++;
	r->committed_mb += sb->spec.memory_mb;
	r->tick_dirty = 1;
	sbx_info("%s: started again by %s (pid %d, setup %lld ms)", sb->id, sb->drv->ops->name,
		 (int)sb->pid, (long long)(rn_now_mono() - t0));
	return 0;
fail:
	sbx_err_log("%s: start again: %s", sb->id, err->msg);
	sb->status = RN_STOPPED;
	sb->reason = RN_REASON_ERROR;
	snprintf(sb->error, sizeof sb->error, "could not start again: %.200s", err->msg);
	return -1;
}

void rn_sandbox_stop(struct runner *r, struct rn_sandbox *sb, enum rn_reason reason)
{
	if (sb->status != RN_STARTING && sb->status != RN_RUNNING && sb->status != RN_PAUSED)
		return;
	sb->status = RN_STOPPING;
	sb->reason = reason;
	sb->stop_asked = 1;
	r->tick_dirty = 1;
	rn_idle_close(sb);
	ready_close(sb);
	sb->stopped_mono = rn_now_mono();
	sb->drv->ops->kill(sb);
	sbx_info("%s: stopping (%s)", sb->id, rn_reason_name(reason));
}

int rn_sandbox_extend(struct runner *r, struct rn_sandbox *sb, int64_t ms,
		      int64_t max_lifetime_ms, struct sbx_err *err)
{
	int64_t lifetime = sb->deadline_mono - sb->created_mono + ms;

	(void)r;
	if (sb->status != RN_STARTING && sb->status != RN_RUNNING && sb->status != RN_PAUSED)
		return sbx_err_set(err, EBUSY, "sandbox %s is %s, not running", sb->id,
				   rn_status_name(sb->status));
	/* create bounds how long a sandbox lives (timeout_ms); extend keeps
	 * that bound: expires_at never passes created_at + the maximum */
	if (max_lifetime_ms > RN_TIMEOUT_MAX_MS)
		max_lifetime_ms = RN_TIMEOUT_MAX_MS;
	if (lifetime > max_lifetime_ms) {
		int64_t left = max_lifetime_ms - (lifetime - ms);
		return sbx_err_set(err, EINVAL, "duration_ms: the sandbox would live %lld ms "
				   "from its creation, over the limit of %lld ms (at most %lld "
				   "more)", (long long)lifetime, (long long)max_lifetime_ms,
				   (long long)(left > 0 ? left : 0));
	}
	sb->deadline_mono += ms;
	r->tick_dirty = 1;
	return 0;
}

static void finish(struct runner *r, struct rn_sandbox *sb)
{
	ready_close(sb);   /* no descriptor of a sandbox outlives it */
	r->n_live--;
	r->committed_mb -= sb->spec.memory_mb;
	r->n_warm -= sb->warm;
	if (sb->warm)
		rn_warm_ended(sb);
	sb->status = (sb->reason == RN_REASON_ERROR || sb->reason == RN_REASON_OOM) ?
		     RN_FAILED : RN_STOPPED;
	sbx_info("%s: %s (%s)%s%s", sb->id, rn_status_name(sb->status),
		 rn_reason_name(sb->reason), sb->error[0] ? ": " : "", sb->error);
	rn_spec_wipe_values(&sb->spec);  /* env values are not needed any more */
	rn_conn_sandbox_changed(r, sb);
}

void rn_sandbox_reap(struct runner *r)
{
	int st;
	pid_t pid;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		struct rn_sandbox *sb;
		for (sb = r->sandboxes; sb; sb = sb->next)
			if (sb->pid == pid && !sb->reaped)
				break;
		if (!sb) {
			/* the warm pool's, a pause's worker, a socket-budget
			 * change, a create's pull, or not ours */
			if (!rn_warm_reaped(r, pid, st) && !rn_worker_reaped(r, pid, st) &&
			    !rn_sockwatch_reaped(r, pid, st))
				rn_image_pull_reaped(r, pid, st);
			continue;
		}
		sb->reaped = 1;
		sb->wait_status = st;
		r->tick_dirty = 1;
		if (sb->transition) {
			/* a checkpoint ends the watcher; a restore's that ends is
			 * the restore's failure: the driver's end of it says */
		} else if (sb->status == RN_STARTING || sb->status == RN_RUNNING ||
		    sb->status == RN_PAUSED) {
			/* The agent died on its own: the sandbox failed. */
			long oom = sb->drv->ops->oom_kills(sb);
			sb->status = RN_STOPPING;
			sb->stopped_mono = rn_now_mono();
			if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL && oom > 0) {
				sb->reason = RN_REASON_OOM;
				snprintf(sb->error, sizeof(sb->error),
					 "the agent was killed by the out-of-memory killer");
			} else {
				sb->reason = RN_REASON_ERROR;
				if (WIFSIGNALED(st))
					snprintf(sb->error, sizeof(sb->error),
						 "the agent was killed by signal %d", WTERMSIG(st));
				else
					snprintf(sb->error, sizeof(sb->error),
						 "the agent exited with status %d", WEXITSTATUS(st));
			}
			ready_close(sb);
			sb->drv->ops->kill(sb);
		}
	}
}

/* The agent's answer to the readiness dial (or its close) came: the next
 * loop turn walks the sandboxes. Watched once per dial, so an answer
 * that stays partial cannot keep waking the loop: the tick's timer
 * looks again. */
static void ready_answered(struct rn_ev *ev, uint32_t events)
{
	struct rn_sandbox *sb = ev->owner;

	(void)events;
	rn_loop_mod(ev, 0);
	sb->drv->r->tick_dirty = 1;
}

/* The agent's ready pipe: its byte (sbx_dial.h) says it listens, which
 * the runner takes as its answer; an end without it (an agent that
 * died before) leaves readiness to the dial. */
static void agent_listens(struct rn_ev *ev, uint32_t events)
{
	struct rn_sandbox *sb = ev->owner;
	char c;

	(void)events;
	sb->agent_said_ready = read(ev->fd, &c, 1) == 1 && c == SBX_AGENT_READY_BYTE[0];
	ready_unwatch(&sb->agent_up);
	sb->drv->r->tick_dirty = 1;
}

void rn_sandbox_watch_ready(struct rn_sandbox *sb, int fd)
{
	ready_unwatch(&sb->agent_up);
	ready_watch(sb, &sb->agent_up, fd, agent_listens);
}

/* Readiness: the agent answered the handshake (a socket that accepts is
 * not yet a guest that answers). One dial at a time, in flight across
 * ticks: 1 ready, 0 not yet. A dial the guest refused or closed is
 * dropped and tried again on the next tick. */
static int agent_ready(struct rn_sandbox *sb)
{
	int rc;

	if (sb->agent_said_ready) {
		ready_close(sb);
		return 1;
	}
	if (!sb->ready_ev.cb) {
		/* the socket's directory is writable by root inside: the dial
		 * never follows what it put there */
		int fd = sbx_dial_start(sb->agent_socket, SBX_AGENT_PORT);
		if (fd < 0)
			return 0;
		ready_watch(sb, &sb->ready_ev, fd, ready_answered);
	}
	rc = sbx_dial_finish(sb->ready_ev.fd, SBX_AGENT_PORT);
	if (rc == 0)
		return 0;
	if (rc == 1)
		ready_close(sb);
	else   /* refused: the agent's pipe, if any, still says when to dial again */
		ready_unwatch(&sb->ready_ev);
	return rc == 1;
}

/* The walk over every sandbox runs only when one changed (tick_dirty) or
 * the earliest time one asked for (tick_at) has come: a loop turn for a
 * request or a status probe costs nothing per sandbox, so a thousand idle
 * sandboxes (no idle timeout, deadlines far off) cost the loop nothing. */
int rn_sandbox_tick(struct runner *r)
{
	int64_t now = rn_now_mono(), next = -1;
	struct sbx_err err;

	if (!r->tick_dirty && r->tick_at > now)
		return r->tick_at - now > 100000 ? 100000 : (int)(r->tick_at - now);
	r->tick_dirty = 0;

#define WANT(at) do { int64_t d_ = (at) - now; if (d_ < 0) d_ = 0; \
		if (next < 0 || d_ < next) next = d_; } while (0)

	for (struct rn_sandbox *sb = r->sandboxes; sb; sb = sb->next) {
		if (sb->status == RN_STARTING && sb->warm && !sb->agent_socket[0]) {
			/* its warmer is at work: its pipe wakes the loop */
		} else if (sb->status == RN_STARTING) {
			if (agent_ready(sb)) {
				sb->status = RN_RUNNING;
				if (sb->drv->ops->ready)
					sb->drv->ops->ready(sb);
				/* the waiting create's reply first, the log after */
				rn_conn_sandbox_changed(r, sb);
				sbx_info("%s: ready in %lld ms", sb->id,
					 (long long)(now - sb->created_mono));
			} else if (now >= sb->ready_by_mono) {
				snprintf(sb->error, sizeof(sb->error),
					 "the agent did not answer within %lld ms",
					 (long long)(sb->ready_by_mono - sb->created_mono));
				rn_sandbox_stop(r, sb, RN_REASON_ERROR);
			} else {
				/* every ms while a jail or gvisor agent is due;
				 * past 200 ms (a VM's kernel still booting) every
				 * 10 ms: each dial a VM's vsock refuses is a
				 * request and a reset through its guest kernel */
				WANT(now + (now - sb->created_mono < 200 ? 1 : 10));
			}
		}
		if (sb->transition) {
			/* a pause or resume runs off the loop: its end (the
			 * driver's, rn_pause.h) is the next step */
			continue;
		}
		if ((sb->status == RN_STARTING || sb->status == RN_RUNNING)) {
			if (now >= sb->deadline_mono)
				rn_persist_stop(r, sb, RN_REASON_TIMEOUT);
			else
				WANT(sb->deadline_mono);
		}
		{
			int64_t at = rn_idle_check(r, sb, now);
			if (at >= 0)
				WANT(at);
		}
		if (sb->status == RN_STOPPING && sb->reaped) {
			int rc;
			if (sb->cleanup_retry_mono > now) {
				WANT(sb->cleanup_retry_mono);
				continue;
			}
			if (rn_warm_building(sb)) {
				WANT(now + CLEANUP_RETRY_MS);
				continue;
			}
			memset(&err, 0, sizeof(err));
			if (sb->cleanup_tries == 0) {
				sb->oom_kills = sb->drv->ops->oom_kills(sb);
				sb->pids_hits = sb->drv->ops->pids_hits(sb);
			}
			rc = sb->drv->ops->cleanup(sb, &err);
			if (rc == 1 && ++sb->cleanup_tries < CLEANUP_MAX_TRIES) {
				sb->cleanup_retry_mono = now + CLEANUP_RETRY_MS;
				WANT(sb->cleanup_retry_mono);
				continue;
			}
			if (rc != 0) {
				sbx_err_log("%s: cleanup: %s", sb->id,
					    rc < 0 ? err.msg : "cgroup still busy");
				if (!sb->error[0])
					snprintf(sb->error, sizeof(sb->error), "cleanup failed");
			}
			finish(r, sb);
		} else if (sb->status == RN_STOPPING) {
			/* still waiting for the exit; SIGCHLD wakes us, but a
			 * sweep every 100 ms is cheap insurance */
			WANT(now + 100);
		}
	}
	prune(r);
	if (next < 0 || next > 100000)
		next = 100000;
	r->tick_at = now + next;
	return (int)next;
}

cJSON *rn_sandbox_json(const struct runner *r, const struct rn_sandbox *sb)
{
	cJSON *o = cJSON_CreateObject(), *a;
	int64_t expires = sb->created_wall + (sb->deadline_mono - sb->created_mono);
	long oom, pids;

	cJSON_AddStringToObject(o, "id", sb->id);
	cJSON_AddStringToObject(o, "status", rn_status_name(sb->status));
	if (sb->reason != RN_REASON_NONE && (sb->status == RN_STOPPED ||
					      sb->status == RN_FAILED || sb->status == RN_STOPPING))
		cJSON_AddStringToObject(o, "stop_reason", rn_reason_name(sb->reason));
	if (sb->error[0])
		cJSON_AddStringToObject(o, "error", sb->error);
	cJSON_AddNumberToObject(o, "created_at", (double)sb->created_wall);
	cJSON_AddNumberToObject(o, "expires_at", (double)expires);
	rn_spec_limits_json(o, &sb->spec);
	cJSON_AddNumberToObject(o, "idle_timeout_ms", (double)sb->spec.idle_timeout_ms);
	a = cJSON_AddArrayToObject(o, "ports");
	for (int i = 0; i < sb->spec.n_ports; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber(sb->spec.ports[i]));
	a = cJSON_AddArrayToObject(o, "env_names");
	for (int i = 0; i < sb->spec.n_env; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(sb->spec.env_names[i]));
	cJSON_AddItemToObject(o, "network", rn_policy_json(sb->spec.network, sb->spec.policy));
	cJSON_AddStringToObject(o, "image", sb->spec.image);
	{
		/* a revived sandbox stacks its hidden snapshot: it shows what its
		 * create named */
		const char *src = sb->revived ? sb->source_snap : sb->spec.snapshot;
		if (src[0])
			cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "source"), "snapshot",
						src);
	}
	cJSON_AddBoolToObject(o, "persistent", sb->spec.persistent);
	if (sb->spec.snapshot_expires_in_ms)
		cJSON_AddNumberToObject(o, "snapshot_expires_in_ms",
					(double)sb->spec.snapshot_expires_in_ms);
	if (sb->spec.snapshot_keep_last)
		cJSON_AddNumberToObject(o, "snapshot_keep_last", (double)sb->spec.snapshot_keep_last);
	if (sb->spec.persistent)
		cJSON_AddBoolToObject(o, "resumable", sb->persist_snap[0] ||
				      sb->status == RN_PAUSED);
	if (sb->spec.owner[0])
		cJSON_AddStringToObject(o, "owner", sb->spec.owner);
	/* always present: a gateway that finds it missing fails closed */
	cJSON_AddBoolToObject(o, "preview_auth", sb->spec.preview_auth);
	cJSON_AddStringToObject(o, "isolation", sb->drv->ops->name);
	/* the runner's older name for the same thing */
	cJSON_AddStringToObject(o, "driver", sb->drv->ops->name);
	cJSON_AddStringToObject(o, "runner", r->name);
	oom = sb->oom_kills;
	pids = sb->pids_hits;
	if (!rn_sandbox_final(sb)) {
		cJSON_AddStringToObject(o, "agent_socket", sb->agent_socket);
		if (sb->status != RN_STOPPING || !sb->reaped) {
			oom = sb->drv->ops->oom_kills((struct rn_sandbox *)sb);
			pids = sb->drv->ops->pids_hits((struct rn_sandbox *)sb);
		}
	}
	if (oom >= 0)
		cJSON_AddNumberToObject(o, "oom_kills", (double)oom);
	if (pids >= 0)
		cJSON_AddNumberToObject(o, "pids_limit_hits", (double)pids);
	return o;
}
