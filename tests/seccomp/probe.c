/* seccomp-probe: the attack probes of SECURITY.md section 3 that are a
 * single syscall, run under the policy by tests/seccomp/run.sh.
 *
 *   seccomp-probe           run every probe; one "PASS name" or
 *                           "FAIL name: ..." line each; exit 1 on a failure
 *   seccomp-probe NAME...   only those
 * It refuses to run (exit 2) unless NoNewPrivs is set and two seccomp
 * filters are loaded, so a missing policy cannot turn it into an attack.
 *
 * Each probe states what the policy must answer. Where the kernel itself
 * could give the same answer, the probe is built so that it would not
 * (ioctl on /dev/null answers ENOTTY, not EPERM), so a PASS proves the
 * filter. Nothing here can do harm if the filter is missing: arguments are
 * invalid or point at nothing. */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define OK 0 /* expected: the call succeeds */

struct probe {
	const char *name;
	long (*fn)(void);
	int want; /* OK or an errno value */
};

static long sys6(long nr, long a, long b, long c, long d, long e, long f)
{
	return syscall(nr, a, b, c, d, e, f);
}

/* Namespaces */
static long p_unshare(void) { return syscall(SYS_unshare, CLONE_NEWUSER); }
static long p_unshare_ns(void) { return syscall(SYS_unshare, CLONE_NEWNS); }
static long p_setns(void) { return syscall(SYS_setns, -1, 0); }
static long p_clone_newuser(void)
{
	long r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);

	if (r == 0)
		_exit(0);
	if (r > 0)
		waitpid(r, NULL, 0);
	return r;
}
static long p_clone_newnet(void)
{
	long r = syscall(SYS_clone, CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0);

	if (r == 0)
		_exit(0);
	if (r > 0)
		waitpid(r, NULL, 0);
	return r;
}
static long p_clone3(void)
{
	uint64_t args[11] = { 0 }; /* struct clone_args, v2 size */

	args[0] = CLONE_NEWUSER;
	args[4] = SIGCHLD;
	long r = syscall(435, args, sizeof(args));

	if (r == 0)
		_exit(0);
	if (r > 0)
		waitpid(r, NULL, 0);
	return r;
}
static long p_fork(void)
{
	pid_t p = fork();
	int st;

	if (p == 0)
		_exit(7);
	if (p < 0 || waitpid(p, &st, 0) != p)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 7 ? 0 : (errno = EIO, -1);
}
static void *thread_fn(void *arg) { return arg; }
static long p_thread(void)
{
	pthread_t t;
	void *ret = NULL;
	int rc = pthread_create(&t, NULL, thread_fn, (void *)42);

	if (rc) {
		errno = rc;
		return -1;
	}
	pthread_join(t, &ret);
	return ret == (void *)42 ? 0 : (errno = EIO, -1);
}

/* Mounts */
static long p_mount(void) { return syscall(SYS_mount, "none", "/nonexistent-probe", "tmpfs", 0, 0); }
static long p_umount2(void) { return syscall(SYS_umount2, "/nonexistent-probe", 0); }
static long p_pivot_root(void) { return syscall(SYS_pivot_root, "/nonexistent-a", "/nonexistent-b"); }
static long p_chroot(void) { return syscall(SYS_chroot, "/nonexistent-probe"); }
static long p_fsopen(void) { return syscall(430, "tmpfs", 0); }
static long p_open_tree(void) { return syscall(428, -100, "/nonexistent-probe", 0); }
static long p_mount_setattr(void) { return syscall(442, -1, "", 0, 0, 0); }

/* Kernel extension points */
static long p_bpf(void)
{
	char attr[128] = { 0 };

	attr[0] = 1; /* BPF_MAP_TYPE_HASH, with zero sizes: invalid anyway */
	return syscall(SYS_bpf, 0 /* BPF_MAP_CREATE */, attr, sizeof(attr));
}
static long p_perf(void)
{
	char attr[128] = { 0 };

	return syscall(SYS_perf_event_open, attr, 0, -1, -1, 0);
}
static long p_userfaultfd(void) { return syscall(SYS_userfaultfd, O_CLOEXEC); }
static long p_io_uring(void)
{
	char params[120] = { 0 };

	return syscall(425, 8, params);
}
static long p_io_uring_enter(void) { return syscall(426, -1, 0, 0, 0, 0, 0); }
/* memfd_secret (447 on x86_64): ENOSYS, as on a kernel without secretmem */
static long p_memfd_secret(void) { return syscall(447, 0); }

/* Keyrings */
static long p_keyctl(void) { return syscall(SYS_keyctl, 0 /* GET_KEYRING_ID */, -3, 0); }
static long p_add_key(void) { return syscall(SYS_add_key, "user", "probe", "x", 1, -3); }
static long p_request_key(void) { return syscall(SYS_request_key, "user", "probe", 0, 0); }

/* Tracing */
static long p_ptrace(void) { return syscall(SYS_ptrace, 0 /* TRACEME */, 0, 0, 0); }
static long p_process_vm_readv(void) { return sys6(SYS_process_vm_readv, 1, 0, 0, 0, 0, 0); }
static long p_process_vm_writev(void) { return sys6(SYS_process_vm_writev, 1, 0, 0, 0, 0, 0); }
static long p_kcmp(void) { return sys6(SYS_kcmp, 1, 1, 0, 0, 0, 0); }
static long p_pidfd_getfd(void) { return syscall(438, -1, 0, 0); }
static long p_name_to_handle(void) { return sys6(SYS_name_to_handle_at, -100, (long)"/", 0, 0, 0, 0); }
static long p_open_by_handle(void) { return syscall(SYS_open_by_handle_at, -1, 0, 0); }

/* Modules, power, privileges */
static long p_init_module(void) { return syscall(SYS_init_module, 0, 0, ""); }
static long p_finit_module(void) { return syscall(SYS_finit_module, -1, "", 0); }
static long p_delete_module(void) { return syscall(SYS_delete_module, "probe_nonexistent", 0); }
static long p_kexec(void) { return sys6(SYS_kexec_load, 0, 0, 0, 0, 0, 0); }
static long p_reboot(void) { return syscall(SYS_reboot, 0, 0, 0, 0); /* bad magic */ }
static long p_swapon(void) { return syscall(SYS_swapon, "/nonexistent-probe", 0); }
static long p_acct(void) { return syscall(SYS_acct, NULL); }
static long p_syslog(void) { return syscall(SYS_syslog, 10 /* SIZE_BUFFER */, 0, 0); }
static long p_quotactl(void) { return syscall(SYS_quotactl, 0, 0, 0, 0); }
static long p_iopl(void) { return syscall(SYS_iopl, 0); }
static long p_ioperm(void) { return syscall(SYS_ioperm, 0, 0, 0); }
static long p_settimeofday(void) { return syscall(SYS_settimeofday, NULL, NULL); }
static long p_clock_settime(void) { return syscall(SYS_clock_settime, -1, NULL); }
static long p_vhangup(void) { return syscall(SYS_vhangup); }
static long p_get_mempolicy(void) { return sys6(SYS_get_mempolicy, 0, 0, 0, 0, 0, 0); }
static long p_mbind(void) { return sys6(SYS_mbind, 0, 0, 0, 0, 0, 0); }
static long p_fanotify(void) { return syscall(SYS_fanotify_init, 0, 0); }
static long p_modify_ldt(void) { return syscall(SYS_modify_ldt, 0, 0, 0); }
static long p_sethostname(void) { return syscall(SYS_sethostname, "x", 1); }

/* Personality */
static long p_pers_query(void) { return syscall(SYS_personality, 0xffffffffUL); }
static long p_pers_linux(void) { return syscall(SYS_personality, PER_LINUX); }
static long p_pers_norandom(void) { return syscall(SYS_personality, ADDR_NO_RANDOMIZE); }

/* ioctl: on /dev/null the kernel says ENOTTY, so EPERM is the filter. */
static long tty_ioctl(unsigned long req)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	char c = 'x';
	long r;

	if (fd < 0)
		return -1;
	r = syscall(SYS_ioctl, fd, req, &c);
	int e = errno;
	close(fd);
	errno = e;
	return r;
}
static long p_tiocsti(void) { return tty_ioctl(0x5412); }
static long p_tiocsti_hi(void) { return tty_ioctl(0xFFFFFFFF00005412UL); }
static long p_tioclinux(void) { return tty_ioctl(0x541C); }
static long p_tioclinux_hi(void) { return tty_ioctl(0x100000000000541CUL); }
static long p_ioctl_other(void)
{
	long r = tty_ioctl(0x5401 /* TCGETS */);

	/* allowed through: the kernel answers ENOTTY itself */
	return (r < 0 && errno == ENOTTY) ? 0 : (errno = EIO, -1);
}

/* Sockets */
static long sock(int fam, int type, int proto)
{
	int fd = socket(fam, type, proto);

	if (fd >= 0)
		close(fd);
	return fd < 0 ? -1 : 0;
}
static long p_inet_stream(void) { return sock(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0); }
static long p_inet_dgram(void) { return sock(AF_INET, SOCK_DGRAM, 0); }
static long p_inet6_stream(void) { return sock(AF_INET6, SOCK_STREAM, 0); }
static long p_inet6_dgram(void) { return sock(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK, 0); }
static long p_unix(void) { return sock(AF_UNIX, SOCK_STREAM, 0); }
static long p_nl_route(void) { return sock(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE); }
static long p_socketpair(void)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return -1;
	close(sv[0]);
	close(sv[1]);
	return 0;
}
static long p_inet_raw(void) { return sock(AF_INET, SOCK_RAW, 1 /* ICMP */); }
static long p_inet_raw_nb(void) { return sock(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 255); }
static long p_inet6_raw(void) { return sock(AF_INET6, SOCK_RAW, 58); }
static long p_inet_sockpacket(void) { return sock(AF_INET, 10 /* SOCK_PACKET */, 0x300); }
static long p_packet(void) { return sock(17 /* AF_PACKET */, SOCK_RAW, 0x300); }
static long p_alg(void) { return sock(38 /* AF_ALG */, SOCK_SEQPACKET, 0); }
static long p_vsock(void) { return sock(40 /* AF_VSOCK */, SOCK_STREAM, 0); }
static long p_key(void) { return sock(15 /* AF_KEY */, SOCK_RAW, 2); }
static long p_fam_big(void) { return sock(200, SOCK_STREAM, 0); }
static long p_fam_hi(void) { return syscall(SYS_socket, 0x100000002L, SOCK_RAW, 1); }
static long p_nl_audit(void) { return sock(AF_NETLINK, SOCK_RAW, 9 /* NETLINK_AUDIT */); }
static long p_nl_uevent(void) { return sock(AF_NETLINK, SOCK_DGRAM, 15 /* KOBJECT_UEVENT */); }
static long p_nl_netfilter(void) { return sock(AF_NETLINK, SOCK_RAW, 12 /* NETFILTER */); }

/* Seccomp state as the kernel reports it. */
static long p_status(void)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return (errno = EIO, -1);
	buf[n] = 0;
	if (!strstr(buf, "NoNewPrivs:\t1") || !strstr(buf, "Seccomp:\t2") ||
	    !strstr(buf, "Seccomp_filters:\t2"))
		return (errno = EPROTO, -1);
	return 0;
}

/* Foreign ABIs, in a child: the policy kills it with SIGSYS (or the call
 * returns ENOSYS); it must never run unshare. */
static long foreign(int x32)
{
	pid_t p = fork();
	int st;

	if (p == 0) {
		long r;
#if defined(__x86_64__)
		if (x32) {
			r = syscall(0x40000000L | SYS_unshare, CLONE_NEWUSER);
		} else {
			long nr = 310; /* i386 unshare */
			long a = CLONE_NEWUSER;
			__asm__ volatile("int $0x80" : "=a"(r) : "a"(nr), "b"(a) : "memory");
			if (r < 0) {
				errno = (int)-r;
				r = -1;
			}
		}
#else
		(void)x32;
		r = -1;
		errno = ENOSYS;
#endif
		_exit(r == -1 && errno == ENOSYS ? 0 : 3);
	}
	if (p < 0 || waitpid(p, &st, 0) != p)
		return -1;
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)
		return 0;
	/* a kernel without IA32 emulation (seen: 6.18 here) answers int 0x80
	 * with SIGSEGV before any syscall runs: it never executed either */
	if (!x32 && WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV)
		return 0;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	errno = EIO;
	return -1;
}
static long p_int80(void) { return foreign(0); }
static long p_x32(void) { return foreign(1); }

static const struct probe probes[] = {
	{ "status", p_status, OK },
	{ "fork", p_fork, OK },
	{ "thread", p_thread, OK },
	{ "unshare", p_unshare, EPERM },
	{ "unshare_ns", p_unshare_ns, EPERM },
	{ "setns", p_setns, EPERM },
	{ "clone_newuser", p_clone_newuser, EPERM },
	{ "clone_newnet", p_clone_newnet, EPERM },
	{ "clone3", p_clone3, ENOSYS },
	{ "mount", p_mount, EPERM },
	{ "umount2", p_umount2, EPERM },
	{ "pivot_root", p_pivot_root, EPERM },
	{ "chroot", p_chroot, EPERM },
	{ "fsopen", p_fsopen, ENOSYS },
	{ "open_tree", p_open_tree, ENOSYS },
	{ "mount_setattr", p_mount_setattr, ENOSYS },
	{ "bpf", p_bpf, EPERM },
	{ "perf_event_open", p_perf, EPERM },
	{ "userfaultfd", p_userfaultfd, EPERM },
	{ "io_uring_setup", p_io_uring, ENOSYS },
	{ "io_uring_enter", p_io_uring_enter, ENOSYS },
	{ "memfd_secret", p_memfd_secret, ENOSYS },
	{ "keyctl", p_keyctl, EPERM },
	{ "add_key", p_add_key, EPERM },
	{ "request_key", p_request_key, EPERM },
	{ "ptrace", p_ptrace, EPERM },
	{ "process_vm_readv", p_process_vm_readv, EPERM },
	{ "process_vm_writev", p_process_vm_writev, EPERM },
	{ "kcmp", p_kcmp, EPERM },
	{ "pidfd_getfd", p_pidfd_getfd, EPERM },
	{ "name_to_handle_at", p_name_to_handle, ENOSYS },
	{ "open_by_handle_at", p_open_by_handle, EPERM },
	{ "init_module", p_init_module, EPERM },
	{ "finit_module", p_finit_module, EPERM },
	{ "delete_module", p_delete_module, EPERM },
	{ "kexec_load", p_kexec, EPERM },
	{ "reboot", p_reboot, EPERM },
	{ "swapon", p_swapon, EPERM },
	{ "acct", p_acct, EPERM },
	{ "syslog", p_syslog, EPERM },
	{ "quotactl", p_quotactl, EPERM },
	{ "iopl", p_iopl, EPERM },
	{ "ioperm", p_ioperm, EPERM },
	{ "settimeofday", p_settimeofday, EPERM },
	{ "clock_settime", p_clock_settime, EPERM },
	{ "vhangup", p_vhangup, EPERM },
	{ "get_mempolicy", p_get_mempolicy, EPERM },
	{ "mbind", p_mbind, EPERM },
	{ "fanotify_init", p_fanotify, EPERM },
	{ "modify_ldt", p_modify_ldt, ENOSYS },
	{ "sethostname", p_sethostname, ENOSYS },
	{ "personality_query", p_pers_query, OK },
	{ "personality_linux", p_pers_linux, OK },
	{ "personality_no_randomize", p_pers_norandom, ENOSYS },
	{ "tiocsti", p_tiocsti, EPERM },
	{ "tiocsti_high_bits", p_tiocsti_hi, EPERM },
	{ "tioclinux", p_tioclinux, EPERM },
	{ "tioclinux_high_bits", p_tioclinux_hi, EPERM },
	{ "ioctl_tcgets", p_ioctl_other, OK },
	{ "inet_stream", p_inet_stream, OK },
	{ "inet_dgram", p_inet_dgram, OK },
	{ "inet6_stream", p_inet6_stream, OK },
	{ "inet6_dgram", p_inet6_dgram, OK },
	{ "unix", p_unix, OK },
	{ "socketpair", p_socketpair, OK },
	{ "netlink_route", p_nl_route, OK },
	{ "inet_raw", p_inet_raw, EPERM },
	{ "inet_raw_flags", p_inet_raw_nb, EPERM },
	{ "inet6_raw", p_inet6_raw, EPERM },
	{ "inet_sock_packet", p_inet_sockpacket, EPERM },
	{ "af_packet", p_packet, EAFNOSUPPORT },
	{ "af_alg", p_alg, EAFNOSUPPORT },
	{ "af_vsock", p_vsock, EAFNOSUPPORT },
	{ "af_key", p_key, EAFNOSUPPORT },
	{ "af_200", p_fam_big, EAFNOSUPPORT },
	{ "family_high_bits", p_fam_hi, EAFNOSUPPORT },
	{ "netlink_audit", p_nl_audit, EPERM },
	{ "netlink_uevent", p_nl_uevent, EPERM },
	{ "netlink_netfilter", p_nl_netfilter, EPERM },
	{ "int80_unshare", p_int80, OK },
	{ "x32_unshare", p_x32, OK },
};

static int run(const struct probe *p)
{
	long r;

	errno = 0;
	r = p->fn();
	if (p->want == OK ? r >= 0 : (r == -1 && errno == p->want)) {
		printf("PASS %s\n", p->name);
		return 0;
	}
	if (r >= 0)
		printf("FAIL %s: succeeded, want %s\n", p->name, strerror(p->want));
	else
		printf("FAIL %s: %s, want %s\n", p->name, strerror(errno),
		       p->want == OK ? "success" : strerror(p->want));
	return 1;
}

int main(int argc, char **argv)
{
	size_t n = sizeof(probes) / sizeof(probes[0]);
	int bad = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Without the filter the probes would really run (as root, even):
	 * refuse unless both filters are in place. */
	if (p_status() != 0) {
		fprintf(stderr, "seccomp-probe: not under the jail's seccomp policy; refusing\n");
		return 2;
	}
	if (argc > 1 && strcmp(argv[1], "--list") == 0) {
		for (size_t i = 0; i < n; i++)
			printf("%s\n", probes[i].name);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		int want = argc == 1;

		for (int a = 1; a < argc && !want; a++)
			want = strcmp(argv[a], probes[i].name) == 0;
		if (want)
			bad |= run(&probes[i]);
	}
	return bad;
}
