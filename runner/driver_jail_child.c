/* The child side of the jail: runs inside the new user, pid, net, ipc and
 * uts namespaces (PID 1 there), builds the root filesystem in its own mount
 * namespace and execs the agent. Each step reports its failure to the
 * parent through the sync channel, so an error names the step. */
#include "driver_jail.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "driver_jail_seccomp.h"
#include "rn_child.h"
#include "rn_egress_trust.h"
#include "rn_net.h"
#include "rn_runtime.h"
#include "sbx_fs.h"

static int sync_fd = -1;

static void __attribute__((noreturn, format(printf, 2, 3)))
fail(int e, const char *fmt, ...)
{
	struct jail_sync_msg m = { .err = e };
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(m.msg, sizeof(m.msg), fmt, ap);
	va_end(ap);
	n = strlen(m.msg);
	if (e && n + 3 < sizeof(m.msg))
		snprintf(m.msg + n, sizeof(m.msg) - n, ": %s", strerror(e));
	if (write(sync_fd, &m, sizeof(m)) < 0) {
		/* the parent is gone; nothing left to tell */
	}
	_exit(127);
}

#define CHECK(expr, ...) do { if ((expr) < 0) fail(errno, __VA_ARGS__); } while (0)

static void write_text(const char *path, const char *text, mode_t mode)
{
	/* The image's file (maybe a symlink) gives way to ours. */
	if (unlink(path) < 0 && errno != ENOENT)
		fail(errno, "unlink %s", path);
	if (sbx_write_file(path, text, O_CREAT | O_EXCL | O_NOFOLLOW, mode) < 0)
		fail(errno, "create %s", path);
}

static void mkdir_p(const char *path, mode_t mode)
{
	if (sbx_mkdir_p(path, 0755, mode) < 0)
		fail(errno, "mkdir %s", path);
}

/* A read-only remount of a bind must repeat the flags the kernel locked
 * on it in our user namespace (nosuid, nodev, noexec, atime), or EPERM. */
static unsigned long locked_flags(const char *path)
{
	struct statvfs sv;
	unsigned long f = 0;

	if (statvfs(path, &sv) < 0)
		return 0;
	if (sv.f_flag & ST_NOSUID) f |= MS_NOSUID;
	if (sv.f_flag & ST_NODEV) f |= MS_NODEV;
	if (sv.f_flag & ST_NOEXEC) f |= MS_NOEXEC;
	if (sv.f_flag & ST_NOATIME) f |= MS_NOATIME;
	if (sv.f_flag & ST_NODIRATIME) f |= MS_NODIRATIME;
	if (sv.f_flag & ST_RELATIME) f |= MS_RELATIME;
	return f;
}

static void bind_ro(const char *src, const char *dst, unsigned long extra)
{
	CHECK(mount(src, dst, NULL, MS_BIND | MS_REC, NULL), "bind %s on %s", src, dst);
	CHECK(mount(NULL, dst, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | extra |
		    locked_flags(dst), NULL), "remount %s read-only", dst);
}

static void setup_rootfs(const struct jail_plan *p)
{
	char opts[PATH_MAX * 3 + 64];

	/* The writable layer lives on a tmpfs of disk_mb that the parent
	 * mounted at rw (the host sees it: a snapshot copies it from there):
	 * it cannot fill the host disk. Relative paths from the sandbox's dir:
	 * the overlay's options show in the sandbox's /proc/mounts, and need
	 * not reveal the host's layout. */
	CHECK(chdir(p->dir), "chdir to the sandbox dir");
	CHECK(mkdir("rw/upper", 0755), "mkdir upper");
	CHECK(mkdir("rw/work", 0755), "mkdir work");
	/* userxattr: trusted.* xattrs are out of reach in a user namespace.
	 * lowerdirs: a snapshot's layers (l0 on top) over the image. */
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=rw/upper,workdir=rw/work,userxattr",
		 p->lowerdir);
	CHECK(mount("overlay", "root", "overlay", MS_NOSUID | MS_NODEV, opts),
	      "mount overlay root");
	CHECK(chdir(p->root), "chdir to the new root");
}

static const char *const proc_ro[] = {
	/* proc/bus is masked instead (driver_jail_mask.c) */
	"proc/sys", "proc/irq", "proc/fs", NULL
};

static void setup_proc(const struct jail_plan *p)
{
	int fd;

	mkdir_p("proc", 0555);
	CHECK(mount("proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL),
	      "mount /proc");
	/* No user namespaces inside (belt and braces with seccomp), before
	 * /proc/sys turns read-only. Best effort: older kernels refuse. */
	fd = open("proc/sys/user/max_user_namespaces", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "0", 1) < 0) { /* best effort */ }
		close(fd);
	}
	/* Host-wide files covered (jail_mask.c); Docker's ReadonlyPaths. */
	{
		struct sbx_err err = { 0, "" };
		if (jail_mask_proc(p, &err) < 0)
			fail(0, "%s", err.msg);   /* the message has the errno */
	}
	for (int i = 0; proc_ro[i]; i++)
		if (access(proc_ro[i], F_OK) == 0)
			bind_ro(proc_ro[i], proc_ro[i], MS_NOSUID | MS_NODEV | MS_NOEXEC);
}

static void setup_dev(void)
{
	static const char *const nodes[] = { "null", "zero", "full", "random",
					     "urandom", "tty", NULL };
	char src[64], dst[64];
	int fd;

	mkdir_p("dev", 0755);
	CHECK(mount("tmpfs", "dev", "tmpfs", MS_NOSUID | MS_NOEXEC,
		    "size=64k,nr_inodes=64,mode=0755"), "mount /dev");
	/* mknod is refused in a user namespace: bind the host's nodes. */
	for (int i = 0; nodes[i]; i++) {
		snprintf(src, sizeof(src), "/dev/%s", nodes[i]);
		snprintf(dst, sizeof(dst), "dev/%s", nodes[i]);
		fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0)
			fail(errno, "create %s", dst);
		close(fd);
		CHECK(mount(src, dst, NULL, MS_BIND, NULL), "bind %s", src);
	}
	mkdir_p("dev/pts", 0755);
	CHECK(mount("devpts", "dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
		    "newinstance,ptmxmode=0666,mode=0620,gid=5"), "mount devpts");
	CHECK(symlink("pts/ptmx", "dev/ptmx"), "symlink /dev/ptmx");
	mkdir_p("dev/shm", 01777);
	CHECK(mount("tmpfs", "dev/shm", "tmpfs", MS_NOSUID | MS_NODEV,
		    "size=64m,mode=1777"), "mount /dev/shm");
	CHECK(symlink("/proc/self/fd", "dev/fd"), "symlink /dev/fd");
	CHECK(symlink("/proc/self/fd/0", "dev/stdin"), "symlink /dev/stdin");
	CHECK(symlink("/proc/self/fd/1", "dev/stdout"), "symlink /dev/stdout");
	CHECK(symlink("/proc/self/fd/2", "dev/stderr"), "symlink /dev/stderr");
}

static void setup_files(const struct jail_plan *p)
{
	mkdir_p("tmp", 01777);
	CHECK(chmod("tmp", 01777), "chmod /tmp");
	mkdir_p("home/sandbox", 0755);
	CHECK(chown("home/sandbox", JAIL_SANDBOX_UID, JAIL_SANDBOX_UID), "chown /home/sandbox");
	mkdir_p("etc", 0755);
	write_text("etc/passwd",
		   "root:x:0:0:root:/root:/bin/bash\n"
		   "sandbox:x:1000:1000:sandbox:/home/sandbox:/bin/bash\n"
		   "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n", 0644);
	write_text("etc/group",
		   "root:x:0:\ntty:x:5:\nsandbox:x:1000:\nnogroup:x:65534:\n", 0644);
	write_text("etc/hosts",
		   "127.0.0.1\tlocalhost sandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n",
		   0644);
	write_text("etc/hostname", "sandbox\n", 0644);
	/* the runner's resolver on the gateway, whatever the policy (rn_dns.c) */
	char resolv[96];
	rn_net_resolv_conf(p->spec->network, p->slot, resolv, sizeof(resolv));
	write_text("etc/resolv.conf", resolv, 0644);
	/* a sandbox with a network trusts the runner's egress CA (the names
	 * its policy's rules decrypt). An image whose /etc/ssl/certs is a
	 * symlink (Fedora's) is left as it is: its clients then refuse the
	 * decrypted names, which is where a failure belongs, not the create. */
	if (p->spec->network != RN_NET_DENY_ALL)
		(void)rn_egress_trust_install(AT_FDCWD);

	mkdir_p(RN_RUNTIME_MOUNT + 1, 0755);
	bind_ro(p->runtime_dir, RN_RUNTIME_MOUNT + 1, MS_NOSUID | MS_NODEV);
	mkdir_p(JAIL_AGENT_SOCK_DIR + 1, 0755);
	CHECK(mount(p->sockdir, JAIL_AGENT_SOCK_DIR + 1, NULL, MS_BIND, NULL),
	      "bind the agent socket dir");
	CHECK(mount(NULL, JAIL_AGENT_SOCK_DIR + 1, NULL, MS_BIND | MS_REMOUNT | MS_NOSUID |
		    MS_NODEV | MS_NOEXEC | locked_flags(JAIL_AGENT_SOCK_DIR + 1), NULL),
	      "remount the agent socket dir");
}

/* Docker's default capability set minus MKNOD and NET_RAW: what the agent
 * (root in the sandbox) needs to switch users, own files and bind low
 * ports. Commands as uid 1000 lose all of them on setuid. */
static const int keep_caps[] = {
	CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_FSETID, CAP_KILL, CAP_SETGID,
	CAP_SETUID, CAP_SETPCAP, CAP_NET_BIND_SERVICE, CAP_SYS_CHROOT,
	CAP_AUDIT_WRITE, CAP_SETFCAP, -1
};

static void trim_caps(int last)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	for (int i = 0; keep_caps[i] >= 0; i++) {
		d[keep_caps[i] / 32].effective |= 1u << (keep_caps[i] % 32);
		d[keep_caps[i] / 32].permitted |= 1u << (keep_caps[i] % 32);
	}
	for (int c = 0; c <= last; c++) {
		if (d[c / 32].permitted & (1u << (c % 32)))
			continue;
		CHECK(prctl(PR_CAPBSET_DROP, c, 0, 0, 0), "drop capability %d", c);
	}
	CHECK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clear ambient caps");
	CHECK(syscall(SYS_capset, &h, d), "capset");
}

static void set_limits(const struct rn_spec *s)
{
	struct rlimit nofile = { (rlim_t)s->nofile, (rlim_t)s->nofile };
	struct rlimit nproc = { (rlim_t)s->pids, (rlim_t)s->pids };
	struct rlimit core = { 0, 0 };

	CHECK(setrlimit(RLIMIT_NOFILE, &nofile), "setrlimit NOFILE");
	CHECK(setrlimit(RLIMIT_NPROC, &nproc), "setrlimit NPROC");
	CHECK(setrlimit(RLIMIT_CORE, &core), "setrlimit CORE");
}

/* Keep only the sync channel (as fd 3, sync_fd), the agent's ready pipe
 * (as fd JAIL_READY_FD, kept across exec) and fresh stdio. */
static void keep_channel(const struct jail_plan *p, int fd)
{
	/* out of the way of the dup2s below, whatever their numbers */
	int ready = p->ready_fd >= 0 ? fcntl(p->ready_fd, F_DUPFD_CLOEXEC, 16) : -1;

	if (p->ready_fd >= 0 && ready < 0)
		_exit(126);
	sync_fd = fd;
	if (fd != 3) {
		if (dup2(fd, 3) < 0)
			_exit(126);
		sync_fd = 3;
	}
	fcntl(3, F_SETFD, FD_CLOEXEC);
	if (ready >= 0 && dup2(ready, JAIL_READY_FD) < 0)   /* dup2 clears CLOEXEC */
		_exit(126);
	if (rn_child_stdio(p->agent_stderr) < 0)
		fail(errno, "open /dev/null");
	if (syscall(SYS_close_range, ready >= 0 ? JAIL_READY_FD + 1 : 4, ~0u, 0) < 0)
		fail(errno, "close_range");
}

static void wait_go(const char *what)
{
	char go;

	if (read(3, &go, 1) != 1)
		fail(0, "%s", what);
}

/* Root inside (the parent wrote our uid/gid maps) in a private mount
 * namespace. */
static void become_root(void)
{
	CHECK(setresgid(0, 0, 0), "setresgid 0");
	CHECK(setresuid(0, 0, 0), "setresuid 0");
	CHECK(setgroups(0, NULL), "setgroups");
	CHECK(unshare(CLONE_NEWNS), "unshare the mount namespace");
	CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), "make mounts private");
}

/* pivot_root(".", "."): the old root ends up on top of the new one and is
 * then detached, so nothing of the host stays reachable. */
static void enter_root(void)
{
	CHECK(syscall(SYS_pivot_root, ".", "."), "pivot_root");
	CHECK(umount2(".", MNT_DETACH), "detach the old root");
	CHECK(chdir("/"), "chdir /");
}

/* rlimits, no_new_privs, capabilities, seccomp: from here on the process
 * is the sandbox's. */
static void lock_down(const struct jail_plan *p)
{
	struct sbx_err err = { 0, "" };

	set_limits(p->spec);
	CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs");
	trim_caps(p->cap_last);
	if (jail_seccomp_load(p->seccomp, &err) < 0)
		fail(err.code, "seccomp: %s", err.msg);
}

/* The agent, through the runtime's ld.so. Its environment is the
 * sandbox's env and nothing of the runner's; the agent hands it to every
 * command. */
static void __attribute__((noreturn)) exec_agent(const struct jail_plan *p)
{
	char loader[PATH_MAX], libdir[PATH_MAX];
	char *envp[RN_MAX_ENV + RN_TRUST_ENV_MAX + 1];
	const char *trust[RN_TRUST_ENV_MAX];
	int n_trust = p->spec->network != RN_NET_DENY_ALL ? rn_egress_trust_env(p->spec, trust) : 0;

	for (int i = 0; i < p->spec->n_env; i++) {
		size_t n = strlen(p->spec->env_names[i]) + strlen(p->spec->env_values[i]) + 2;
		envp[i] = malloc(n);
		if (!envp[i])
			fail(ENOMEM, "env");
		snprintf(envp[i], n, "%s=%s", p->spec->env_names[i], p->spec->env_values[i]);
	}
	for (int i = 0; i < n_trust; i++)
		envp[p->spec->n_env + i] = (char *)trust[i];
	envp[p->spec->n_env + n_trust] = NULL;
	snprintf(loader, sizeof(loader), RN_RUNTIME_MOUNT "/lib/%s", p->loader);
	snprintf(libdir, sizeof(libdir), RN_RUNTIME_MOUNT "/lib");
	{
		char ready[16];
		char *argv[14] = { loader, "--library-path", libdir };
		int n = 3;

		if (p->preload[0]) {   /* named, not searched for (rn_runtime.h) */
			argv[n++] = "--preload";
			argv[n++] = (char *)p->preload;
		}
		argv[n++] = RN_RUNTIME_MOUNT "/sandbox-agent";
		argv[n++] = "--listen";
		argv[n++] = "unix:" JAIL_AGENT_SOCK;

		if (p->ready_fd >= 0) {
			snprintf(ready, sizeof ready, "%d", JAIL_READY_FD);
			argv[n++] = "--ready-fd";
			argv[n++] = ready;
		}
		if (p->spec->workdir[0]) {
			argv[n++] = "--workdir";
			argv[n++] = (char *)p->spec->workdir;
		}
		argv[n] = NULL;
		execve(loader, argv, envp);
	}
	fail(errno, "exec the agent %s", loader);
}

void jail_child_run(const struct jail_plan *p, int fd)
{
	/* the agent (and every command) gets default signals and umask */
	rn_child_defaults();
	keep_channel(p, fd);
	/* The network namespace is made here, not by the clone: making one
	 * takes about 0.4 ms, spent beside the parent's preparation instead
	 * of before it. The parent waits for this byte before it moves
	 * anything into our network namespace. */
	CHECK(unshare(CLONE_NEWNET), "unshare the network namespace");
	if (write(3, JAIL_SYNC_NETNS, 1) != 1)
		_exit(126);
	/* The parent writes our uid/gid maps and cgroup, then says go. */
	wait_go("no go from the parent");
	become_root();
	setup_rootfs(p);
	setup_proc(p);
	setup_dev();
	setup_files(p);
	CHECK(sethostname("sandbox", 7), "sethostname");
	/* Second byte: the parent has moved us into our cgroups (and brought
	 * our lo up); the cgroup namespace taken now has the sandbox's cgroup
	 * as its root. */
	wait_go("the parent did not finish the cgroup setup");
	CHECK(unshare(CLONE_NEWCGROUP), "unshare the cgroup namespace");
	enter_root();
	lock_down(p);
	exec_agent(p);
}
