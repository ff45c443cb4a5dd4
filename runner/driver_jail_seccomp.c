/* Seccomp policy "jail-default-v1" for the namespace jail; the reason for
 * every rule is in docs/seccomp.md. Filter A is an allowlist (default
 * ENOSYS), filter B an argument denylist (default ALLOW); the kernel runs
 * both and keeps the most restrictive answer, and on a tie between two
 * errno answers the later filter's, so B's errno values win over A's
 * default. Two filters keep allow and deny rules on the same argument out
 * of one libseccomp context, where they do not combine. */
#include "driver_jail_seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* Docker's default profile, unconditional names (x86_64 and aarch64),
 * minus ptrace, process_vm_readv, process_vm_writev, name_to_handle_at,
 * modify_ldt and memfd_secret. Names of other architectures (the 32-bit variants) are kept
 * so that the list reads like the profile; the resolver skips them. */
static const char *const allow_names[] = {
	"accept", "accept4", "access", "adjtimex", "alarm", "bind", "brk",
	"cachestat", "capget", "capset", "chdir", "chmod", "chown", "chown32",
	"clock_adjtime", "clock_adjtime64", "clock_getres",
	"clock_getres_time64", "clock_gettime", "clock_gettime64",
	"clock_nanosleep", "clock_nanosleep_time64", "close", "close_range",
	"connect", "copy_file_range", "creat", "dup", "dup2", "dup3",
	"epoll_create", "epoll_create1", "epoll_ctl", "epoll_ctl_old",
	"epoll_pwait", "epoll_pwait2", "epoll_wait", "epoll_wait_old",
	"eventfd", "eventfd2", "execve", "execveat", "exit", "exit_group",
	"faccessat", "faccessat2", "fadvise64", "fadvise64_64", "fallocate",
	"fanotify_mark", "fchdir", "fchmod", "fchmodat", "fchmodat2", "fchown",
	"fchown32", "fchownat", "fcntl", "fcntl64", "fdatasync", "fgetxattr",
	"flistxattr", "flock", "fork", "fremovexattr", "fsetxattr", "fstat",
	"fstat64", "fstatat64", "fstatfs", "fstatfs64", "fsync", "ftruncate",
	"ftruncate64", "futex", "futex_requeue", "futex_time64", "futex_wait",
	"futex_waitv", "futex_wake", "futimesat", "getcpu", "getcwd",
	"getdents", "getdents64", "getegid", "getegid32", "geteuid",
	"geteuid32", "getgid", "getgid32", "getgroups", "getgroups32",
	"getitimer", "getpeername", "getpgid", "getpgrp", "getpid", "getppid",
	"getpriority", "getrandom", "getresgid", "getresgid32", "getresuid",
	"getresuid32", "getrlimit", "get_robust_list", "getrusage", "getsid",
	"getsockname", "getsockopt", "get_thread_area", "gettid",
	"gettimeofday", "getuid", "getuid32", "getxattr", "inotify_add_watch",
	"inotify_init", "inotify_init1", "inotify_rm_watch", "io_cancel",
	"ioctl", "io_destroy", "io_getevents", "io_pgetevents",
	"io_pgetevents_time64", "ioprio_get", "ioprio_set", "io_setup",
	"io_submit", "ipc", "kill", "landlock_add_rule",
	"landlock_create_ruleset", "landlock_restrict_self", "lchown",
	"lchown32", "lgetxattr", "link", "linkat", "listen", "listxattr",
	"llistxattr", "_llseek", "lremovexattr", "lseek", "lsetxattr", "lstat",
	"lstat64", "madvise", "map_shadow_stack", "membarrier", "memfd_create",
	"mincore", "mkdir", "mkdirat", "mknod", "mknodat",
	"mlock", "mlock2", "mlockall", "mmap", "mmap2", "mprotect",
	"mq_getsetattr", "mq_notify", "mq_open", "mq_timedreceive",
	"mq_timedreceive_time64", "mq_timedsend", "mq_timedsend_time64",
	"mq_unlink", "mremap", "msgctl", "msgget", "msgrcv", "msgsnd", "msync",
	"munlock", "munlockall", "munmap", "nanosleep", "newfstatat",
	"_newselect", "open", "openat", "openat2", "pause", "pidfd_open",
	"pidfd_send_signal", "pipe", "pipe2", "pkey_alloc", "pkey_free",
	"pkey_mprotect", "poll", "ppoll", "ppoll_time64", "prctl", "pread64",
	"preadv", "preadv2", "prlimit64", "process_mrelease", "pselect6",
	"pselect6_time64", "pwrite64", "pwritev", "pwritev2", "read",
	"readahead", "readlink", "readlinkat", "readv", "recv", "recvfrom",
	"recvmmsg", "recvmmsg_time64", "recvmsg", "remap_file_pages",
	"removexattr", "rename", "renameat", "renameat2", "restart_syscall",
	"rmdir", "rseq", "rt_sigaction", "rt_sigpending", "rt_sigprocmask",
	"rt_sigqueueinfo", "rt_sigreturn", "rt_sigsuspend", "rt_sigtimedwait",
	"rt_sigtimedwait_time64", "rt_tgsigqueueinfo", "sched_getaffinity",
	"sched_getattr", "sched_getparam", "sched_get_priority_max",
	"sched_get_priority_min", "sched_getscheduler", "sched_rr_get_interval",
	"sched_rr_get_interval_time64", "sched_setaffinity", "sched_setattr",
	"sched_setparam", "sched_setscheduler", "sched_yield", "seccomp",
	"select", "semctl", "semget", "semop", "semtimedop",
	"semtimedop_time64", "send", "sendfile", "sendfile64", "sendmmsg",
	"sendmsg", "sendto", "setfsgid", "setfsgid32", "setfsuid",
	"setfsuid32", "setgid", "setgid32", "setgroups", "setgroups32",
	"setitimer", "setpgid", "setpriority", "setregid", "setregid32",
	"setresgid", "setresgid32", "setresuid", "setresuid32", "setreuid",
	"setreuid32", "setrlimit", "set_robust_list", "setsid", "setsockopt",
	"set_thread_area", "set_tid_address", "setuid", "setuid32", "shmat",
	"shmctl", "shmdt", "shmget", "shutdown", "sigaltstack", "signalfd",
	"signalfd4", "sigprocmask", "sigreturn", "socketcall", "socketpair",
	"splice", "stat", "stat64", "statfs", "statfs64", "statx", "symlink",
	"symlinkat", "sync", "sync_file_range", "syncfs", "sysinfo", "tee",
	"tgkill", "time", "timer_create", "timer_delete", "timer_getoverrun",
	"timer_gettime", "timer_gettime64", "timer_settime",
	"timer_settime64", "timerfd_create", "timerfd_gettime",
	"timerfd_gettime64", "timerfd_settime", "timerfd_settime64", "times",
	"tkill", "truncate", "truncate64", "ugetrlimit", "umask", "uname",
	"unlink", "unlinkat", "utime", "utimensat", "utimensat_time64",
	"utimes", "vfork", "vmsplice", "wait4", "waitid", "waitpid", "write",
	"writev",
#if defined(__x86_64__)
	"arch_prctl",
#endif
};

/* Refused with EPERM so that tools print "Operation not permitted" rather
 * than assume an old kernel. */
static const char *const eperm_names[] = {
	/* namespaces */
	"unshare", "setns",
	/* mounts */
	"mount", "umount", "umount2", "pivot_root", "chroot",
	/* keyrings */
	"keyctl", "add_key", "request_key",
	/* kernel extension points */
	"bpf", "perf_event_open", "userfaultfd",
	/* modules and power */
	"init_module", "finit_module", "delete_module", "kexec_load",
	"kexec_file_load", "reboot", "swapon", "swapoff",
	/* accounting, quotas, logs */
	"acct", "syslog", "quotactl", "quotactl_fd", "lookup_dcookie",
	/* I/O privileges and clock */
	"vhangup", "iopl", "ioperm", "settimeofday", "clock_settime",
	"stime",
	/* handles and process snooping */
	"open_by_handle_at", "kcmp", "pidfd_getfd", "process_madvise",
	/* NUMA */
	"mbind", "set_mempolicy", "get_mempolicy", "migrate_pages",
	"move_pages", "set_mempolicy_home_node",
	"fanotify_init",
};

/* Tracing: EPERM in the default profile (what strace and gdb report
 * clearly), allowed in the debug profile. */
static const char *const trace_names[] = {
	"ptrace", "process_vm_readv", "process_vm_writev",
};

/* Not listed: these get filter A's default answer, ENOSYS, which callers
 * treat as "not on this kernel" and fall back from (glibc's clone3 ->
 * clone, node's and python's io_uring probes, the new mount API like
 * flatpak does):
 *   clone3, io_uring_setup, io_uring_enter, io_uring_register,
 *   open_tree, move_mount, fsopen, fsconfig, fsmount, fspick,
 *   mount_setattr, name_to_handle_at, modify_ldt,
 *   memfd_secret (ENOSYS is also what a kernel booted without secretmem
 *   says; its pages leave the kernel's direct map, which splits the host's
 *   large pages for every tenant, and are locked memory).
 * (libseccomp refuses a rule whose action equals the default action, so
 * they cannot be listed as explicit rules.) */

/* Syscalls newer than libseccomp 2.5.4's table, by x86_64 number: Docker
 * allows them, and without a rule they would read as ENOSYS. */
struct nr_name {
	const char *name;
	int nr;
};
static const struct nr_name x86_64_newer[] = {
	{ "cachestat", 451 },     { "fchmodat2", 452 },
	{ "map_shadow_stack", 453 }, { "futex_wake", 454 },
	{ "futex_wait", 455 },    { "futex_requeue", 456 },
};

static int add_rule(scmp_filter_ctx ctx, uint32_t action, int nr,
		    unsigned n, const struct scmp_arg_cmp *args,
		    const char *name, struct sbx_err *err)
{
	int rc = seccomp_rule_add_array(ctx, action, nr, n, args);

	if (rc < 0)
		return sbx_err_set(err, -rc, "seccomp rule for %s: %s", name,
				   strerror(-rc));
	return 0;
}

/* Resolve name on the native architecture: -1 when libseccomp does not know
 * it or it is a pseudo-syscall (a name of another architecture). */
static int resolve(const char *name)
{
	int nr = seccomp_syscall_resolve_name(name);

#if defined(__x86_64__)
	if (nr == __NR_SCMP_ERROR)
		for (size_t i = 0; i < sizeof(x86_64_newer) / sizeof(x86_64_newer[0]); i++)
			if (strcmp(x86_64_newer[i].name, name) == 0)
				return x86_64_newer[i].nr;
#endif
	if (nr == __NR_SCMP_ERROR || nr < 0)
		return -1;
	return nr;
}

static int add_names(scmp_filter_ctx ctx, uint32_t action,
		     const char *const *names, size_t n, int *skipped,
		     struct sbx_err *err)
{
	for (size_t i = 0; i < n; i++) {
		int nr = resolve(names[i]);

		if (nr < 0) {
			(*skipped)++;
			continue;
		}
		if (add_rule(ctx, action, nr, 0, NULL, names[i], err) < 0)
			return -1;
	}
	return 0;
}

static int add_arg_rule(scmp_filter_ctx ctx, uint32_t action, const char *name,
			unsigned n, const struct scmp_arg_cmp *args, int *skipped,
			struct sbx_err *err)
{
	int nr = resolve(name);

	if (nr < 0) {
		(*skipped)++;
		return 0;
	}
	return add_rule(ctx, action, nr, n, args, name, err);
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Namespace flags of clone(): CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS |
 * CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET. */
#define NS_FLAGS 0x7E020000ULL

static int build_allowlist(scmp_filter_ctx ctx, unsigned flags, int *skipped,
			   struct sbx_err *err)
{
	static const uint64_t families[] = { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK };
	/* PER_LINUX, PER_LINUX32, UNAME26, UNAME26|PER_LINUX32 and the query
	 * (Docker's set): what uname tricks and 32-bit builds use. */
	static const uint64_t personas[] = { 0, 8, 0x20000, 0x20008, 0xffffffffULL };
	struct scmp_arg_cmp a;

	if (add_names(ctx, SCMP_ACT_ALLOW, allow_names, COUNT(allow_names),
		      skipped, err) < 0 ||
	    add_names(ctx, SCMP_ACT_ERRNO(EPERM), eperm_names, COUNT(eperm_names),
		      skipped, err) < 0 ||
	    add_names(ctx, (flags & JAIL_SECCOMP_DEBUG) ? SCMP_ACT_ALLOW
							: SCMP_ACT_ERRNO(EPERM),
		      trace_names, COUNT(trace_names), skipped, err) < 0)
		return -1;

	a = SCMP_A0(SCMP_CMP_MASKED_EQ, NS_FLAGS, 0);
	if (add_arg_rule(ctx, SCMP_ACT_ALLOW, "clone", 1, &a, skipped, err) < 0)
		return -1;
	for (size_t i = 0; i < COUNT(families); i++) {
		a = SCMP_A0(SCMP_CMP_EQ, families[i]);
		if (add_arg_rule(ctx, SCMP_ACT_ALLOW, "socket", 1, &a, skipped, err) < 0)
			return -1;
	}
	for (size_t i = 0; i < COUNT(personas); i++) {
		a = SCMP_A0(SCMP_CMP_EQ, personas[i]);
		if (add_arg_rule(ctx, SCMP_ACT_ALLOW, "personality", 1, &a, skipped, err) < 0)
			return -1;
	}
	if (flags & JAIL_SECCOMP_DEBUG) {
		/* gdb turns address randomisation off for its inferior. */
		a = SCMP_A0(SCMP_CMP_EQ, ADDR_NO_RANDOMIZE);
		if (add_arg_rule(ctx, SCMP_ACT_ALLOW, "personality", 1, &a, skipped, err) < 0)
			return -1;
	}
	return 0;
}

static int build_denylist(scmp_filter_ctx ctx, int *skipped, struct sbx_err *err)
{
	/* TIOCSTI pushes input into a terminal another process reads;
	 * TIOCLINUX can do the same on a VT. The kernel takes the request
	 * as an unsigned int, so compare only the low 32 bits
	 * (CVE-2019-10063). */
	static const uint64_t tty_reqs[] = { 0x5412, 0x541C };
	static const uint64_t clone_ns[] = {
		CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
		CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
	};
	struct scmp_arg_cmp a[2];

	for (size_t i = 0; i < COUNT(tty_reqs); i++) {
		a[0] = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFFULL, tty_reqs[i]);
		if (add_arg_rule(ctx, SCMP_ACT_ERRNO(EPERM), "ioctl", 1, a, skipped, err) < 0)
			return -1;
	}
	/* Raw IP sockets forge packets; SOCK_PACKET on AF_INET is the
	 * kernel's legacy alias for an AF_PACKET socket. The type carries
	 * SOCK_NONBLOCK/SOCK_CLOEXEC above the low 4 bits. */
	for (int fam = 0; fam < 2; fam++) {
		uint64_t f = fam ? AF_INET6 : AF_INET;
		uint64_t types[] = { SOCK_RAW, SOCK_PACKET };

		for (size_t t = 0; t < COUNT(types); t++) {
			a[0] = SCMP_A0(SCMP_CMP_EQ, f);
			a[1] = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xF, types[t]);
			if (add_arg_rule(ctx, SCMP_ACT_ERRNO(EPERM), "socket", 2, a,
					 skipped, err) < 0)
				return -1;
		}
	}
	/* Netlink: only NETLINK_ROUTE (ip, getaddrinfo's interface query);
	 * audit, uevent, netfilter and the rest are kernel attack surface. */
	a[0] = SCMP_A0(SCMP_CMP_EQ, AF_NETLINK);
	a[1] = SCMP_A2(SCMP_CMP_NE, NETLINK_ROUTE);
	if (add_arg_rule(ctx, SCMP_ACT_ERRNO(EPERM), "socket", 2, a, skipped, err) < 0)
		return -1;
	/* Other families: filter A already refuses them (ENOSYS); answer
	 * EAFNOSUPPORT, what programs probing for AF_ALG, AF_VSOCK or
	 * AF_PACKET expect from a kernel without them. */
	for (uint64_t fam = 0; fam < AF_MAX; fam++) {
		if (fam == AF_UNIX || fam == AF_INET || fam == AF_INET6 || fam == AF_NETLINK)
			continue;
		a[0] = SCMP_A0(SCMP_CMP_EQ, fam);
		if (add_arg_rule(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), "socket", 1, a,
				 skipped, err) < 0)
			return -1;
	}
	a[0] = SCMP_A0(SCMP_CMP_GE, AF_MAX);
	if (add_arg_rule(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), "socket", 1, a, skipped, err) < 0)
		return -1;
	/* clone() with a namespace flag: filter A already refuses it; say
	 * EPERM like unshare does. */
	for (size_t i = 0; i < COUNT(clone_ns); i++) {
		a[0] = SCMP_A0(SCMP_CMP_MASKED_EQ, clone_ns[i], clone_ns[i]);
		if (add_arg_rule(ctx, SCMP_ACT_ERRNO(EPERM), "clone", 1, a, skipped, err) < 0)
			return -1;
	}
	return 0;
}

/* Render ctx as a raw BPF program (libseccomp 2.5 only exports to an fd). */
static int export_prog(scmp_filter_ctx ctx, struct sock_filter **out,
		       unsigned short *len, struct sbx_err *err)
{
	struct stat st;
	void *buf;
	int fd, rc;

	fd = memfd_create("jail-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return sbx_err_sys(err, "memfd_create");
	rc = seccomp_export_bpf(ctx, fd);
	if (rc < 0) {
		close(fd);
		return sbx_err_set(err, -rc, "seccomp_export_bpf: %s", strerror(-rc));
	}
	if (fstat(fd, &st) < 0) {
		sbx_err_sys(err, "fstat memfd");
		close(fd);
		return -1;
	}
	if (st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) != 0 ||
	    st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS) {
		close(fd);
		return sbx_err_set(err, E2BIG, "seccomp program of %lld bytes",
				   (long long)st.st_size);
	}
	buf = malloc(st.st_size);
	if (!buf) {
		close(fd);
		return sbx_err_set(err, ENOMEM, "seccomp program");
	}
	if (pread(fd, buf, st.st_size, 0) != st.st_size) {
		sbx_err_sys(err, "read memfd");
		free(buf);
		close(fd);
		return -1;
	}
	close(fd);
	*out = buf;
	*len = (unsigned short)(st.st_size / sizeof(struct sock_filter));
	return 0;
}

static int compile_one(int which, unsigned flags, struct jail_seccomp_prog *prog,
		       struct sbx_err *err)
{
	scmp_filter_ctx ctx;
	int rc;

	if (which == 1)
		ctx = seccomp_init(SCMP_ACT_ALLOW);
	else
		ctx = seccomp_init((flags & JAIL_SECCOMP_LOG) ? SCMP_ACT_LOG
							: SCMP_ACT_ERRNO(ENOSYS));
	if (!ctx)
		return sbx_err_set(err, ENOMEM, "seccomp_init");
	/* A syscall from a foreign ABI (int 0x80, x32) is an attack, not a
	 * program to be answered: kill the whole process. Only the native
	 * architecture is in the context (seccomp_init's default). */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	/* Binary-tree dispatch: a few comparisons per syscall instead of a
	 * linear scan over ~300 rules. Older libseccomp lacks it: ignore. */
	if (rc == 0)
		(void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (rc < 0) {
		seccomp_release(ctx);
		return sbx_err_set(err, -rc, "seccomp_attr_set: %s", strerror(-rc));
	}
	rc = which == 0 ? build_allowlist(ctx, flags, &prog->skipped, err)
			: build_denylist(ctx, &prog->skipped, err);
	if (rc == 0)
		rc = export_prog(ctx, &prog->insns[which], &prog->len[which], err);
	seccomp_release(ctx);
	if (rc < 0)
		return sbx_err_wrap(err, "seccomp filter %c", which == 0 ? 'A' : 'B');
	return 0;
}

int jail_seccomp_compile(struct jail_seccomp_prog *prog, unsigned flags,
			 struct sbx_err *err)
{
	memset(prog, 0, sizeof(*prog));
	for (int i = 0; i < JAIL_SECCOMP_NFILTERS; i++) {
		if (compile_one(i, flags, prog, err) < 0) {
			jail_seccomp_free(prog);
			return -1;
		}
	}
	return 0;
}

int jail_seccomp_load(const struct jail_seccomp_prog *prog, struct sbx_err *err)
{
	int nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);

	if (nnp != 1)
		return sbx_err_set(err, EPERM,
				   "seccomp: PR_SET_NO_NEW_PRIVS must be set first");
	for (int i = 0; i < JAIL_SECCOMP_NFILTERS; i++) {
		struct sock_fprog fp = { .len = prog->len[i], .filter = prog->insns[i] };

		if (!prog->insns[i])
			return sbx_err_set(err, EINVAL, "seccomp: filter %d not compiled", i);
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0) < 0)
			return sbx_err_sys(err, "seccomp: load filter %c",
					   i == 0 ? 'A' : 'B');
	}
	return 0;
}

void jail_seccomp_free(struct jail_seccomp_prog *prog)
{
	for (int i = 0; i < JAIL_SECCOMP_NFILTERS; i++) {
		free(prog->insns[i]);
		prog->insns[i] = NULL;
		prog->len[i] = 0;
	}
}
