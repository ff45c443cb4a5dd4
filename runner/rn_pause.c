#include "rn_pause.h"

#include <errno.h>
#include <stdio.h>

#include "rn_idle.h"
#include "rn_loop.h"
#include "sbx_log.h"

#define PAUSED_SUFFIX ".paused"

/* The agent's socket aside (paused) or back: a dial of its path fails
 * while paused instead of waiting on a frozen agent. */
static int move_socket(const struct rn_sandbox *sb, int aside, struct sbx_err *err)
{
	char other[PATH_MAX + 16];

	snprintf(other, sizeof other, "%s" PAUSED_SUFFIX, sb->agent_socket);
	if (rename(aside ? sb->agent_socket : other, aside ? other : sb->agent_socket) < 0)
		return sbx_err_sys(err, "move the agent socket of %s", sb->id);
	return 0;
}

int rn_sandbox_pause(struct runner *r, struct rn_sandbox *sb, struct sbx_err *err)
{
	if (sb->status == RN_PAUSED)
		return 0;
	if (sb->status != RN_RUNNING)
		return sbx_err_set(err, EBUSY, "sandbox %s is %s, not running", sb->id,
				   rn_status_name(sb->status));
	if (!sb->drv->ops->pause)
		return sbx_err_set(err, ENOTSUP, "isolation %s cannot pause on this runner",
				   sb->drv->ops->name);
	if (sb->drv->ops->pause(sb, err) < 0)
		return -1;
	if (move_socket(sb, 1, err) < 0) {
		struct sbx_err e2 = { 0, "" };
		if (sb->drv->ops->resume(sb, &e2) < 0)
			sbx_err_log("%s: resume after a failed pause: %s", sb->id, e2.msg);
		return -1;
	}
	rn_idle_close(sb);
	sb->status = RN_PAUSED;
	sb->paused_mono = rn_now_mono();
	r->tick_dirty = 1;
	sbx_info("%s: paused", sb->id);
	return 0;
}

int rn_sandbox_resume(struct runner *r, struct rn_sandbox *sb, struct sbx_err *err)
{
	int64_t held;

	if (sb->status == RN_RUNNING)
		return 0;
	if (sb->status != RN_PAUSED)
		return sbx_err_set(err, EBUSY, "sandbox %s is %s, not paused", sb->id,
				   rn_status_name(sb->status));
	if (move_socket(sb, 0, err) < 0 || sb->drv->ops->resume(sb, err) < 0)
		return -1;
	/* the timeout clock stood still while paused */
	held = rn_now_mono() - sb->paused_mono;
	sb->deadline_mono += held;
	sb->status = RN_RUNNING;
	r->tick_dirty = 1;
	sbx_info("%s: resumed after %lld ms paused", sb->id, (long long)held);
	return 0;
}
