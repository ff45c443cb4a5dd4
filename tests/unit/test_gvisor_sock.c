/* Unit tests of runner/driver_gvisor_sock.c: the watcher's move of the
 * agent's socket out of the sandbox's dir. A forked child stands in for
 * the sentry (and for the agent binding inside); real sockets in a temp
 * dir laid out like a sandbox's: sock/ (the tmpfs's root, host only) and
 * sock/guest/ (what the sandbox sees at /run/sbx). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../runner/driver_gvisor.h"
#include "sbx_fs.h"
#include "sbx_net.h"

struct fx {
	char top[64];
	char sock[96], guest[128];   /* top/sock, top/sock/guest */
	char inside[160], up[160];   /* guest/agent.sock, sock/agent.sock */
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->top, sizeof(f->top), "/tmp/sbx-gvsock-test.XXXXXX");
	if (!mkdtemp(f->top))
		return -1;
	snprintf(f->sock, sizeof(f->sock), "%s/sock", f->top);
	snprintf(f->guest, sizeof(f->guest), "%s/" GV_GUEST_DIR, f->sock);
	snprintf(f->inside, sizeof(f->inside), "%s/" GV_AGENT_SOCK_NAME, f->guest);
	snprintf(f->up, sizeof(f->up), "%s/" GV_AGENT_SOCK_NAME, f->sock);
	if (mkdir(f->sock, 0700) < 0 || mkdir(f->guest, 0700) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	sbx_rmtree(f->top);
	free(f);
	return 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int bound_at(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		return -1;
	return fd;
}

/* The "agent": binds, then (as sbx_unix_listen does) chmods the path
 * and listens, with a wide gap after the bind; reports the chmod's
 * errno (0: done) on w, then lives until killed. */
static pid_t agent_child(const char *path, int w)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd, e;

		/* a failed assertion skips reap(): never outlive the test */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fd = bound_at(path);
		sleep_ms(300);
		e = chmod(path, 0600) < 0 ? errno : 0;
		if (fd < 0 || listen(fd, 8) < 0)
			_exit(3);
		if (write(w, &e, sizeof(e)) != sizeof(e))
			_exit(4);
		for (;;)
			pause();
	}
	return pid;
}

static void reap(pid_t pid)
{
	int st;

	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

/* Moved only once the agent listens (a rename right after its bind would
 * fail its chmod, and with it the agent's start); afterwards the name is
 * gone from the guest's dir and the socket answers at the host-only one. */
static void test_moves_once_listening(void **state)
{
	struct fx *f = *state;
	int pfd[2], chmod_errno = -1, st = -1, c;
	pid_t pid;
	struct stat sst;

	assert_int_equal(pipe(pfd), 0);
	pid = agent_child(f->inside, pfd[1]);
	assert_true(pid > 0);
	assert_int_equal(gv_sock_hide(f->sock, pid, &st), 0);
	assert_int_equal(read(pfd[0], &chmod_errno, sizeof(chmod_errno)), sizeof(chmod_errno));
	assert_int_equal(chmod_errno, 0);
	assert_int_equal(st, -1);
	assert_int_equal(lstat(f->inside, &sst), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(lstat(f->up, &sst), 0);
	assert_true(S_ISSOCK(sst.st_mode));
	c = sbx_unix_connect_last(f->up);
	assert_true(c >= 0);
	close(c);
	reap(pid);
	close(pfd[0]);
	close(pfd[1]);
}

/* A sandbox that ends before its agent listens: its status, nothing moved. */
static void test_sentry_ends_first(void **state)
{
	struct fx *f = *state;
	int st = -1;
	struct stat sst;
	pid_t pid = fork();

	if (pid == 0) {
		sleep_ms(50);
		_exit(7);
	}
	assert_true(pid > 0);
	assert_int_equal(gv_sock_hide(f->sock, pid, &st), 1);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 7);
	assert_int_equal(lstat(f->up, &sst), -1);
}

/* A symlink at the socket's name is neither connected through nor moved:
 * the listener it points at sees no connection. */
static void test_symlink_not_followed(void **state)
{
	struct fx *f = *state;
	char other[160];
	int lfd, st = -1;
	struct stat sst;
	pid_t pid;

	snprintf(other, sizeof(other), "%s/other.sock", f->top);
	lfd = bound_at(other);
	assert_true(lfd >= 0);
	assert_int_equal(listen(lfd, 8), 0);
	assert_int_equal(symlink(other, f->inside), 0);
	pid = fork();
	if (pid == 0) {
		sleep_ms(200);
		_exit(0);
	}
	assert_int_equal(gv_sock_hide(f->sock, pid, &st), 1);
	assert_int_equal(accept(lfd, NULL, NULL), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(lstat(f->inside, &sst), 0);
	assert_true(S_ISLNK(sst.st_mode));
	assert_int_equal(lstat(f->up, &sst), -1);
	close(lfd);
}

/* Something already at the host-only name is never replaced. */
static void test_no_replace(void **state)
{
	struct fx *f = *state;
	int pfd[2], st = -1, e;
	pid_t pid;

	assert_int_equal(mkdir(f->up, 0700), 0);
	assert_int_equal(pipe(pfd), 0);
	pid = agent_child(f->inside, pfd[1]);
	assert_int_equal(gv_sock_hide(f->sock, pid, &st), -1);
	assert_int_equal(errno, EEXIST);
	assert_int_equal(read(pfd[0], &e, sizeof(e)), sizeof(e));
	reap(pid);
	close(pfd[0]);
	close(pfd[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_moves_once_listening, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sentry_ends_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_not_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_replace, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
