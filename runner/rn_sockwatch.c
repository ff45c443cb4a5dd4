#include "rn_sockwatch.h"

#include <stdio.h>
#include <sys/wait.h>

#include "rn_sandbox.h"
#include "sbx_log.h"

#define SMALLEST_MEMORY_MB 32   /* rn_spec.c's lower bound of memory_mb */

long long rn_sock_budget_bytes(long long memory_mb)
{
	return (memory_mb << 20) / RN_CG_TCP_SHARE;
}

long long rn_sock_bound_bytes(long long memory_mb)
{
	long long budget = rn_sock_budget_bytes(memory_mb);

	return budget + budget / 4;
}

long long rn_sock_refuse_bytes(long long memory_mb)
{
	long long budget = rn_sock_budget_bytes(memory_mb);

	/* the kernel's charges fail at the limit, so a sandbox whose sends
	 * it holds may sit a little under it rather than on it */
	return budget - budget / 16;
}

long long rn_sock_allow_bytes(long long memory_mb)
{
	long long budget = rn_sock_budget_bytes(memory_mb);

	return budget - budget / 4;
}

/* Turn sb's refusal of new connections on or off, once per change. The
 * state follows the wish even when the driver failed: one warning, not
 * one a second; the stop below still bounds what the sandbox holds. While
 * a change still runs, the next waits for a later look: two at once could
 * finish in the wrong order. */
static void set_refusal(struct rn_sandbox *sb, int on, long long used)
{
	struct sbx_err err = { 0 };
	pid_t job;

	if (!sb->drv->ops->refuse_connections || sb->sock_refusing == on || sb->sock_job > 0)
		return;
	sb->sock_refusing = on;
	job = sb->drv->ops->refuse_connections(sb, on, &err);
	if (job < 0) {
		sbx_warn("%s", err.msg);
		return;
	}
	sb->sock_job = job;
	if (on)
		sbx_info("%s: socket buffers hold %lld KiB, at the budget of %lld KiB: new "
			 "connections refused", sb->id, used >> 10,
			 rn_sock_budget_bytes(sb->spec.memory_mb) >> 10);
	else
		sbx_info("%s: socket buffers under %lld KiB: new connections allowed again",
			 sb->id, rn_sock_allow_bytes(sb->spec.memory_mb) >> 10);
}

static void look_at(struct runner *r, struct rn_sandbox *sb, int64_t now)
{
	const char *cg = sb->drv->ops->cgroup ? sb->drv->ops->cgroup(sb) : NULL;
	long long used = cg ? rn_cgroup_sock_bytes(&r->cg, cg) : -1;
	long long bound = rn_sock_bound_bytes(sb->spec.memory_mb);

	if (used >= rn_sock_refuse_bytes(sb->spec.memory_mb))
		set_refusal(sb, 1, used);
	else if (used >= 0 && used < rn_sock_allow_bytes(sb->spec.memory_mb))
		set_refusal(sb, 0, used);
	if (used <= bound) {
		sb->sock_over_since = 0;
		return;
	}
	if (!sb->sock_over_since) {
		sb->sock_over_since = now;
		sbx_info("%s: socket buffers hold %lld KiB, over the bound of %lld KiB; stopped "
			 "if still over in %d ms", sb->id, used >> 10, bound >> 10, RN_SOCK_OVER_MS);
		return;
	}
	if (now - sb->sock_over_since < RN_SOCK_OVER_MS)
		return;
	snprintf(sb->error, sizeof(sb->error), "its socket buffers held %lld MiB, over the "
		 "bound of %lld MiB for memory_mb %lld, for %d ms", used >> 20, bound >> 20,
		 (long long)sb->spec.memory_mb, RN_SOCK_OVER_MS);
	sbx_info("%s: %s", sb->id, sb->error);
	rn_sandbox_stop(r, sb, RN_REASON_OOM);
}

static int watched(const struct rn_sandbox *sb)
{
	return sb->status == RN_RUNNING || sb->status == RN_STARTING ||
	       sb->status == RN_PAUSED;
}

int rn_sockwatch_tick(struct runner *r)
{
	int64_t now = rn_now_mono();
	long long total;

	if (now < r->sockwatch_at)
		return (int)(r->sockwatch_at - now);
	r->sockwatch_at = now + RN_SOCKWATCH_EVERY_MS;
	if (r->n_live == 0 || r->cg_error[0])
		return RN_SOCKWATCH_EVERY_MS;
	total = rn_cgroup_sock_bytes(&r->cg, RN_SOCK_CG_TOP);
	if (total >= 0 && total < rn_sock_allow_bytes(SMALLEST_MEMORY_MB)) {
		/* nobody can be at its budget: undo what an earlier look did */
		for (struct rn_sandbox *sb = r->sandboxes; sb && r->sock_marked; sb = sb->next) {
			sb->sock_over_since = 0;
			if (watched(sb))
				set_refusal(sb, 0, total);
		}
		r->sock_marked = 0;
		return RN_SOCKWATCH_EVERY_MS;
	}
	r->sock_marked = 1;
	for (struct rn_sandbox *sb = r->sandboxes; sb; sb = sb->next)
		if (watched(sb))
			look_at(r, sb, now);
	return RN_SOCKWATCH_EVERY_MS;
}

int rn_sockwatch_reaped(struct runner *r, pid_t pid, int st)
{
	for (struct rn_sandbox *sb = r->sandboxes; sb; sb = sb->next) {
		if (sb->sock_job != pid)
			continue;
		sb->sock_job = 0;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			sbx_warn("%s: changing the refusal of new connections failed (status %d)",
				 sb->id, st);
		return 1;
	}
	return 0;
}
