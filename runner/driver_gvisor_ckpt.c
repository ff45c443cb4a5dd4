/* Pause and resume of a gvisor sandbox, and its adoption by a restarted
 * runner. A deny-all sandbox is paused to disk: the agent closes its host
 * sockets (gVisor cannot save them), `runsc checkpoint` writes the sandbox's
 * memory and processes to <dir>/checkpoint and ends it (sentry, gofer,
 * watcher and cgroups go: nothing runs and no memory is held while
 * paused), and resume is `runsc restore` of it under a new watcher, whose
 * `runsc kill USR2` makes the agent listen again. An allow-all or
 * allow-list sandbox is paused the same way: its network namespace is held
 * by a bind mount (driver_gvisor_netns.c), so its veth, addresses, egress
 * and rules outlive the checkpoint, and the restore's watcher joins it.
 * Only a sandbox whose namespace is not held is paused by `runsc pause`
 * (the sentry stops its tasks, memory kept). The long steps (the
 * checkpoint, the wait for a restored agent) run in a worker
 * (rn_worker.h): the loop answers every other call meanwhile. */
#include "driver_gvisor_int.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rn_egress.h"
#include "rn_net.h"
#include "rn_pause.h"
#include "rn_sandbox.h"
#include "rn_slot.h"
#include "rn_state.h"
#include "rn_worker.h"
#include "sbx_fs.h"
#include "sbx_log.h"

/* The watcher after the sentry ended, or SIGKILLed after 10 s. */
static void wait_watcher(struct rn_sandbox *sb)
{
	int st;

	for (int i = 0; i < 2000; i++) {
		pid_t p = waitpid(sb->pid, &st, WNOHANG);

		if (p == sb->pid || (p < 0 && errno != EINTR))
			return;
		if (i == 1999) {
			kill(-sb->pid, SIGKILL);
			kill(sb->pid, SIGKILL);
			while (waitpid(sb->pid, &st, 0) < 0 && errno == EINTR)
				;
			return;
		}
		usleep(5000);
	}
}

/* What the checkpointed sandbox left: its cgroups and runsc's state. The
 * image, the root's overlay and tmpfs and the agent's dead socket (rn_pause.c puts
 * it aside) stay. */
static void drop_ended(struct rn_sandbox *sb)
{
	struct gv_sb *gb = sb_of(sb);

	for (int i = 0; i < 400 && gv_sweep_cgroup(&sb->drv->r->cg, gb->cg) == 1; i++)
		usleep(5000);
	gv_remove_runsc_state(state_of(sb->drv), sb->id);
}

/* The checkpoint's long steps, in a worker: the agent closed its
 * sockets, then `runsc checkpoint` (about 2 s for 256 MiB). */
struct ckpt_arg {
	char sockdir[PATH_MAX];
	char flag[PATH_MAX + 64];
};

static int ckpt_worker(const struct rn_sandbox *sb, void *arg, char *msg, size_t n)
{
	const struct ckpt_arg *a = arg;
	struct sbx_err e = { 0, "" };

	if (gv_ckpt_wait_closed(a->sockdir, 10000) < 0) {
		snprintf(msg, n, "the agent did not close its socket for the checkpoint");
		return -1;
	}
	if (gv_runsc_op(sb, "checkpoint", a->flag, NULL, &e) < 0) {
		snprintf(msg, n, "%s", e.msg);
		return -1;
	}
	return 0;
}

/* The checkpoint's end, in the loop. */
static void ckpt_done(struct runner *r, struct rn_sandbox *sb, const char *msg)
{
	char img[PATH_MAX + 16], sockdir[PATH_MAX];
	struct sbx_err e2 = { 0, "" };

	rn_state_path(sockdir, sb, "sock");
	snprintf(img, sizeof(img), "%s/" GV_CKPT_DIR, sb->dir);
	gv_ckpt_unmark(sockdir);
	if (sb->status != RN_RUNNING) {
		/* stopped meanwhile: its cleanup removes the dir, image and all */
		rn_sandbox_pause_done(r, sb, "it was stopped");
		return;
	}
	if (msg) {
		/* the sandbox runs on (unless the checkpoint ended it): its
		 * agent listens again, through a socket moved out of its
		 * reach as at start */
		unlink(sb->agent_socket);
		if (gv_runsc_op(sb, "kill", NULL, "USR2", &e2) < 0 || gv_sock_rehide(sockdir, 10000) < 0)
			sbx_err_log("%s: listen again after a failed pause: %s", sb->id,
				    e2.msg[0] ? e2.msg : strerror(errno));
		sbx_rmtree(img);
		rn_sandbox_pause_done(r, sb, msg);
		if (sb->status == RN_RUNNING && sb->reaped) {
			/* a checkpoint that failed part way ended it */
			snprintf(sb->error, sizeof(sb->error), "it ended in a failed pause: %.200s",
				 msg);
			rn_sandbox_stop(r, sb, RN_REASON_ERROR);
		}
		return;
	}
	if (!sb->reaped)
		wait_watcher(sb);
	sb->pid = 0;
	sb->reaped = 1;             /* nothing of it to wait for until resume */
	sb_of(sb)->checkpointed = 1;
	drop_ended(sb);
	if (sb_of(sb)->slot >= 0) {
		/* its veth outlives this runner in the held namespace: no
		 * other runner may take the slot while this one is away */
		char held[PATH_MAX];

		rn_state_path(held, sb, GV_NETNS_NAME);
		rn_slot_keep(sb_of(sb)->slot, held);
	}
	/* what a restarted runner needs to take it back (gv_adopt) */
	if (rn_state_save_paused(sb, &e2) < 0)
		sbx_err_log("%s: it will not outlive the runner: %s", sb->id, e2.msg);
	rn_sandbox_pause_done(r, sb, NULL);
}

/* Pause to disk: the agent is told to close its sockets (a quick step),
 * then a worker waits for that and runs `runsc checkpoint`; ckpt_done
 * finishes in the loop. 1 (started), or -1 with err. */
static int gv_checkpoint(struct rn_sandbox *sb, struct sbx_err *err)
{
	char img[PATH_MAX + 16];
	struct ckpt_arg a;

	rn_state_path(a.sockdir, sb, "sock");
	snprintf(img, sizeof(img), "%s/" GV_CKPT_DIR, sb->dir);
	sbx_rmtree(img);
	if (mkdir(img, 0700) < 0)
		return sbx_err_sys(err, "mkdir %s", img);
	if (gv_runsc_op(sb, "kill", NULL, "USR1", err) < 0)
		goto fail;
	/* uncompressed: flate spent 6 s on 256 MiB of random bytes here and
	 * saved nothing; the image is removed at resume anyway */
	snprintf(a.flag, sizeof(a.flag), "--compression=none --image-path='%s'", img);
	if (rn_worker_start(sb->drv->r, sb, ckpt_worker, &a, ckpt_done, err) < 0) {
		struct sbx_err e2 = { 0, "" };
		if (gv_runsc_op(sb, "kill", NULL, "USR2", &e2) < 0 || gv_sock_rehide(a.sockdir, 10000) < 0)
			sbx_err_log("%s: listen again after a failed pause: %s", sb->id,
				    e2.msg[0] ? e2.msg : strerror(errno));
		goto fail;
	}
	return 1;
fail:
	sbx_rmtree(img);
	return -1;
}

/* The restore's wait, in a worker: the restored agent listens again. */
struct restore_arg {
	char sockdir[PATH_MAX];
	pid_t watcher;
};

static int restore_worker(const struct rn_sandbox *sb, void *arg, char *msg, size_t n)
{
	const struct restore_arg *a = arg;
	int rc = gv_ckpt_wait_listening(a->sockdir, a->watcher, 60000);

	(void)sb;
	if (rc != 0)
		snprintf(msg, n, "%s", rc == 1 ? "the restored sandbox ended at once" :
			 "its agent did not listen within 60 s");
	return rc ? -1 : 0;
}

/* A failed restore: the watcher and what it made go; paused as before. */
static void restore_undo(struct rn_sandbox *sb)
{
	int st;

	if (sb->pid > 0 && !sb->reaped) {
		kill(-sb->pid, SIGKILL);
		kill(sb->pid, SIGKILL);
		while (waitpid(sb->pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	sb->pid = 0;
	sb->reaped = 1;
	drop_ended(sb);
}

static void restore_done(struct runner *r, struct rn_sandbox *sb, const char *msg)
{
	char img[PATH_MAX + 16], aside[PATH_MAX + 16], why[300];
	struct sbx_err e2 = { 0, "" };

	snprintf(aside, sizeof(aside), "%s" RN_PAUSED_SUFFIX, sb->agent_socket);
	if (sb->status != RN_PAUSED) {
		rn_sandbox_resume_done(r, sb, "it was stopped");
		return;
	}
	if (msg) {
		snprintf(why, sizeof(why), "runsc restore: %s", msg);
		gv_runsc_error(sb);
		if (!strncmp(sb->error, "runsc: ", 7))
			snprintf(why, sizeof(why), "restore failed: %.200s", sb->error);
		sb->error[0] = 0;
		restore_undo(sb);
		rn_sandbox_resume_done(r, sb, why);
		return;
	}
	sb_of(sb)->checkpointed = 0;
	rn_slot_unkeep(sb_of(sb)->slot);
	unlink(aside);
	rn_state_path(img, sb, "paused.json");
	unlink(img);
	if (rn_state_save(sb, "gvisor", sb_of(sb)->slot, &e2) < 0)
		sbx_err_log("%s: after restore: %s", sb->id, e2.msg);
	snprintf(img, sizeof(img), "%s/" GV_CKPT_DIR, sb->dir);
	if (sbx_rmtree(img) < 0)
		sbx_warn("%s: cannot remove %s: %s", sb->id, img, strerror(errno));
	rn_sandbox_resume_done(r, sb, NULL);
}

/* `runsc restore` of <dir>/checkpoint under a new watcher (a quick step);
 * a worker waits for the agent to listen again and restore_done
 * finishes in the loop, removing the image. On failure the sandbox is
 * paused as before (the image kept). 1 (started), or -1 with err. */
static int gv_restore(struct rn_sandbox *sb, struct sbx_err *err)
{
	struct gv_state *gs = state_of(sb->drv);
	struct gv_launch l = { .restore = 1, .sv = { -1, -1 },
			       .allow_all = sb->spec.network != RN_NET_DENY_ALL };
	char aside[PATH_MAX + 16];
	struct restore_arg a;

	if (gv_check_runtime(gs, sb, &l, err) < 0)
		return -1;
	gv_plan_launch(&l, gs, sb);
	/* Allow-all: back into the namespace held since start, whose eth0
	 * runsc left without its addresses; the egress, after a restart of
	 * the runner, attached again. */
	if (l.allow_all && sb_of(sb)->slot < 0)
		return sbx_err_set(err, EIO, "sandbox %s has a network but no slot", sb->id);
	if (l.allow_all && (rn_net_readdress(l.netns, sb_of(sb)->slot, err) < 0 ||
			    (!sb->egress && rn_egress_attach(sb, sb_of(sb)->slot, err) < 0)))
		return -1;
	/* The agent's socket of before the checkpoint is dead, and the
	 * watcher moves the new one to its name: it goes back aside (where
	 * rn_pause.c had it, so a failed restore leaves the sandbox paused as
	 * it was), and is removed once the restore worked. */
	snprintf(aside, sizeof(aside), "%s" RN_PAUSED_SUFFIX, sb->agent_socket);
	if (rename(sb->agent_socket, aside) < 0)
		return sbx_err_sys(err, "move the agent socket of %s", sb->id);
	if (gv_make_cgroups(sb, err) < 0 || gv_fork_watcher(&l, sb, err) < 0)
		goto fail;
	sb->reaped = 0;
	snprintf(a.sockdir, sizeof(a.sockdir), "%s", l.sockdir);
	a.watcher = sb->pid;
	if (rn_worker_start(sb->drv->r, sb, restore_worker, &a, restore_done, err) < 0)
		goto fail;
	return 1;
fail:
	restore_undo(sb);
	return -1;
}

int gv_pause(struct rn_sandbox *sb, struct sbx_err *err)
{
	char held[PATH_MAX];

	rn_state_path(held, sb, GV_NETNS_NAME);
	if (sb->spec.network != RN_NET_DENY_ALL && !gv_netns_held(held)) {
		/* no namespace to restore into (it was never held): kept in
		 * memory by `runsc pause`, and said so */
		sbx_warn("%s: its network namespace is not held at %s: paused in memory "
			 "(runsc pause), not to disk", sb->id, held);
		return gv_runsc_op(sb, "pause", NULL, NULL, err);
	}
	return gv_checkpoint(sb, err);
}

int gv_resume(struct rn_sandbox *sb, struct sbx_err *err)
{
	if (!sb_of(sb)->checkpointed)
		return gv_runsc_op(sb, "resume", NULL, NULL, err);
	return gv_restore(sb, err);
}

/* An allow-all sandbox's slot (its veth's addresses) and held network
 * namespace, taken back: the slot, or -1 when it is deny-all; -2 when
 * either is gone (another runner took the slot while none held it). */
static int take_back_net(struct gv_state *gs, const char *id, const char *dir)
{
	char held[PATH_MAX + 16];
	int slot = rn_state_slot(dir);

	if (slot < 0)
		return -1;
	snprintf(held, sizeof(held), "%s/" GV_NETNS_NAME, dir);
	if (!gv_netns_held(held)) {
		sbx_warn("%s: its network namespace is gone: not taken back", id);
		return -2;
	}
	if (rn_slot_claim(&gs->slots, slot) < 0) {
		sbx_warn("%s: its network slot %d is taken: not taken back", id, slot);
		return -2;
	}
	return slot;
}

/* At start-up: a sandbox paused to disk by a previous run (its image,
 * state.json and paused.json there) is paused again in this one; resume
 * restores it as after any pause (its socket tmpfs, root overlay and
 * tmpfs, and an allow-all sandbox's network namespace, are still mounted:
 * the runner's end did not unmount them). An allow-all sandbox's egress
 * (its resolver and proxy, which ended with the runner; the slot's
 * firewall rules, which did not) is attached again at resume (gv_restore):
 * nothing of it runs meanwhile, and the loop it needs is not up yet. */
int gv_adopt(struct rn_driver *d, const char *id, const char *dir)
{
	struct gv_state *gs = state_of(d);
	char p[PATH_MAX + 64];
	struct rn_sandbox *sb;
	struct gv_sb *gb;
	int slot;

	snprintf(p, sizeof(p), "%s/" GV_CKPT_DIR "/checkpoint.img", dir);
	if (!gs || access(p, F_OK) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/sock/agent.sock" RN_PAUSED_SUFFIX, dir);
	if (access(p, F_OK) < 0 || (slot = take_back_net(gs, id, dir)) == -2)
		return -1;
	gb = calloc(1, sizeof(*gb));
	sb = gb ? rn_state_adopt_paused(d->r, d, id, dir) : NULL;
	if (!sb) {
		rn_slot_free(&gs->slots, slot);
		free(gb);
		return -1;
	}
	gb->slot = slot;
	gb->checkpointed = 1;
	snprintf(gb->cg, sizeof(gb->cg), "%s/%s", gs->cg_parent, sb->id);
	sb->drv_data = gb;
	rn_state_path(sb->agent_socket, sb, "sock/agent.sock");
	return 0;
}
