/* The cgroup freezer, v2 and v1 (rn_cgroup.h). */
#include "rn_cgroup.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sbx_clock.h"
#include "sbx_fs.h"

/* 1 when the file at p says the cgroup is frozen: v2 cgroup.events has
 * the line "frozen 1", v1 freezer.state reads FROZEN (FREEZING while
 * tasks are still on their way). */
static int frozen(const char *p, int v2)
{
	char buf[512];

	if (sbx_read_file(p, buf, sizeof buf) <= 0)
		return 0;
	if (!v2)
		return strncmp(buf, "FROZEN", 6) == 0;
	for (char *l = buf; l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (strncmp(l, "frozen ", 7) == 0)
			return l[7] == '1';
	return 0;
}

int rn_cgroup_freeze(const struct rn_cgroup *cg, const char *path, int on, struct sbx_err *err)
{
	char ctl[PATH_MAX], state[PATH_MAX];
	int64_t until;

	if (!path || !*path || *path == '/' || strstr(path, ".."))
		return sbx_err_set(err, EINVAL, "cgroup path \"%s\" is not a relative path",
				   path ? path : "");
	if (cg->v2) {
		snprintf(ctl, sizeof ctl, RN_CG_ROOT "/%s/cgroup.freeze", path);
		snprintf(state, sizeof state, RN_CG_ROOT "/%s/cgroup.events", path);
	} else {
		snprintf(ctl, sizeof ctl, RN_CG_ROOT "/" RN_CG_FREEZER "/%s/freezer.state", path);
		snprintf(state, sizeof state, "%s", ctl);
	}
	if (access(ctl, F_OK) < 0)
		return sbx_err_set(err, errno == ENOENT && !cg->v2 ? ENOTSUP : errno,
				   "no freezer for cgroup %s (%s)", path, strerror(errno));
	if (sbx_write_file(ctl, cg->v2 ? (on ? "1" : "0") : (on ? "FROZEN" : "THAWED"), 0, 0) < 0)
		return sbx_err_sys(err, "write %s", ctl);
	if (!on)
		return 0;
	/* the runner is one loop: a short bounded wait, the kernel is quick */
	until = sbx_mono_ms() + RN_CG_FREEZE_WAIT_MS;
	while (!frozen(state, cg->v2)) {
		if (sbx_mono_ms() >= until) {
			sbx_write_file(ctl, cg->v2 ? "0" : "THAWED", 0, 0);
			return sbx_err_set(err, EBUSY, "cgroup %s did not freeze within %d ms",
					   path, RN_CG_FREEZE_WAIT_MS);
		}
		usleep(1000);
	}
	return 0;
}
