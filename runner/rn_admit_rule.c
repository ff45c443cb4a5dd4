#include "rn_admit_rule.h"

#define HOST_FLOOR_DIV 20   /* the host keeps a twentieth of its memory free */

int64_t rn_admit_limits_cap(const struct rn_admit_in *in)
{
	if (in->overcommit <= 0)
		return in->budget_mb;
	return (int64_t)((double)in->host_mb * in->overcommit);
}

/* The reserve a sandbox of memory_mb is counted with: it can never use
 * more than its limit. */
static int64_t reserve_of(const struct rn_admit_in *in, int64_t memory_mb)
{
	return memory_mb < in->reserve_mb ? memory_mb : in->reserve_mb;
}

/* Overcommit's part: one more sandbox counted with reserve. */
static enum rn_admit_verdict in_use(const struct rn_admit_in *in, int64_t reserve)
{
	/* every live sandbox is counted with the full reserve: their limits
	 * are not summed here, and a sandbox's use may grow by that much */
	if (in->used_mb + (int64_t)in->n_live * in->reserve_mb + reserve > in->budget_mb)
		return RN_ADMIT_IN_USE;
	if (in->avail_mb >= 0 && in->avail_mb - reserve < in->host_mb / HOST_FLOOR_DIV)
		return RN_ADMIT_HOST_LOW;
	return RN_ADMIT_OK;
}

enum rn_admit_verdict rn_admit_decide(const struct rn_admit_in *in, int64_t memory_mb)
{
	if (in->committed_mb + memory_mb > rn_admit_limits_cap(in))
		return RN_ADMIT_LIMITS;
	if (in->overcommit <= 0)
		return RN_ADMIT_OK;
	return in_use(in, reserve_of(in, memory_mb));
}

int64_t rn_admit_free_mb(const struct rn_admit_in *in)
{
	int64_t room = rn_admit_limits_cap(in) - in->committed_mb;

	if (room <= 0)
		return 0;
	if (in->overcommit > 0 && in_use(in, in->reserve_mb) != RN_ADMIT_OK)
		return 0;
	return room;
}

const char *rn_admit_reason(enum rn_admit_verdict v)
{
	switch (v) {
	case RN_ADMIT_OK:
		return "admitted";
	case RN_ADMIT_LIMITS:
		return "the memory limits of this runner's sandboxes are at its cap";
	case RN_ADMIT_IN_USE:
		return "the memory its sandboxes use, with a reserve for each, is at the "
		       "runner's budget";
	case RN_ADMIT_HOST_LOW:
		return "the host is low on available memory";
	}
	return "?";
}
