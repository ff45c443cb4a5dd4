/* The jail driver (isolation "jail"): Linux namespaces, an overlay root,
 * cgroups, rlimits, no_new_privs, trimmed capabilities and seccomp
 * (docs/runner.md). This is its parent side: plan, clone, write the id
 * maps, join the cgroups, lend the child an id-mapped view of the image,
 * wait for the child's report; and kill, clean up and reconcile. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cJSON.h>

#include "driver_jail.h"
#include "driver_jail_port.h"
#include "driver_jail_refuse.h"
#include "driver_jail_seccomp.h"
#include "rn_cgroup.h"
#include "rn_child.h"
#include "rn_egress.h"
#include "rn_net.h"
#include "rn_runtime.h"
#include "rn_sandbox.h"
#include "rn_slot.h"
#include "rn_snap.h"
#include "rn_state.h"
#include "rn_warm.h"
#include "runner.h"
#include "sbx_log.h"
#include "sbx_fs.h"

#define CHILD_SETUP_TIMEOUT_MS 10000

#define JAIL_CG_PARENT "sandbox"   /* cgroups: sandbox/<id> */

/* The driver's state (rn_driver.data), made by jail_init. */
struct jail_state {
	char loader[64];            /* "" when the runtime is not prepared */
	char preload[RN_RUNTIME_PRELOAD_MAX];   /* rn_runtime.h; "" none */
	int idmap_warned;
	struct rn_slots slots;      /* uid ranges and veth addresses */
	/* the seccomp policy, built once: each child (a copy of the runner's
	 * memory) only loads it, where building it took milliseconds of
	 * every create */
	struct jail_seccomp_prog seccomp;
	int cap_last;               /* /proc/sys/kernel/cap_last_cap */
};

/* A sandbox's share (rn_sandbox.drv_data). */
struct jail_sb {
	int slot;
	char cg[RN_ID_MAX + 16];    /* its cgroup path */
};

static struct jail_state *state_of(const struct rn_driver *d)
{
	return d->data;
}

static struct jail_sb *sb_of(const struct rn_sandbox *sb)
{
	return sb->drv_data;
}

/* The names of the mount points of a snapshot's layers: l0 (top) ... */
static void layer_name(char *out, size_t n, int i)
{
	snprintf(out, n, "l%d", i);
}

static int make_dirs(const struct rn_sandbox *sb, uid_t base, int n_layers,
		     struct sbx_err *err)
{
	static const char *const subs[] = { "lower", "rw", "root", NULL };
	char p[PATH_MAX], opts[96], name[16];
	long long inodes = sb->spec.disk_mb * 256;

	/* sb->dir is the runner's (0700, made before start). Root of the sandbox (host uid base) walks these paths in the child. */
	if (chown(sb->dir, base, base) < 0)
		return sbx_err_sys(err, "chown %s", sb->dir);
	for (int i = 0; subs[i]; i++) {
		rn_state_path(p, sb, subs[i]);
		if (mkdir(p, 0755) < 0 || chown(p, base, base) < 0)
			return sbx_err_sys(err, "mkdir %s", p);
	}
	for (int i = 0; i < n_layers; i++) {
		layer_name(name, sizeof name, i);
		rn_state_path(p, sb, name);
		if (mkdir(p, 0755) < 0 || chown(p, base, base) < 0)
			return sbx_err_sys(err, "mkdir %s", p);
	}
	/* The writable layer: a tmpfs of disk_mb (it cannot fill the host
	 * disk), mounted here on the host side so that a snapshot can copy
	 * its upper dir while the sandbox is frozen; owned by the sandbox's
	 * root, who makes upper and work in it. */
	rn_state_path(p, sb, "rw");
	snprintf(opts, sizeof(opts), "size=%lldm,nr_inodes=%lld,mode=0755,uid=%u,gid=%u",
		 (long long)sb->spec.disk_mb, inodes < 16384 ? 16384 : inodes,
		 (unsigned)base, (unsigned)base);
	if (mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
		return sbx_err_sys(err, "mount tmpfs on %s", p);
	/* The agent's socket dir is writable by root inside and visible on the
	 * host: a dir on that same tmpfs (what is written there counts in
	 * disk_mb), not a tmpfs of its own. Every mount on the host is copied
	 * into each new sandbox's mount namespace and torn down with it, so
	 * each one a running sandbox holds makes every later create slower
	 * (docs/runner.md, "Measured here"). */
	rn_state_path(p, sb, JAIL_SOCK_SUBDIR);
	if (mkdir(p, 0755) < 0 || chown(p, base, base) < 0)
		return sbx_err_sys(err, "mkdir %s", p);
	return 0;
}

/* Bind the image at <dir>/lower, id-mapped into the sandbox's user
 * namespace so image files owned by root are root's inside (and copy-up
 * keeps their owners). The child copies this mount into its own
 * namespace; the parent detaches the host's copy once the child is done.
 * Without id-mapping support files show as nobody: warn once, go on. */
static int mount_lower(struct jail_state *js, const char *image, const char *at,
		       const struct rn_sandbox *sb, struct sbx_err *err)
{
	char lower[PATH_MAX], ns[64];
	struct mount_attr attr = { 0 };
	int tree, usern, rc;

	rn_state_path(lower, sb, at);
	tree = (int)syscall(SYS_open_tree, AT_FDCWD, image,
			    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (tree < 0)
		return sbx_err_sys(err, "open_tree %s", image);
	snprintf(ns, sizeof(ns), "/proc/%d/ns/user", (int)sb->pid);
	usern = open(ns, O_RDONLY | O_CLOEXEC);
	if (usern < 0) {
		close(tree);
		return sbx_err_sys(err, "open %s", ns);
	}
	attr.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
			MOUNT_ATTR_NODEV;
	attr.userns_fd = (unsigned long long)usern;
	rc = (int)syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE,
			  &attr, sizeof(attr));
	if (rc < 0) {
		if (!js->idmap_warned++)
			sbx_warn("id-mapped mount of %s failed (%s): image files will show "
				 "as nobody inside", image, strerror(errno));
		attr.attr_set &= ~(unsigned long long)MOUNT_ATTR_IDMAP;
		rc = (int)syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE,
				  &attr, sizeof(attr));
	}
	close(usern);
	if (rc < 0) {
		close(tree);
		return sbx_err_sys(err, "mount_setattr %s", image);
	}
	rc = (int)syscall(SYS_move_mount, tree, "", AT_FDCWD, lower, MOVE_MOUNT_F_EMPTY_PATH);
	close(tree);
	if (rc < 0)
		return sbx_err_sys(err, "move_mount %s to %s", image, lower);
	return 0;
}

static void unmount_at(const struct rn_sandbox *sb, const char *name)
{
	char p[PATH_MAX];

	rn_state_path(p, sb, name);
	for (int i = 0; i < 8 && umount2(p, MNT_DETACH) == 0; i++)
		;
}

/* The image and the snapshot layers lent to the child (gone right after
 * setup: the child holds its own copies). */
static void unmount_lower(const struct rn_sandbox *sb)
{
	char name[16];

	unmount_at(sb, "lower");
	for (int i = 0; i < RN_SNAP_DEPTH_MAX; i++) {
		layer_name(name, sizeof name, i);
		unmount_at(sb, name);
	}
}

/* Every host-side mount of a sandbox: the lowers and the writable
 * layer's tmpfs (and the socket tmpfs of a sandbox an older runner made). */
static void unmount_all(const struct rn_sandbox *sb)
{
	unmount_lower(sb);
	unmount_at(sb, "rw");
	unmount_at(sb, "sock");
}

static int write_maps(pid_t pid, uid_t base, struct sbx_err *err)
{
	char path[64], map[64];

	snprintf(map, sizeof(map), "0 %u %u\n", base, JAIL_UID_COUNT);
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	if (sbx_write_file(path, map, 0, 0) < 0)
		return sbx_err_sys(err, "write %s", path);
	snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
	if (sbx_write_file(path, map, 0, 0) < 0)
		return sbx_err_sys(err, "write %s", path);
	return 0;
}

/* Sets the effective uid and gid (only those: real and saved stay 0, so
 * own_userns_as(0) always works) around the clone that makes a sandbox's
 * user namespace. A user namespace is owned by the euid of its creator,
 * and the kernel charges per-user counters (inotify instances and watches,
 * RLIMIT_NPROC, mqueue bytes, pending signals: the "ucounts") to every
 * level up to the host, as the owner of each namespace. Owned by root,
 * all sandboxes shared root's host budget (fs.inotify.max_user_instances
 * is 128 here, host services included): one sandbox could take it all
 * (security probe 52). Owned by the sandbox's own base uid, each sandbox
 * has its own. Root keeps its capabilities over the namespace (it holds
 * them in the parent namespace). */
static int own_userns_as(uid_t id, struct sbx_err *err)
{
	if (id == 0)     /* uid first: changing the gid back needs CAP_SETGID */
		return setresuid((uid_t)-1, 0, (uid_t)-1) < 0 ||
		       setresgid((gid_t)-1, 0, (gid_t)-1) < 0 ? -1 : 0;
	if (setresgid((gid_t)-1, (gid_t)id, (gid_t)-1) < 0)
		return sbx_err_sys(err, "setresgid for the user namespace owner");
	if (setresuid((uid_t)-1, id, (uid_t)-1) < 0) {
		int e = errno;

		/* cannot fail (euid is still 0); a runner that went on with
		 * the sandbox's gid would be wrong everywhere: stop */
		if (setresgid((gid_t)-1, 0, (gid_t)-1) < 0)
			abort();
		errno = e;
		return sbx_err_sys(err, "setresuid for the user namespace owner");
	}
	return 0;
}

/* The child's next message on the setup channel: 1 its network
 * namespace byte, 0 EOF (the channel is close-on-exec: it exec'd the
 * agent), -1 with err set to its failure report or to why none came. */
static int read_child(int fd, struct sbx_err *err)
{
	struct pollfd pfd = { fd, POLLIN, 0 };
	struct jail_sync_msg m;
	ssize_t n;
	int r = poll(&pfd, 1, CHILD_SETUP_TIMEOUT_MS);

	if (r == 0)
		return sbx_err_set(err, ETIMEDOUT, "sandbox setup took over %d ms",
				   CHILD_SETUP_TIMEOUT_MS);
	if (r < 0)
		return sbx_err_sys(err, "poll the setup channel");
	n = recv(fd, &m, sizeof(m), 0);
	if (n == 0)
		return 0;
	if (n == 1 && !memcmp(&m, JAIL_SYNC_NETNS, 1))
		return 1;
	if (n != (ssize_t)sizeof(m))
		return sbx_err_set(err, EPROTO, "sandbox setup died without a report");
	m.msg[sizeof(m.msg) - 1] = 0;
	return sbx_err_set(err, m.err ? m.err : EIO, "sandbox setup: %s", m.msg);
}

/* The child made its network namespace: from here /proc/<pid>/ns/net is
 * the sandbox's, not the host's. */
static int wait_netns(int fd, struct sbx_err *err)
{
	int rc = read_child(fd, err);

	if (rc == 0)
		return sbx_err_set(err, EPROTO, "sandbox setup ended before its network namespace");
	return rc < 0 ? -1 : 0;
}

/* Wait for the child's verdict: EOF means it exec'd the agent. */
static int wait_child(int fd, struct sbx_err *err)
{
	int rc = read_child(fd, err);

	if (rc == 1)
		return sbx_err_set(err, EPROTO, "sandbox setup sent its network namespace twice");
	return rc;
}

/* One start: the image, the child's plan, the sandbox's uid range and the
 * setup channel (sv[0] the parent's end, sv[1] the child's). */
struct jail_launch {
	char image[PATH_MAX + 64];
	char layers[RN_SNAP_DEPTH_MAX][4096];   /* a snapshot's, top first */
	int n_layers;
	struct jail_plan plan;
	uid_t base;                 /* host uid of the sandbox's root */
	int sv[2];
	int up[2];                  /* the agent's ready pipe (up[1] its --ready-fd), or -1 */
	int report_fd;              /* a warmer's report pipe (rn_warm.h), or -1 */
	int make_dir;               /* sb->dir is ours to make (a warm one's warmer made it) */
};

/* The image and the agent runtime, or why this runner cannot start it. */
static int check_runtime(const struct jail_state *js, const struct rn_sandbox *sb,
			 struct jail_launch *l, struct sbx_err *err)
{
	struct runner *r = sb->drv->r;

	if (rn_runtime_image(r, sb->spec.image, l->image, sizeof(l->image), err) < 0 ||
	    rn_runtime_ready(r, js->loader, err) < 0)
		return -1;
	if (sb->spec.snapshot[0]) {
		l->n_layers = rn_snap_layers(r, sb->spec.snapshot, l->layers, RN_SNAP_DEPTH_MAX, err);
		if (l->n_layers < 0)
			return -1;
	}
	return 0;
}

/* The sandbox's drv_data: its slot (its uid range and veth addresses) and
 * its cgroup's name. */
static int take_slot(struct jail_state *js, struct rn_sandbox *sb, struct sbx_err *err)
{
	struct jail_sb *jb = calloc(1, sizeof(*jb));

	if (!jb)
		return sbx_err_set(err, ENOMEM, "out of memory");
	jb->slot = rn_slot_alloc(&js->slots);
	if (jb->slot < 0) {
		free(jb);
		return sbx_err_set(err, EAGAIN, "no free uid range on this host (%d in use)",
				   RN_MAX_SLOTS);
	}
	snprintf(jb->cg, sizeof(jb->cg), JAIL_CG_PARENT "/%s", sb->id);
	sb->drv_data = jb;
	return 0;
}

/* What the child builds the sandbox from (it reads its copy of l). */
static void plan_launch(struct jail_launch *l, const struct jail_state *js,
			const struct rn_sandbox *sb)
{
	struct jail_plan *plan = &l->plan;

	l->base = JAIL_UID_BASE + (uid_t)sb_of(sb)->slot * JAIL_UID_COUNT;
	snprintf(plan->dir, sizeof(plan->dir), "%s", sb->dir);
	rn_state_path(plan->lower, sb, "lower");
	plan->lowerdir[0] = 0;
	for (int i = 0; i < l->n_layers; i++) {
		size_t k = strlen(plan->lowerdir);
		snprintf(plan->lowerdir + k, sizeof(plan->lowerdir) - k, "l%d:", i);
	}
	strcat(plan->lowerdir, "lower");
	rn_state_path(plan->rw, sb, "rw");
	rn_state_path(plan->root, sb, "root");
	rn_state_path(plan->sockdir, sb, JAIL_SOCK_SUBDIR);
	plan->runtime_dir = sb->drv->r->runtime_dir;
	plan->loader = js->loader;
	plan->preload = js->preload;
	plan->spec = &sb->spec;
	plan->slot = sb_of(sb)->slot;
	plan->agent_stderr = sb->drv->agent_stderr;
	plan->seccomp = &js->seccomp;
	plan->cap_last = js->cap_last;
}

/* The setup channel, and for a start in the runner itself the pipe the
 * agent closes once it listens (a warmer's sandbox is not waited for:
 * the runner's timer finds it ready). */
static int open_channel(struct jail_launch *l, struct sbx_err *err)
{
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, l->sv) < 0)
		return sbx_err_sys(err, "socketpair");
	if (l->report_fd < 0 && pipe2(l->up, O_CLOEXEC) < 0)
		return sbx_err_sys(err, "pipe");
	l->plan.ready_fd = l->up[1];
	return 0;
}

/* The child, in its new user, pid, ipc and uts namespaces: sb->pid from
 * here on. A raw clone behaves like fork: no stack to allocate, and the
 * child is PID 1 of its new pid namespace. The child makes its network
 * namespace itself while the parent prepares (wait_netns); mount and
 * cgroup namespaces come later, once the parent has set up the child's
 * cgroup and image. */
static int clone_child(struct jail_launch *l, struct rn_sandbox *sb, struct sbx_err *err)
{
	pid_t pid;

	/* a warmer (rn_warm.h) makes the child the runner's own, as if the
	 * runner had cloned it: the runner reaps it and its exit is the
	 * sandbox's, the warmer being gone by then */
	unsigned long parent = l->report_fd >= 0 ? CLONE_PARENT : 0;

	if (own_userns_as(l->base, err) < 0)
		return -1;
	pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWIPC |
			     CLONE_NEWUTS | parent | SIGCHLD, NULL, NULL, NULL, 0);
	if (pid != 0) {
		int ce = errno;

		/* cannot fail (the real and saved uid are 0); a runner that
		 * went on as uid base would be wrong everywhere: stop */
		if (own_userns_as(0, NULL) < 0)
			abort();
		errno = ce;
	}
	if (pid < 0)
		return sbx_err_sys(err, "clone");
	if (pid == 0) {
		close(l->sv[0]);
		if (l->up[0] >= 0)
			close(l->up[0]);
		jail_child_run(&l->plan, l->sv[1]);
	}
	close(l->sv[1]);
	l->sv[1] = -1;
	if (l->up[1] >= 0) {
		close(l->up[1]);
		l->up[1] = -1;
	}
	sb->pid = pid;
	/* the runner learns the pid before the child can do anything (it
	 * waits for go): a child that dies from here on is one it knows */
	if (l->report_fd >= 0 && rn_warm_report(l->report_fd, RN_WARM_CLONED, pid, NULL) < 0)
		return sbx_err_sys(err, "report the warm sandbox's pid");
	return 0;
}

/* What the child waits for before its first step: its state on disk, its
 * id maps, and the image lent to it. */
static int prepare_child(struct jail_state *js, struct jail_launch *l,
			 const struct rn_sandbox *sb, struct sbx_err *err)
{
	char name[16];

	if (rn_state_save(sb, "jail", sb_of(sb)->slot, err) < 0 ||
	    write_maps(sb->pid, l->base, err) < 0 || mount_lower(js, l->image, "lower", sb, err) < 0)
		return -1;
	for (int i = 0; i < l->n_layers; i++) {
		layer_name(name, sizeof name, i);
		if (mount_lower(js, l->layers[i], name, sb, err) < 0)
			return -1;
	}
	return 0;
}

static int send_go(const struct jail_launch *l, struct sbx_err *err)
{
	const char go = 'g';

	if (send(l->sv[0], &go, 1, MSG_NOSIGNAL) != 1)
		return sbx_err_sys(err, "start the sandbox child");
	return 0;
}

/* The sandbox's lo, up with RN_LINK_SEGMENT (rn_child.h), made by the
 * parent while the child builds its mounts: its rtnetlink round trip is
 * off the child's path. */
static int loopback_up(const struct rn_sandbox *sb, struct sbx_err *err)
{
	int s = jail_netns_socket(sb, AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE, err);
	int rc;

	if (s < 0)
		return -1;
	rc = rn_loopback_up(s, RN_LINK_SEGMENT, err);
	close(s);
	return rc;
}

/* First byte: the child builds its mounts (about a millisecond), and
 * meanwhile the parent makes its cgroups and moves it in (a v1 memory
 * cgroup move may wait for an RCU grace period), then, once the child's
 * network namespace exists, its network. The child waits for the second
 * byte before it enters its cgroup namespace and long before it runs
 * anything of the user's; then its report. */
static int run_child_setup(struct jail_launch *l, struct rn_sandbox *sb, struct sbx_err *err)
{
	struct runner *r = sb->drv->r;

	if (send_go(l, err) < 0 ||
	    rn_cgroup_create(&r->cg, sb_of(sb)->cg, &sb->spec, err) < 0 ||
	    rn_cgroup_attach(&r->cg, sb_of(sb)->cg, sb->pid, err) < 0)
		return -1;
	if (wait_netns(l->sv[0], err) < 0 || loopback_up(sb, err) < 0)
		return -1;
	if (sb->spec.network != RN_NET_DENY_ALL &&
	    (rn_net_allow_all(sb->pid, sb_of(sb)->slot, err) < 0 ||
	     rn_egress_attach(sb, sb_of(sb)->slot, err) < 0))
		return -1;
	if (send_go(l, err) < 0 || wait_child(l->sv[0], err) < 0)
		return -1;
	return 0;
}

/* A start that failed part way: nothing of it stays. */
static void undo_start(struct jail_state *js, struct rn_sandbox *sb, struct jail_launch *l)
{
	struct runner *r = sb->drv->r;
	struct jail_sb *jb = sb_of(sb);
	int st;

	if (l->sv[0] >= 0)
		close(l->sv[0]);
	if (l->sv[1] >= 0)
		close(l->sv[1]);
	for (int i = 0; i < 2; i++)
		if (l->up[i] >= 0)
			close(l->up[i]);
	if (sb->pid > 0) {
		kill(sb->pid, SIGKILL);
		while (waitpid(sb->pid, &st, 0) < 0 && errno == EINTR)
			;
		sb->pid = 0;
	}
	rn_cgroup_kill(&r->cg, jb->cg);
	unmount_all(sb);
	for (int i = 0; i < 100 && rn_cgroup_remove(&r->cg, jb->cg, NULL) == 1; i++)
		usleep(1000);
	if (sb->dir_made)
		sbx_rmtree(sb->dir);
	rn_egress_detach(sb);
	if (sb->spec.network != RN_NET_DENY_ALL)
		rn_net_release(jb->slot);
	rn_slot_free(&js->slots, jb->slot);
	free(jb);
	sb->drv_data = NULL;
}

/* Everything of a start after the slot is taken (sb->drv_data). */
static int launch(struct jail_state *js, struct jail_launch *l, struct rn_sandbox *sb,
		  struct sbx_err *err)
{
	plan_launch(l, js, sb);
	sb->pid = 0;
	/* the clone first: the child makes its network namespace while the
	 * parent makes its dirs (it walks them only after the first go). A
	 * runner that dies before the dir is marked leaves only the child,
	 * which ends at its channel's EOF. */
	if (open_channel(l, err) < 0 || clone_child(l, sb, err) < 0 ||
	    (l->make_dir && rn_sandbox_make_dir(sb, err) < 0) ||
	    make_dirs(sb, l->base, l->n_layers, err) < 0 || prepare_child(js, l, sb, err) < 0 ||
	    run_child_setup(l, sb, err) < 0) {
		undo_start(js, sb, l);
		return -1;
	}
	close(l->sv[0]);
	unmount_lower(sb);
	rn_state_path(sb->agent_socket, sb, JAIL_SOCK_SUBDIR "/agent.sock");
	if (l->up[0] >= 0)
		rn_sandbox_watch_ready(sb, l->up[0]);
	return 0;
}

int jail_warm_reserve(struct rn_sandbox *sb, struct sbx_err *err)
{
	return take_slot(state_of(sb->drv), sb, err);
}

int jail_warm_launch(struct rn_sandbox *sb, int report_fd, struct sbx_err *err)
{
	struct jail_state *js = state_of(sb->drv);
	struct jail_launch l = { .sv = { -1, -1 }, .up = { -1, -1 }, .report_fd = report_fd };

	if (check_runtime(js, sb, &l, err) < 0)
		return -1;
	return launch(js, &l, sb, err);
}

/* The cgroup limits a take asks for that differ from the pool's (vcpus:
 * memory_mb must match, the child wrote it into the sandbox's
 * /proc/meminfo), rewritten in place. (The rlimits the child set, nofile
 * and nproc, stay too: raising another process's hard limit needs
 * CAP_SYS_RESOURCE, which a runner in a container may lack.) */
int jail_warm_apply(struct rn_sandbox *sb, const struct rn_spec *spec, struct sbx_err *err)
{
	const struct rn_spec *was = &sb->spec;

	if (spec->memory_mb == was->memory_mb && spec->vcpus == was->vcpus)
		return 0;
	return rn_cgroup_set_limits(&sb->drv->r->cg, sb_of(sb)->cg, spec, err);
}

int jail_warm_state(const struct rn_sandbox *sb, struct sbx_err *err)
{
	return rn_state_save(sb, "jail", sb_of(sb)->slot, err);
}

static int jail_start(struct rn_sandbox *sb, struct sbx_err *err)
{
	struct jail_state *js = state_of(sb->drv);
	struct jail_launch l = { .sv = { -1, -1 }, .up = { -1, -1 }, .report_fd = -1,
				 .make_dir = 1 };

	if (check_runtime(js, sb, &l, err) < 0 || take_slot(js, sb, err) < 0)
		return -1;
	return launch(js, &l, sb, err);
}

static void jail_kill(struct rn_sandbox *sb)
{
	/* SIGKILL of PID 1 ends the whole pid namespace; the cgroup sweep is
	 * for anything that escaped it (there should be nothing). */
	if (sb->pid > 0 && !sb->reaped)
		kill(sb->pid, SIGKILL);
	rn_cgroup_kill(&sb->drv->r->cg, sb_of(sb)->cg);
}

static int jail_cleanup(struct rn_sandbox *sb, struct sbx_err *err)
{
	const struct rn_cgroup *cg = &sb->drv->r->cg;
	struct jail_sb *jb = sb_of(sb);

	rn_cgroup_kill(cg, jb->cg);
	if (rn_cgroup_remove(cg, jb->cg, NULL) == 1)
		return 1;
	unmount_all(sb);
	if (sbx_rmtree(sb->dir) < 0)
		return sbx_err_sys(err, "remove %s", sb->dir);
	/* the uid range is free only once nothing of the sandbox is left;
	 * its veth would go with its netns, but the kernel removes a dead
	 * netns later, in its own time: stop removes it now */
	rn_egress_detach(sb);
	if (sb->spec.network != RN_NET_DENY_ALL)
		rn_net_release(jb->slot);
	rn_slot_free(&state_of(sb->drv)->slots, jb->slot);
	free(jb);
	sb->drv_data = NULL;
	return 0;
}

const char *jail_cgroup(const struct rn_sandbox *sb)
{
	return sb->drv_data ? sb_of(sb)->cg : NULL;
}

uid_t jail_uid_base(const struct rn_sandbox *sb)
{
	return JAIL_UID_BASE + (uid_t)sb_of(sb)->slot * JAIL_UID_COUNT;
}

static long jail_oom_kills(struct rn_sandbox *sb)
{
	return sb->drv_data ? rn_cgroup_oom_kills(&sb->drv->r->cg, sb_of(sb)->cg) : -1;
}

static long jail_pids_hits(struct rn_sandbox *sb)
{
	return sb->drv_data ? rn_cgroup_pids_hits(&sb->drv->r->cg, sb_of(sb)->cg) : -1;
}

/* ---- reconciliation after a crash ---- */

static void reap_cgroup(const struct rn_cgroup *cg, const char *id)
{
	char path[RN_ID_MAX + 16];

	snprintf(path, sizeof(path), JAIL_CG_PARENT "/%s", id);
	rn_cgroup_kill(cg, path);
	for (int i = 0; i < 400 && rn_cgroup_remove(cg, path, NULL) == 1; i++) {
		usleep(5000);
		rn_cgroup_kill(cg, path);
	}
	if (rn_cgroup_remove(cg, path, NULL) == 1)
		sbx_warn("cgroup of %s is still busy after cleanup", id);
}

static void jail_reconcile_dir(struct rn_driver *d, const char *id, const char *dir)
{
	struct rn_sandbox tmp;

	memset(&tmp, 0, sizeof(tmp));
	snprintf(tmp.id, sizeof(tmp.id), "%s", id);
	snprintf(tmp.dir, sizeof(tmp.dir), "%s", dir);
	{
		/* a paused sandbox: a frozen process takes no SIGKILL */
		char cgp[RN_ID_MAX + 16];
		snprintf(cgp, sizeof(cgp), JAIL_CG_PARENT "/%s", id);
		rn_cgroup_freeze(&d->r->cg, cgp, 0, NULL);
	}
	rn_state_kill(dir);
	reap_cgroup(&d->r->cg, id);
	unmount_all(&tmp);
	if (sbx_rmtree(dir) < 0)
		sbx_warn("cannot remove %s: %s", dir, strerror(errno));
}

static void reap_cgroup_cb(const char *id, void *arg)
{
	reap_cgroup(arg, id);
}

/* cgroups whose state dir is gone (a crash between the two); only this
 * runner's: another runner may share the host */
static void jail_reconcile(struct rn_driver *d)
{
	char prefix[40];

	snprintf(prefix, sizeof(prefix), "sbx_%s_", d->r->name);
	rn_cgroup_each(&d->r->cg, JAIL_CG_PARENT, prefix, reap_cgroup_cb, &d->r->cg);
}

static int jail_probe(struct rn_driver *d, struct sbx_err *err)
{
	if (geteuid() != 0)
		return sbx_err_set(err, EPERM, "the jail driver needs root (it maps each "
				   "sandbox to its own unprivileged uid range)");
	if (d->r->cg_error[0])
		return sbx_err_set(err, ENOTSUP, "cgroups: %s", d->r->cg_error);
	if (access("/proc/self/ns/user", F_OK) < 0)
		return sbx_err_set(err, ENOTSUP, "the kernel has no user namespaces");
	return 0;
}

/* The highest capability this kernel knows (each child drops every one
 * but its keep list from its bounding set): read once here, not in each
 * child. */
static int read_cap_last(void)
{
	char buf[16];
	long v;

	if (sbx_read_file("/proc/sys/kernel/cap_last_cap", buf, sizeof(buf)) <= 0)
		return CAP_LAST_CAP;
	v = strtol(buf, NULL, 10);
	return v > 0 && v < 64 ? (int)v : CAP_LAST_CAP;
}

static int jail_init(struct rn_driver *d, struct sbx_err *err)
{
	struct runner *r = d->r;
	struct jail_state *js = calloc(1, sizeof(*js));

	if (!js)
		return sbx_err_set(err, ENOMEM, "out of memory");
	/* Without the agent no jail can start: the driver is unavailable
	 * (capabilities and create say why); the runner still serves
	 * get/list/stop and the other drivers. */
	if (rn_runtime_prepare(r->agent_path, r->runtime_dir, js->loader,
			       sizeof(js->loader), err) < 0 ||
	    jail_seccomp_compile(&js->seccomp, 0, err) < 0) {
		free(js);
		return -1;
	}
	(void)rn_runtime_preload(r->runtime_dir, js->preload, sizeof(js->preload));
	js->cap_last = read_cap_last();
	d->data = js;
	sbx_info("jail driver: cgroup %s, agent %s", r->cg.name, r->agent_path);
	return 0;
}

const struct rn_driver_ops rn_driver_jail = {
	.name = "jail",
	.probe = jail_probe,
	.init = jail_init,
	.start = jail_start,
	.kill = jail_kill,
	.cleanup = jail_cleanup,
	.oom_kills = jail_oom_kills,
	.cgroup = jail_cgroup,
	.pids_hits = jail_pids_hits,
	.reconcile_dir = jail_reconcile_dir,
	.reconcile = jail_reconcile,
	.open_port = jail_open_port,
	.refuse_connections = jail_refuse_connections,
	.pause = jail_pause_op,
	.resume = jail_resume_op,
	.snapshot = jail_snapshot,
	.makes_dir = 1,
};
