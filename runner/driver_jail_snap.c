/* Pause, resume and snapshots of a jail sandbox: its cgroup's freezer
 * stops every process where it stands (memory stays in RAM); a snapshot
 * copies the writable layer's upper dir (<dir>/rw/upper, the tmpfs the
 * parent mounted) while the sandbox is frozen, then thaws it. */
#include "driver_jail.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rn_cgroup.h"
#include "rn_layer.h"
#include "rn_loop.h"
#include "rn_state.h"
#include "sbx_log.h"
#include "sbx_net.h"

int jail_pause(struct rn_sandbox *sb, struct sbx_err *err)
{
	return rn_cgroup_freeze(&sb->drv->r->cg, jail_cgroup(sb), 1, err);
}

int jail_resume(struct rn_sandbox *sb, struct sbx_err *err)
{
	return rn_cgroup_freeze(&sb->drv->r->cg, jail_cgroup(sb), 0, err);
}

/* Up to QUIESCE_MS for the agent's answer to SIGUSR1 or SIGUSR2, in 5 ms
 * steps. */
#define QUIESCE_MS 10000
#define STEP_US 5000

/* The agent (sb->pid, the jail's PID 1) ends every connection and closes
 * its listener on SIGUSR1, then makes <socket>.quiesced (guest/agent_main.c):
 * streams and terminals end with a `paused` error instead of going silent. */
static int quiesce_agent(struct rn_sandbox *sb, struct sbx_err *err)
{
	char mark[PATH_MAX + 16];
	struct stat st;

	snprintf(mark, sizeof(mark), "%s.quiesced", sb->agent_socket);
	if (kill(sb->pid, SIGUSR1) < 0)
		return sbx_err_sys(err, "signal the agent of %s", sb->id);
	for (int i = 0; i * STEP_US < QUIESCE_MS * 1000; i++) {
		if (lstat(mark, &st) == 0 && S_ISREG(st.st_mode)) {
			unlink(mark);
			return 0;
		}
		usleep(STEP_US);
	}
	return sbx_err_set(err, ETIMEDOUT, "the agent of %s did not end its connections",
			   sb->id);
}

/* SIGUSR2: the agent listens again (its socket file replaced); 0 once a
 * dial of it connects. */
static int relisten_agent(struct rn_sandbox *sb, struct sbx_err *err)
{
	char dir[PATH_MAX];

	/* the dir of its socket (rw/sock; sock for a sandbox an older runner made) */
	snprintf(dir, sizeof(dir), "%s", sb->agent_socket);
	if (strrchr(dir, '/'))
		*strrchr(dir, '/') = 0;
	if (kill(sb->pid, SIGUSR2) < 0)
		return sbx_err_sys(err, "signal the agent of %s", sb->id);
	for (int i = 0; i * STEP_US < QUIESCE_MS * 1000; i++) {
		int fd = sbx_unix_connect_beneath(dir, "agent.sock");

		if (fd >= 0) {
			close(fd);
			return 0;
		}
		usleep(STEP_US);
	}
	return sbx_err_set(err, ETIMEDOUT, "the agent of %s did not listen again", sb->id);
}

int jail_pause_op(struct rn_sandbox *sb, struct sbx_err *err)
{
	struct sbx_err e2 = { 0, "" };

	if (quiesce_agent(sb, err) < 0) {
		if (relisten_agent(sb, &e2) < 0)
			sbx_err_log("%s: after a failed pause: %s", sb->id, e2.msg);
		return -1;
	}
	if (jail_pause(sb, err) < 0) {
		if (relisten_agent(sb, &e2) < 0)
			sbx_err_log("%s: after a failed pause: %s", sb->id, e2.msg);
		return -1;
	}
	return 0;
}

int jail_resume_op(struct rn_sandbox *sb, struct sbx_err *err)
{
	if (jail_resume(sb, err) < 0)
		return -1;
	return relisten_agent(sb, err);
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
