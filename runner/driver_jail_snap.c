/* Pause, resume and snapshots of a jail sandbox: its cgroup's freezer
 * stops every process where it stands (memory stays in RAM); a snapshot
 * copies the writable layer's upper dir (<dir>/rw/upper, the tmpfs the
 * parent mounted) while the sandbox is frozen, then thaws it. */
#include "driver_jail.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>

#include "rn_cgroup.h"
#include "rn_layer.h"
#include "rn_loop.h"
#include "rn_state.h"
#include "sbx_log.h"

int jail_pause(struct rn_sandbox *sb, struct sbx_err *err)
{
	return rn_cgroup_freeze(&sb->drv->r->cg, jail_cgroup(sb), 1, err);
}

int jail_resume(struct rn_sandbox *sb, struct sbx_err *err)
{
	return rn_cgroup_freeze(&sb->drv->r->cg, jail_cgroup(sb), 0, err);
}

int jail_snapshot(struct rn_sandbox *sb, const char *dst, struct rn_layer_stats *st,
		  struct sbx_err *err)
{
	char upper[PATH_MAX];
	int was_paused = sb->status == RN_PAUSED, rc;
	int64_t t0 = rn_now_mono(), t1;

	rn_state_path(upper, sb, "rw/upper");
	if (!was_paused && jail_pause(sb, err) < 0)
		return -1;
	t1 = rn_now_mono();
	rc = rn_layer_copy(upper, dst, jail_uid_base(sb), JAIL_UID_COUNT, st, err);
	if (!was_paused) {
		struct sbx_err e2 = { 0, "" };
		if (jail_resume(sb, &e2) < 0) {
			/* it may stay frozen: said once here and to the caller
			 * (a stop still kills it: every kill thaws) */
			sbx_err_log("%s: thaw after the snapshot: %s", sb->id, e2.msg);
			if (rc == 0) {
				*err = e2;
				rc = -1;
			}
		}
	}
	sbx_debug("%s: frozen %lld ms for the copy (freeze %lld ms)", sb->id,
		  (long long)(rn_now_mono() - t0), (long long)(t1 - t0));
	return rc;
}
