#include "rn_pause.h"

#include <errno.h>
#include <stdio.h>

#include "rn_conn.h"
#include "rn_idle.h"
#include "rn_persist.h"
#include "rn_sandbox.h"
#include "rn_loop.h"
#include "sbx_log.h"

/* The agent's socket aside (paused) or back: a dial of its path fails
 * while paused instead of waiting on a frozen agent. */
static int move_socket(const struct rn_sandbox *sb, int aside, struct sbx_err *err)
{
	char other[PATH_MAX + 16];

	snprintf(other, sizeof other, "%s" RN_PAUSED_SUFFIX, sb->agent_socket);
	if (rename(aside ? sb->agent_socket : other, aside ? other : sb->agent_socket) < 0)
		return sbx_err_sys(err, "move the agent socket of %s", sb->id);
	return 0;
}

static int busy(const struct rn_sandbox *sb, struct sbx_err *err)
{
	return sbx_err_set(err, EBUSY, "sandbox %s is being %s", sb->id,
			   sb->transition == RN_TR_PAUSING ? "paused" : "resumed");
}

/* The pause is done: the socket aside, the clocks stopped. */
static void paused(struct runner *r, struct rn_sandbox *sb)
{
	rn_idle_close(sb);
	sb->status = RN_PAUSED;
	sb->paused_mono = rn_now_mono();
	r->tick_dirty = 1;
	sbx_info("%s: paused", sb->id);
}

static void resumed(struct runner *r, struct rn_sandbox *sb)
{
	/* the timeout clock stood still while paused */
	int64_t held = rn_now_mono() - sb->paused_mono;

	sb->deadline_mono += held;
	sb->status = RN_RUNNING;
	r->tick_dirty = 1;
	sbx_info("%s: resumed after %lld ms paused", sb->id, (long long)held);
}

int rn_sandbox_pause(struct runner *r, struct rn_sandbox *sb, struct sbx_err *err)
{
	int rc;

	if (sb->transition)
		return busy(sb, err);
	if (sb->status == RN_PAUSED)
		return 0;
	if (sb->status != RN_RUNNING)
		return sbx_err_set(err, EBUSY, "sandbox %s is %s, not running", sb->id,
				   rn_status_name(sb->status));
	if (!sb->drv->ops->pause)
		return sbx_err_set(err, ENOTSUP, "isolation %s cannot pause on this runner",
				   sb->drv->ops->name);
	rc = sb->drv->ops->pause(sb, err);
	if (rc < 0)
		return -1;
	if (rc == 1) {
		sb->transition = RN_TR_PAUSING;
		sb->tr_err[0] = 0;
		sbx_info("%s: pausing", sb->id);
		return 1;
	}
	if (move_socket(sb, 1, err) < 0) {
		struct sbx_err e2 = { 0, "" };
		if (sb->drv->ops->resume(sb, &e2) != 0)
			sbx_err_log("%s: resume after a failed pause: %s", sb->id, e2.msg);
		return -1;
	}
	paused(r, sb);
	return 0;
}

void rn_sandbox_pause_done(struct runner *r, struct rn_sandbox *sb, const char *msg)
{
	struct sbx_err err = { 0, "" };
	int keep = sb->tr_keep;

	sb->transition = RN_TR_NONE;
	sb->tr_keep = 0;
	if (sb->status != RN_RUNNING) {
		/* stopped meanwhile: its stop goes on */
	} else if (!msg && move_socket(sb, 1, &err) == 0) {
		paused(r, sb);
		if (r->stopping)   /* paused to disk: left for the next start */
			r->n_kept_at_stop++;
	} else {
		snprintf(sb->tr_err, sizeof sb->tr_err, "%.250s", msg ? msg : err.msg);
		sbx_err_log("%s: pause failed: %s", sb->id, sb->tr_err);
		if (keep) {
			snprintf(sb->error, sizeof sb->error, "it could not be kept paused: %.200s",
				 sb->tr_err);
			rn_sandbox_stop(r, sb, sb->tr_reason);
		}
	}
	r->tick_dirty = 1;
	rn_conn_sandbox_changed(r, sb);
}

int rn_sandbox_resume(struct runner *r, struct rn_sandbox *sb, struct sbx_err *err)
{
	int rc;

	if (sb->transition == RN_TR_RESUMING)
		return 1;   /* joins the one in progress */
	if (sb->transition)
		return busy(sb, err);
	if (sb->status == RN_RUNNING)
		return 0;
	if (sb->status != RN_PAUSED)
		return sbx_err_set(err, EBUSY, "sandbox %s is %s, not paused", sb->id,
				   rn_status_name(sb->status));
	if (move_socket(sb, 0, err) < 0 || (rc = sb->drv->ops->resume(sb, err)) < 0)
		return -1;
	if (rc == 1) {
		sb->transition = RN_TR_RESUMING;
		sb->tr_err[0] = 0;
		sbx_info("%s: resuming", sb->id);
		return 1;
	}
	resumed(r, sb);
	return 0;
}

void rn_sandbox_resume_done(struct runner *r, struct rn_sandbox *sb, const char *msg)
{
	sb->transition = RN_TR_NONE;
	if (sb->status != RN_PAUSED) {
		/* stopped meanwhile: its stop goes on */
	} else if (!msg) {
		resumed(r, sb);
		if (r->stopping)   /* the runner stops: so does it (kept if persistent) */
			rn_persist_stop(r, sb, RN_REASON_REQUESTED);
	} else {
		/* the driver left it paused as it was */
		snprintf(sb->tr_err, sizeof sb->tr_err, "%.250s", msg);
		sbx_err_log("%s: resume failed: %s", sb->id, msg);
	}
	r->tick_dirty = 1;
	rn_conn_sandbox_changed(r, sb);
}
