/* The memory admission rule of the runner, as arithmetic only (no I/O, so
 * a unit test drives it: tests/unit/test_rn_admit.c). rn_admit.c gathers
 * the figures from the sandboxes' cgroups and /proc/meminfo.
 *
 * Static (overcommit 0): the memory_mb of every sandbox not yet cleaned up,
 * plus the new one's, stays within budget_mb.
 * Overcommit F: the memory_mb limits may add up to F x host_mb, while what
 * the sandboxes actually use, plus reserve_mb for each of them and for the
 * new one, stays within budget_mb; and the host itself must still have the
 * new one's reserve available above a floor (a twentieth of host_mb), so a
 * host short of memory for any reason refuses rather than swaps. */
#ifndef RN_ADMIT_RULE_H
#define RN_ADMIT_RULE_H

#include <stdint.h>

struct rn_admit_in {
	int64_t budget_mb;      /* --max-memory-mb, else --max-memory-share x RAM */
	int64_t host_mb;        /* --max-memory-mb, else RAM (MemTotal): F's base */
	double overcommit;      /* --memory-overcommit F; 0: the static rule */
	int64_t reserve_mb;     /* --memory-reserve-mb: room kept per sandbox */
	int64_t committed_mb;   /* memory_mb of the sandboxes not yet cleaned up */
	int64_t used_mb;        /* what those use now (cgroup memory, v1 TCP too) */
	int n_live;             /* how many they are */
	int64_t avail_mb;       /* the host's MemAvailable; -1: unknown */
};

enum rn_admit_verdict {
	RN_ADMIT_OK,
	RN_ADMIT_LIMITS,        /* memory_mb over the (overcommitted) cap of limits */
	RN_ADMIT_IN_USE,        /* in use + reserves would pass the budget */
	RN_ADMIT_HOST_LOW,      /* the host's available memory is under its floor */
};

/* The verdict on one more sandbox of memory_mb. */
enum rn_admit_verdict rn_admit_decide(const struct rn_admit_in *in, int64_t memory_mb);
/* The cap on the memory_mb limits: budget_mb, or F x host_mb. */
int64_t rn_admit_limits_cap(const struct rn_admit_in *in);
/* The memory_mb a create could still ask for now (what status reports as
 * free): the room under the cap of limits, 0 when another sandbox would
 * not fit by what is in use or by the host. */
int64_t rn_admit_free_mb(const struct rn_admit_in *in);
/* A sentence for the refusal's message (static text). */
const char *rn_admit_reason(enum rn_admit_verdict v);

#endif
