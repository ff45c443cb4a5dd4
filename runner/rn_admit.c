#include "rn_admit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rn_sandbox.h"
#include "sbx_fs.h"
#include "sbx_log.h"

/* MemAvailable of /proc/meminfo in MiB, -1 when unreadable. */
static int64_t mem_available_mb(void)
{
	char buf[4096], *p;

	if (sbx_read_file("/proc/meminfo", buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, "MemAvailable:");
	if (!p)
		return -1;
	return strtoll(p + strlen("MemAvailable:"), NULL, 10) >> 10;
}

int64_t rn_admit_used_mb(const struct rn_sandbox *sb)
{
	const char *cg = sb->drv->ops->cgroup ? sb->drv->ops->cgroup(sb) : NULL;
	long long b = cg ? rn_cgroup_memory_bytes(&sb->drv->r->cg, cg) : -1;

	return b < 0 ? sb->spec.memory_mb : (int64_t)((b + (1 << 20) - 1) >> 20);
}

/* One pass over the sandboxes not yet cleaned up: what they use. */
static void sample(struct runner *r, int64_t now)
{
	int64_t sum = 0;

	for (const struct rn_sandbox *sb = r->sandboxes; sb; sb = sb->next)
		if (!rn_sandbox_final(sb))
			sum += rn_admit_used_mb(sb);
	r->used_sample_mb = sum;
	r->used_sample_at = now;
	r->used_sampled = 1;
}

void rn_admit_figures(const struct runner *r, struct rn_admit_in *in)
{
	memset(in, 0, sizeof(*in));
	in->budget_mb = r->max_memory_mb;
	in->host_mb = r->host_memory_mb;
	in->overcommit = r->overcommit;
	in->reserve_mb = r->reserve_mb;
	in->committed_mb = rn_sandbox_memory_committed(r);
	in->used_mb = r->used_sample_mb;
	in->n_live = r->n_live;
	in->avail_mb = -1;
}

int rn_admit(struct runner *r, const struct rn_spec *spec, struct sbx_err *err)
{
	struct rn_admit_in in;
	enum rn_admit_verdict v;
	int64_t now = rn_now_mono();

	if (r->overcommit > 0 && (!r->used_sampled || now - r->used_sample_at >= RN_ADMIT_SAMPLE_MS))
		sample(r, now);
	rn_admit_figures(r, &in);
	if (r->overcommit > 0)
		in.avail_mb = mem_available_mb();
	v = rn_admit_decide(&in, spec->memory_mb);
	if (v == RN_ADMIT_OK)
		return 0;
	/* the numbers stay in the log: a tenant learns nothing of the host */
	sbx_info("create refused: memory_mb %lld: %s (limits %lld of %lld MiB, in use %lld MiB "
		 "by %d sandbox(es) + %lld MiB reserve each, budget %lld MiB, host available "
		 "%lld MiB)", (long long)spec->memory_mb, rn_admit_reason(v),
		 (long long)in.committed_mb, (long long)rn_admit_limits_cap(&in),
		 (long long)in.used_mb, in.n_live, (long long)in.reserve_mb,
		 (long long)in.budget_mb, (long long)in.avail_mb);
	return sbx_err_set(err, ENOSPC, "memory_mb: no room for %lld MiB more on this runner "
			   "now (%s); retry later or ask for less", (long long)spec->memory_mb,
			   rn_admit_reason(v));
}
