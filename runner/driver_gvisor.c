/* The gvisor driver: each sandbox is one `runsc run --detach` under a
 * small watcher, the runner's child, whose exit is the sandbox's end (so
 * the loop never waits for runsc). The runner makes the sandbox's memory/pids/cpu cgroups with
 * their limits first (runsc joins them and leaves them alone), so the
 * counters survive until cleanup reads them; stop kills `runsc run` and
 * every task in the cgroup, and cleanup removes what runsc leaves. The
 * agent's socket dir is a dir of a tiny per-sandbox tmpfs, bound rw into
 * the sandbox; with --host-uds=create the socket the agent binds there is
 * a real host socket, so the transport is the jail's, unchanged, once the
 * watcher (driver_gvisor_watch.c) has moved the socket out of the
 * sandbox's reach (driver_gvisor_sock.c: SO_PEERCRED cannot tell who
 * connects under gVisor). */
#include "driver_gvisor_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cJSON.h>

#include "rn_cgroup.h"
#include "rn_child.h"
#include "rn_egress.h"
#include "rn_net.h"
#include "rn_pause.h"
#include "rn_runtime.h"
#include "rn_slot.h"
#include "rn_sandbox.h"
#include "rn_state.h"
#include "rn_worker.h"
#include "sbx_fs.h"
#include "sbx_log.h"

/* Host tasks of a sandbox: sentry and gofer threads plus about 2 per guest
 * process under systrap (measured here); the host pids.max is only the
 * backstop behind RLIMIT_NPROC, sized so the guest limit is met first. */
#define GV_PIDS_BASE 64
#define GV_PIDS_PER_PROC 4
#define GV_PIDS_MAX 32768

/* ---- what a sandbox leaves on the host, and its removal ---- */

/* runsc's state files of one container in our --root: "<id>_sandbox:<id>.*"
 * and "runsc-<id>.sock". `runsc delete --force` would remove them too, but
 * it polls for a second even when the sandbox is long dead; once every
 * task of the sandbox is gone (its cgroups are empty) nothing holds them,
 * so they are removed directly and the loop never waits. */
void gv_remove_runsc_state(const struct gv_state *gs, const char *id)
{
	DIR *d = opendir(gs->root);
	struct dirent *e;
	char sock[RN_ID_MAX + 16];
	size_t l = strlen(id);

	if (!d)
		return;
	snprintf(sock, sizeof(sock), "runsc-%s.sock", id);
	while ((e = readdir(d)))
		if ((!strncmp(e->d_name, id, l) && e->d_name[l] == '_') ||
		    !strcmp(e->d_name, sock))
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
}

static void unmount_all(const char *dir)
{
	char p[PATH_MAX + 16];

	snprintf(p, sizeof(p), "%s/sock", dir);
	for (int k = 0; k < 8 && umount2(p, MNT_DETACH) == 0; k++)
		;
	gv_root_unmount(dir);
	snprintf(p, sizeof(p), "%s/" GV_NETNS_NAME, dir);
	gv_netns_drop(p);
}

/* An allow-all sandbox's veth goes with its netns, once its mount is
 * dropped (unmount_all) and the watcher and the sentry are gone, but the
 * kernel removes a netns later, in its own time: the host end is deleted
 * here so nothing of it outlives stop, and the slot (its addresses) is
 * free for the next sandbox only after. */
static void release_slot(struct gv_state *gs, struct gv_sb *gb)
{
	if (gb->slot < 0)
		return;
	rn_slot_unkeep(gb->slot);
	rn_net_release(gb->slot);
	rn_slot_free(&gs->slots, gb->slot);
	gb->slot = -1;
}

/* Kill and remove a sandbox's cgroups (runsc's own hierarchies too: after
 * a kill of `runsc run` they stay). 0 done, 1 still busy. */
int gv_sweep_cgroup(const struct rn_cgroup *cg, const char *path)
{
	rn_cgroup_kill(cg, path);
	return rn_cgroup_remove(cg, path, GV_CG_TOP);
}

/* ---- start ---- */

static int make_dirs(const struct rn_sandbox *sb, const char *image, struct sbx_err *err)
{
	char p[PATH_MAX];

	if (rn_state_save(sb, "gvisor", sb->drv_data ? sb_of(sb)->slot : -1, err) < 0)
		return -1;
	/* The agent's socket dir is writable by root inside and visible on
	 * the host: a dir of a tiny tmpfs of its own (the guest gets ENOSPC
	 * after 64 KiB or 13 files), whose root holds the socket once the
	 * watcher moved it there. */
	rn_state_path(p, sb, "sock");
	if (mkdir(p, 0700) < 0)
		return sbx_err_sys(err, "mkdir %s", p);
	if (mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "size=64k,nr_inodes=16,mode=0700") < 0)
		return sbx_err_sys(err, "mount tmpfs on %s", p);
	rn_state_path(p, sb, "sock/" GV_GUEST_DIR);
	if (mkdir(p, 0700) < 0)
		return sbx_err_sys(err, "mkdir %s", p);
	/* The root: a host overlay whose upper dir is on a tmpfs of
	 * disk_mb (writes to / cannot fill the host's disk). */
	return gv_root_mount(sb, image, err);
}

/* The image and the agent runtime, or why this runner cannot start it. */
int gv_check_runtime(struct gv_state *gs, const struct rn_sandbox *sb, struct gv_launch *l,
		     struct sbx_err *err)
{
	struct runner *r = sb->drv->r;

	if (rn_runtime_image(r, sb->spec.image, l->image, sizeof(l->image), err) < 0)
		return -1;
	if (!gs->loader[0])
		rn_runtime_find_loader(r->runtime_dir, gs->loader, sizeof(gs->loader));
	return rn_runtime_ready(r, gs->loader, err);
}

/* The sandbox's drv_data: its cgroup's name and (allow-all) its slot. */
static int take_share(struct gv_state *gs, struct rn_sandbox *sb, int allow_all,
		      struct sbx_err *err)
{
	struct gv_sb *gb = calloc(1, sizeof(*gb));

	if (!gb)
		return sbx_err_set(err, ENOMEM, "out of memory");
	/* the slot is the veth's addresses, shared numbering with the jail */
	gb->slot = allow_all ? rn_slot_alloc(&gs->slots) : -1;
	if (allow_all && gb->slot < 0) {
		free(gb);
		return sbx_err_set(err, EAGAIN, "no free network slot on this host (%d in use)",
				   RN_MAX_SLOTS);
	}
	sb->drv_data = gb;
	snprintf(gb->cg, sizeof(gb->cg), "%s/%s", gs->cg_parent, sb->id);
	return 0;
}

/* The host pids.max of a sandbox of spec (GV_PIDS_BASE above). */
static int64_t host_pids(const struct rn_spec *spec)
{
	int64_t n = GV_PIDS_BASE + GV_PIDS_PER_PROC * spec->pids;

	return n > GV_PIDS_MAX ? GV_PIDS_MAX : n;
}

/* Name everything of the start in l: nothing is made yet. */
void gv_plan_launch(struct gv_launch *l, const struct gv_state *gs, const struct rn_sandbox *sb)
{
	int i = 0;

	rn_state_path(l->sockdir, sb, "sock");
	rn_state_path(l->guestdir, sb, "sock/" GV_GUEST_DIR);
	rn_state_path(l->rootfs, sb, "root");
	rn_state_path(l->pidfile, sb, "sentry.pid");
	if (l->allow_all)
		rn_state_path(l->netns, sb, GV_NETNS_NAME);
	snprintf(l->cgpath, sizeof(l->cgpath), "/%s", sb_of(sb)->cg);
	l->b.spec = &sb->spec;
	l->b.rootfs = l->rootfs;
	l->b.runtime_dir = sb->drv->r->runtime_dir;
	l->b.loader = gs->loader;
	l->b.sockdir = l->guestdir;
	l->b.cgroup_path = l->cgpath;
	l->b.netns_path = l->netns;
	l->b.host_pids = host_pids(&sb->spec);
	l->b.slot = sb_of(sb)->slot;

	snprintf(l->rootflag, sizeof(l->rootflag), "--root=%s", gs->root);
	snprintf(l->logflag, sizeof(l->logflag), "--log=%s/runsc.log", sb->dir);
	snprintf(l->bundle, sizeof(l->bundle), "%s", sb->dir);
	snprintf(l->pidflag, sizeof(l->pidflag), "--pid-file=%s", l->pidfile);
	l->argv[i++] = (char *)gs->runsc;
	l->argv[i++] = l->rootflag;
	l->argv[i++] = l->logflag;
	l->argv[i++] = l->allow_all ? "--network=sandbox" : "--network=none";
	/* gVisor cannot save a TCP connection over the veth: without this a
	 * checkpoint with one open fails, and ends the sandbox; with it the
	 * checkpoint aborts such connections (docs/runner.md) */
	if (l->allow_all)
		l->argv[i++] = "--net-disconnect-ok";
	l->argv[i++] = "--host-uds=create";
	/* (runsc's default for bind mounts, stated: the agent's socket must
	 * vanish inside when the watcher moves it) */
	l->argv[i++] = "--file-access-mounts=shared";
	l->argv[i++] = "--platform=systrap";
	/* the root is the host's overlay (driver_gvisor_root.c): runsc adds
	 * none of its own */
	l->argv[i++] = "--overlay2=none";
	l->argv[i++] = l->restore ? "restore" : "run";
	l->argv[i++] = "--detach";
	if (l->restore) {
		snprintf(l->imageflag, sizeof(l->imageflag), "--image-path=%s/" GV_CKPT_DIR,
			 sb->dir);
		l->argv[i++] = l->imageflag;
	}
	l->argv[i++] = l->pidflag;
	l->argv[i++] = "--bundle";
	l->argv[i++] = l->bundle;
	l->argv[i++] = (char *)sb->id;
	l->argv[i] = NULL;
	i = 0;
	l->poke[i++] = (char *)gs->runsc;
	l->poke[i++] = l->rootflag;
	l->poke[i++] = "kill";
	l->poke[i++] = (char *)sb->id;
	l->poke[i++] = "USR2";
	l->poke[i] = NULL;
}

/* The runner makes the memory, pids and cpu cgroups with their limits;
 * runsc joins cgroups that exist and leaves them (and their counters)
 * alone, so cleanup can still read them. */
int gv_make_cgroups(const struct rn_sandbox *sb, struct sbx_err *err)
{
	struct rn_spec cgspec = sb->spec;

	cgspec.pids = host_pids(&sb->spec);
	return rn_cgroup_create(&sb->drv->r->cg, sb_of(sb)->cg, &cgspec, err);
}

/* Deny-all: config.json now. Allow-all: the channel to the watcher, which
 * makes the netns config.json names (hand_over_netns). */
static int prepare_bundle(struct gv_launch *l, const struct rn_sandbox *sb,
			  struct sbx_err *err)
{
	if (!l->allow_all)
		return gv_spec_write(&l->b, sb->dir, err);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, l->sv) < 0)
		return sbx_err_sys(err, "socketpair");
	return 0;
}

/* The watcher (gv_watch), the runner's child: sb->pid from here on. */
int gv_fork_watcher(struct gv_launch *l, struct rn_sandbox *sb, struct sbx_err *err)
{
	pid_t pid = fork();

	if (pid < 0)
		return sbx_err_sys(err, "fork for runsc");
	if (pid == 0) {
		if (l->sv[0] >= 0)
			close(l->sv[0]);
		gv_watch_exec(l->argv, l->restore ? l->poke : NULL, l->pidfile, l->sockdir,
			      sb->drv->agent_stderr, l->sv[1], l->restore ? l->netns : NULL);
	}
	sb->pid = pid;
	return 0;
}

/* Allow-all: wait for the watcher's netns, hold it at <dir>/netns
 * (driver_gvisor_netns.c), give it the veth, write config.json naming it,
 * and let the watcher start runsc. */
static int hand_over_netns(struct gv_launch *l, struct rn_sandbox *sb, struct sbx_err *err)
{
	char ready;
	const char go = 'g';
	ssize_t n;

	close(l->sv[1]);
	l->sv[1] = -1;
	while ((n = read(l->sv[0], &ready, 1)) < 0 && errno == EINTR)
		;
	if (n != 1 || ready != 'n')
		return sbx_err_set(err, EIO, "could not make the sandbox's network namespace "
				   "(the watcher exited)");
	if (gv_netns_hold(sb->pid, l->netns, err) < 0 ||
	    rn_net_allow_all(sb->pid, sb_of(sb)->slot, err) < 0 ||
	    rn_egress_attach(sb, sb_of(sb)->slot, err) < 0 ||
	    gv_spec_write(&l->b, sb->dir, err) < 0)
		return -1;
	while ((n = send(l->sv[0], &go, 1, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	if (n != 1)
		return sbx_err_sys(err, "start runsc");
	close(l->sv[0]);
	l->sv[0] = -1;
	return 0;
}

/* A start that failed part way: nothing of it stays. */
static void undo_start(struct gv_state *gs, struct rn_sandbox *sb, struct gv_launch *l)
{
	struct gv_sb *gb = sb_of(sb);

	for (int i = 0; i < 2; i++)
		if (l->sv[i] >= 0)
			close(l->sv[i]);
	if (sb->pid > 0) {
		int st;

		if (kill(-sb->pid, SIGKILL) < 0)
			kill(sb->pid, SIGKILL);
		while (waitpid(sb->pid, &st, 0) < 0 && errno == EINTR)
			;
		sb->pid = 0;
	}
	for (int i = 0; i < 100 && gv_sweep_cgroup(&sb->drv->r->cg, gb->cg) == 1; i++)
		usleep(5000);
	gv_remove_runsc_state(gs, sb->id);
	unmount_all(sb->dir);
	rn_egress_detach(sb);
	release_slot(gs, gb);
	free(gb);
	sb->drv_data = NULL;
}

static int gv_start(struct rn_sandbox *sb, struct sbx_err *err)
{
	struct gv_state *gs = state_of(sb->drv);
	struct gv_launch l = { .allow_all = sb->spec.network != RN_NET_DENY_ALL,
			       .sv = { -1, -1 } };

	if (gv_check_runtime(gs, sb, &l, err) < 0 || take_share(gs, sb, l.allow_all, err) < 0)
		return -1;
	sb->pid = 0;
	gv_plan_launch(&l, gs, sb);
	if (make_dirs(sb, l.image, err) < 0 || gv_make_cgroups(sb, err) < 0 ||
	    prepare_bundle(&l, sb, err) < 0 || gv_fork_watcher(&l, sb, err) < 0 ||
	    rn_state_save(sb, "gvisor", sb_of(sb)->slot, err) < 0 ||
	    (l.allow_all && hand_over_netns(&l, sb, err) < 0)) {
		undo_start(gs, sb, &l);
		return -1;
	}
	rn_state_path(sb->agent_socket, sb, "sock/agent.sock");
	return 0;
}

static void gv_kill(struct rn_sandbox *sb)
{
	/* The sandbox's tasks (sentry, gofer, stubs) are all in its cgroup;
	 * its watcher (and a `runsc run` still starting) is not, and is killed
	 * by its group (then nothing waits a second in `runsc delete`: cleanup
	 * removes runsc's state). */
	if (sb->pid > 0 && !sb->reaped && kill(-sb->pid, SIGKILL) < 0)
		kill(sb->pid, SIGKILL);
	if (sb->drv_data)
		rn_cgroup_kill(&sb->drv->r->cg, sb_of(sb)->cg);
}

/* The last error runsc logged, for a sandbox that never came up. */
void gv_runsc_error(struct rn_sandbox *sb)
{
	char p[PATH_MAX + 16], buf[2048], *m, *e;
	int fd;
	ssize_t n;
	off_t size;

	snprintf(p, sizeof(p), "%s/runsc.log", sb->dir);
	fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	size = lseek(fd, 0, SEEK_END);
	lseek(fd, size > (off_t)sizeof(buf) - 1 ? size - (off_t)sizeof(buf) + 1 : 0, SEEK_SET);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	/* runsc logs JSON lines: {"msg":"...","level":"error",...} */
	m = strstr(buf, "\"level\":\"error\"") ? strstr(buf, "\"msg\":\"") : NULL;
	if (!m)
		return;
	m += 7;
	e = strstr(m, "\",\"");
	if (e)
		*e = 0;
	snprintf(sb->error, sizeof(sb->error), "runsc: %.200s", m);
}

static int gv_cleanup(struct rn_sandbox *sb, struct sbx_err *err)
{
	struct gv_sb *gb = sb_of(sb);

	if (gb && gv_sweep_cgroup(&sb->drv->r->cg, gb->cg) == 1)
		return 1;
	/* A memory overrun meets the host's OOM killer, which kills the
	 * sentry: the whole sandbox ends, and runsc exits 1, not by SIGKILL. */
	if (sb->reason == RN_REASON_ERROR && sb->oom_kills > 0) {
		sb->reason = RN_REASON_OOM;
		snprintf(sb->error, sizeof(sb->error), "the sandbox went over its memory "
			 "limit (%lld MiB) and was killed", (long long)sb->spec.memory_mb);
	} else if (sb->reason == RN_REASON_ERROR && sb->status != RN_RUNNING &&
		   !strncmp(sb->error, "the agent exited", 16)) {
		gv_runsc_error(sb);
	}
	gv_remove_runsc_state(state_of(sb->drv), sb->id);
	unmount_all(sb->dir);
	rn_egress_detach(sb);
	if (gb)
		release_slot(state_of(sb->drv), gb);
	if (sbx_rmtree(sb->dir) < 0)
		return sbx_err_sys(err, "remove %s", sb->dir);
	free(gb);
	sb->drv_data = NULL;
	return 0;
}

static const char *gv_cgroup(const struct rn_sandbox *sb)
{
	return sb->drv_data ? sb_of(sb)->cg : NULL;
}

static long gv_oom_kills(struct rn_sandbox *sb)
{
	return sb->drv_data ? rn_cgroup_oom_kills(&sb->drv->r->cg, sb_of(sb)->cg) : -1;
}

/* The host pids cgroup is the backstop only: forks refused by the guest's
 * RLIMIT_NPROC happen inside gVisor and are not counted here. */
static long gv_pids_hits(struct rn_sandbox *sb)
{
	return sb->drv_data ? rn_cgroup_pids_hits(&sb->drv->r->cg, sb_of(sb)->cg) : -1;
}

/* ---- reconciliation after a crash ---- */

static void reap_one(struct rn_driver *d, const char *id)
{
	struct gv_state *gs = state_of(d);
	char path[RN_ID_MAX + 96];

	snprintf(path, sizeof(path), GV_CG_TOP "/gvisor_%s/%s", d->r->name, id);
	for (int i = 0; i < 400 && gv_sweep_cgroup(&d->r->cg, path) == 1; i++)
		usleep(5000);
	if (gv_sweep_cgroup(&d->r->cg, path) == 1)
		sbx_warn("cgroup %s is still busy after cleanup", path);
	if (gs)
		gv_remove_runsc_state(gs, id);
}

/* A lost allow-all sandbox's veth and its slot's firewall rules, unless
 * another runner holds the slot now: its network namespace was held by a
 * mount (unmount_all dropped it), so nothing else ends them soon. */
static void drop_net(struct rn_driver *d, int slot)
{
	struct gv_state *gs = state_of(d);

	if (slot < 0 || !gs || rn_slot_claim(&gs->slots, slot) < 0)
		return;
	rn_slot_unkeep(slot);
	rn_net_release(slot);
	rn_egress_drop_slot(slot);
	rn_slot_free(&gs->slots, slot);
}

static void gv_reconcile_dir(struct rn_driver *d, const char *id, const char *dir)
{
	int slot = rn_state_slot(dir);

	rn_state_kill(dir);
	reap_one(d, id);
	unmount_all(dir);
	drop_net(d, slot);
	if (sbx_rmtree(dir) < 0)
		sbx_warn("cannot remove %s: %s", dir, strerror(errno));
}

static void reap_cb(const char *id, void *arg)
{
	reap_one(arg, id);
}

/* What has no dir any more (a crash between the two): this runner's
 * cgroups below its parent, and runsc state in its --root. */
static void gv_reconcile(struct rn_driver *d)
{
	struct gv_state *gs = state_of(d);
	char parent[64], prefix[40];
	DIR *dir;
	struct dirent *e;

	snprintf(parent, sizeof(parent), GV_CG_TOP "/gvisor_%s", d->r->name);
	snprintf(prefix, sizeof(prefix), "sbx_%s_", d->r->name);
	rn_cgroup_each(&d->r->cg, parent, prefix, reap_cb, d);
	rn_cgroup_remove(&d->r->cg, parent, GV_CG_TOP);
	if (!gs || !(dir = opendir(gs->root)))
		return;
	while ((e = readdir(dir))) {
		char id[RN_ID_MAX], *u;

		if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 ||
		    strlen(e->d_name) >= sizeof(id))
			continue;
		strcpy(id, e->d_name);
		u = strchr(id + strlen(prefix), '_');
		if (!u)
			continue;
		*u = 0;
		gv_remove_runsc_state(gs, id);
	}
	closedir(dir);
}

/* ---- probe and init ---- */

static int run_capture(const char *cmd, char *out, size_t n)
{
	FILE *f = popen(cmd, "re");
	size_t got = 0;

	if (!f)
		return -1;
	while (got + 1 < n) {
		size_t k = fread(out + got, 1, n - 1 - got, f);
		if (k == 0)
			break;
		got += k;
	}
	out[got] = 0;
	return pclose(f);
}

static int find_runsc(char *out, size_t n, struct sbx_err *err)
{
	static const char *const dirs[] = { "/usr/bin", "/usr/sbin", "/usr/local/bin",
					    "/usr/local/sbin", NULL };
	const char *env = getenv("SANDBOX_RUNSC");

	if (env && *env) {
		if (env[0] != '/' || access(env, X_OK) < 0 || strchr(env, '\''))
			return sbx_err_set(err, ENOENT, "SANDBOX_RUNSC=%.200s is not an "
					   "executable absolute path", env);
		snprintf(out, n, "%s", env);
		return 0;
	}
	for (int i = 0; dirs[i]; i++) {
		snprintf(out, n, "%s/runsc", dirs[i]);
		if (access(out, X_OK) == 0)
			return 0;
	}
	return sbx_err_set(err, ENOENT, "runsc is not installed (mk/deps.sh installs it "
			   "from bookworm-backports)");
}

/* runsc present, new enough (the statx fix, systrap), root, cgroups. Its
 * version and platforms are asked once, at start-up. */
static int check_runsc(char *runsc, size_t n, long *version, struct sbx_err *err)
{
	char cmd[PATH_MAX + 64], out[4096];

	if (geteuid() != 0)
		return sbx_err_set(err, EPERM, "gvisor needs root (runsc places each "
				   "sandbox in its cgroups)");
	if (find_runsc(runsc, n, err) < 0)
		return -1;
	snprintf(cmd, sizeof(cmd), "'%s' --version 2>&1", runsc);
	if (run_capture(cmd, out, sizeof(out)) != 0)
		return sbx_err_set(err, ENOEXEC, "%s --version failed", runsc);
	*version = gv_parse_version(out);
	if (*version < GV_MIN_VERSION)
		return sbx_err_set(err, ENOTSUP, "runsc %ld is older than %ld (Debian 12's "
				   "own build breaks ls -l and has no systrap; mk/deps.sh "
				   "installs bookworm-backports' build)", *version, GV_MIN_VERSION);
	snprintf(cmd, sizeof(cmd), "'%s' help platforms 2>&1", runsc);
	if (run_capture(cmd, out, sizeof(out)) != 0 || !strstr(out, "systrap"))
		return sbx_err_set(err, ENOTSUP, "runsc %ld offers no systrap platform",
				   *version);
	return 0;
}

static int gv_probe(struct rn_driver *d, struct sbx_err *err)
{
	char runsc[PATH_MAX];
	long version;

	if (d->r->cg_error[0])
		return sbx_err_set(err, ENOTSUP, "cgroups: %s", d->r->cg_error);
	return check_runsc(runsc, sizeof(runsc), &version, err);
}

static int gv_init(struct rn_driver *d, struct sbx_err *err)
{
	struct runner *r = d->r;
	struct gv_state *gs = calloc(1, sizeof(*gs));

	if (!gs)
		return sbx_err_set(err, ENOMEM, "out of memory");
	if (check_runsc(gs->runsc, sizeof(gs->runsc), &gs->version, err) < 0)
		goto fail;
	if (snprintf(gs->root, sizeof(gs->root), "%s/gvisor", r->state_dir) >=
	    (int)sizeof(gs->root)) {
		sbx_err_set(err, ENAMETOOLONG, "state dir too long");
		goto fail;
	}
	if (mkdir(gs->root, 0700) < 0 && errno != EEXIST) {
		sbx_err_sys(err, "mkdir %s", gs->root);
		goto fail;
	}
	snprintf(gs->cg_parent, sizeof(gs->cg_parent), GV_CG_TOP "/gvisor_%s", r->name);
	/* The agent runtime (agent + libs + ld.so) is shared with the jail
	 * (rn_runtime.c); prepared here when the jail is not enabled on this
	 * runner. */
	if (rn_runtime_find_loader(r->runtime_dir, gs->loader, sizeof(gs->loader)) < 0 &&
	    rn_runtime_prepare(r->agent_path, r->runtime_dir, gs->loader,
			       sizeof(gs->loader), err) < 0)
		goto fail;
	d->data = gs;
	sbx_info("gvisor driver: %s (version %ld, systrap), state %s", gs->runsc,
		 gs->version, gs->root);
	{
		char w[PATH_MAX];

		if (gv_watch_path(w, sizeof(w)) < 0)
			sbx_warn("gvisor driver: no " GV_WATCH_EXE " beside the runner's binary: "
				 "the runner's own binary watches each sandbox (about 0.6 MiB "
				 "more per sandbox)");
	}
	return 0;
fail:
	free(gs);
	return -1;
}

/* ---- runsc commands ---- */

/* `runsc --root=R <op> [flags] ID [sig]`, waited for; its output in err
 * when it fails. flags and sig are the driver's own words, given to the
 * shell as they are (a path in them quoted). */
int gv_runsc_op(const struct rn_sandbox *sb, const char *op, const char *flag, const char *sig,
		struct sbx_err *err)
{
	const struct gv_state *gs = state_of(sb->drv);
	char cmd[PATH_MAX * 4 + 128], out[512];
	int st;

	snprintf(cmd, sizeof(cmd), "'%s' --root='%s' %s %s '%s' %s 2>&1", gs->runsc, gs->root,
		 op, flag ? flag : "--", sb->id, sig ? sig : "");
	st = run_capture(cmd, out, sizeof(out));
	if (st != 0) {
		/* the first line that says something (runsc ends a panic
		 * with a stack) */
		char *m = strstr(out, "checkpoint failed") ? strstr(out, "checkpoint failed") : out;

		m[strcspn(m, "\n")] = 0;
		return sbx_err_set(err, EIO, "runsc %s: %.300s", op, m[0] ? m : "failed");
	}
	return 0;
}

/* The root's upper dir (driver_gvisor_root.c), the sandbox stopped for
 * the copy by `runsc pause` unless it is paused already (a checkpointed
 * one has no process left: its files are as they were at the pause). */
static int gv_snapshot(struct rn_sandbox *sb, const char *dst, struct rn_layer_stats *st,
		       struct sbx_err *err)
{
	int was_paused = sb->status == RN_PAUSED, rc;
	struct sbx_err e2 = { 0, "" };

	if (!was_paused && gv_runsc_op(sb, "pause", NULL, NULL, err) < 0)
		return -1;
	rc = gv_root_copy(sb, dst, st, err);
	if (!was_paused && gv_runsc_op(sb, "resume", NULL, NULL, &e2) < 0) {
		/* it stays paused by runsc: said once here and to the caller
		 * (a stop still kills it) */
		sbx_err_log("%s: resume after the snapshot: %s", sb->id, e2.msg);
		if (rc == 0) {
			*err = e2;
			rc = -1;
		}
	}
	return rc;
}

const struct rn_driver_ops rn_driver_gvisor = {
	.name = "gvisor",
	.pause = gv_pause,
	.resume = gv_resume,
	.snapshot = gv_snapshot,
	/* a persistent sandbox is kept paused, its processes and memory
	 * with its files (a checkpoint on disk when deny-all) */
	.persist_paused = 1,
	.probe = gv_probe,
	.init = gv_init,
	.start = gv_start,
	.kill = gv_kill,
	.cleanup = gv_cleanup,
	.oom_kills = gv_oom_kills,
	.cgroup = gv_cgroup,
	.pids_hits = gv_pids_hits,
	.reconcile_dir = gv_reconcile_dir,
	.reconcile = gv_reconcile,
	.adopt = gv_adopt,
	/* no TCP path to the guest (--network=none): connect splices through
	 * the agent's forward, and previews with it */
	.open_port = NULL,
};
