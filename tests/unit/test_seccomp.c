/* Unit tests of runner/driver_jail_seccomp.c: the filters compile within the
 * kernel's size limit, load refuses without no_new_privs, and a child
 * under the policy gets the documented answers. Children leave with
 * _exit(): under the policy, LeakSanitizer's exit-time ptrace is refused. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../runner/driver_jail_seccomp.h"

/* Run fn in a child under the policy (flags); returns fn's exit code, or
 * 128 + signal. */
static int in_child(unsigned flags, int (*fn)(void))
{
	struct jail_seccomp_prog prog;
	struct sbx_err err = { 0, "" };
	pid_t pid;
	int st;

	assert_int_equal(jail_seccomp_compile(&prog, flags, &err), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    jail_seccomp_load(&prog, &err) < 0)
			_exit(100);
		_exit(fn());
	}
	jail_seccomp_free(&prog);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* 0 when the call failed with want, 1 otherwise. */
static int expect_errno(long r, int want)
{
	return (r == -1 && errno == want) ? 0 : 1;
}

static void compiles(void **state)
{
	struct jail_seccomp_prog prog;
	struct sbx_err err = { 0, "" };

	(void)state;
	assert_int_equal(jail_seccomp_compile(&prog, 0, &err), 0);
	for (int i = 0; i < JAIL_SECCOMP_NFILTERS; i++) {
		assert_non_null(prog.insns[i]);
		assert_true(prog.len[i] > 10);
		assert_true(prog.len[i] <= BPF_MAXINSNS);
	}
	jail_seccomp_free(&prog);
	assert_null(prog.insns[0]);
	assert_int_equal(jail_seccomp_compile(&prog, JAIL_SECCOMP_DEBUG, &err), 0);
	jail_seccomp_free(&prog);
}

static int load_without_nnp(void)
{
	struct jail_seccomp_prog prog;
	struct sbx_err err = { 0, "" };
	int rc;

	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 0)
		return 2;
	if (jail_seccomp_compile(&prog, 0, &err) < 0)
		return 3;
	rc = jail_seccomp_load(&prog, &err);
	jail_seccomp_free(&prog);
	return (rc == -1 && err.code == EPERM && strstr(err.msg, "NO_NEW_PRIVS")) ? 0 : 1;
}

static void refuses_without_nnp(void **state)
{
	pid_t pid;
	int st;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(load_without_nnp());
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static int c_clone3(void)
{
	uint64_t args[11] = { 0 };

	args[4] = SIGCHLD;
	return expect_errno(syscall(435, args, sizeof(args)), ENOSYS);
}
static int c_unshare(void) { return expect_errno(syscall(SYS_unshare, CLONE_NEWUSER), EPERM); }
static int c_clone_ns(void)
{
	return expect_errno(syscall(SYS_clone, CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0), EPERM);
}
static int c_fork(void)
{
	pid_t p = fork();
	int st;

	if (p == 0)
		_exit(5);
	return (p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 5) ? 0 : 1;
}
static int c_tiocsti(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	char c = 'x';

	return expect_errno(syscall(SYS_ioctl, fd, 0xFFFFFFFF00005412UL, &c), EPERM);
}
static int c_raw(void) { return expect_errno(socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, 1), EPERM); }
static int c_packet(void) { return expect_errno(socket(AF_PACKET, SOCK_RAW, 0), EAFNOSUPPORT); }
static int c_tcp(void) { return socket(AF_INET6, SOCK_STREAM, 0) >= 0 ? 0 : 1; }
static int c_io_uring(void)
{
	char p[120] = { 0 };

	return expect_errno(syscall(425, 8, p), ENOSYS);
}
static int c_memfd_secret(void) { return expect_errno(syscall(447, 0), ENOSYS); }
static int c_vm_readv(void)
{
	return expect_errno(syscall(SYS_process_vm_readv, getpid(), NULL, 0, NULL, 0, 0), EPERM);
}
static int c_vm_readv_ok(void)
{
	return syscall(SYS_process_vm_readv, getpid(), NULL, 0, NULL, 0, 0) == 0 ? 0 : 1;
}
static int c_x32(void)
{
	syscall(0x40000000L | SYS_getpid);
	return 1; /* must not get here */
}

static void policy_answers(void **state)
{
	(void)state;
	assert_int_equal(in_child(0, c_clone3), 0);
	assert_int_equal(in_child(0, c_unshare), 0);
	assert_int_equal(in_child(0, c_clone_ns), 0);
	assert_int_equal(in_child(0, c_fork), 0);
	assert_int_equal(in_child(0, c_tiocsti), 0);
	assert_int_equal(in_child(0, c_raw), 0);
	assert_int_equal(in_child(0, c_packet), 0);
	assert_int_equal(in_child(0, c_tcp), 0);
	assert_int_equal(in_child(0, c_io_uring), 0);
	assert_int_equal(in_child(0, c_memfd_secret), 0);
	assert_int_equal(in_child(0, c_vm_readv), 0);
	assert_int_equal(in_child(0, c_x32), 128 + SIGSYS);
}

static void debug_profile(void **state)
{
	(void)state;
	assert_int_equal(in_child(JAIL_SECCOMP_DEBUG, c_vm_readv_ok), 0);
	/* everything else stays refused */
	assert_int_equal(in_child(JAIL_SECCOMP_DEBUG, c_unshare), 0);
	assert_int_equal(in_child(JAIL_SECCOMP_DEBUG, c_clone3), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(compiles),
		cmocka_unit_test(refuses_without_nnp),
		cmocka_unit_test(policy_answers),
		cmocka_unit_test(debug_profile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
