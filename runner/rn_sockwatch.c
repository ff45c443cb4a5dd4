#include "rn_sockwatch.h"

#include <stdio.h>

#include "rn_sandbox.h"
#include "sbx_log.h"

#define SMALLEST_MEMORY_MB 32   /* rn_spec.c's lower bound of memory_mb */

long long rn_sock_bound_bytes(long long memory_mb)
{
	long long budget = (memory_mb << 20) / RN_CG_TCP_SHARE;

	return budget + budget / 4;
}

static void look_at(struct runner *r, struct rn_sandbox *sb, int64_t now)
{
	const char *cg = sb->drv->ops->cgroup ? sb->drv->ops->cgroup(sb) : NULL;
	long long used = cg ? rn_cgroup_sock_bytes(&r->cg, cg) : -1;
	long long bound = rn_sock_bound_bytes(sb->spec.memory_mb);

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
	if (total >= 0 && total <= rn_sock_bound_bytes(SMALLEST_MEMORY_MB)) {
		/* nobody can be over: clear what an earlier look marked */
		for (struct rn_sandbox *sb = r->sandboxes; sb && r->sock_marked; sb = sb->next)
			sb->sock_over_since = 0;
		r->sock_marked = 0;
		return RN_SOCKWATCH_EVERY_MS;
	}
	r->sock_marked = 1;
	for (struct rn_sandbox *sb = r->sandboxes; sb; sb = sb->next)
		if (sb->status == RN_RUNNING || sb->status == RN_STARTING ||
		    sb->status == RN_PAUSED)
			look_at(r, sb, now);
	return RN_SOCKWATCH_EVERY_MS;
}
