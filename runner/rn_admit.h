/* Memory admission of creates (the rule: rn_admit_rule.h). With
 * --memory-overcommit the figures in use come from the sandboxes' cgroups,
 * read in one pass at most once a second and only when a create asks:
 * idle sandboxes cost the runner nothing between creates. */
#ifndef RN_ADMIT_H
#define RN_ADMIT_H

#include "rn_admit_rule.h"
#include "runner.h"

#define RN_ADMIT_SAMPLE_MS 1000   /* a pass over the cgroups is reused this long */

/* 0 when a sandbox of spec->memory_mb may be created now; else -1 with err
 * ENOSPC (no_capacity) whose message gives the reason (the figures go to
 * the runner's log only). */
int rn_admit(struct runner *r, const struct rn_spec *spec, struct sbx_err *err);
/* The figures of the rule as last gathered (no cgroup read): for status. */
void rn_admit_figures(const struct runner *r, struct rn_admit_in *in);
/* MiB sb uses now (its cgroup's memory; on v1 its TCP buffers too), or its
 * memory_mb when the driver cannot say. */
int64_t rn_admit_used_mb(const struct rn_sandbox *sb);

#endif
