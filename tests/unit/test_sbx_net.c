/* Unit tests of lib/sbx_net.c: the symlink-safe UNIX connect that every
 * host-side path into a sandbox's tree uses, the plain connect with its
 * timeout, the 0600 listener and descriptor passing. Real sockets in a
 * temp dir. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "sbx_net.h"

struct fx {
	char top[64];          /* temp dir: in/ (the "sandbox's" dir), out/ */
	char in[96], out[96];
	int in_lfd, out_lfd;   /* listeners at in/s.sock and out/s.sock */
};

static int listen_at(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 8) < 0)
		return -1;
	return fd;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char p[160];

	snprintf(f->top, sizeof(f->top), "/tmp/sbx-net-test.XXXXXX");
	if (!f || !mkdtemp(f->top))
		return -1;
	snprintf(f->in, sizeof(f->in), "%s/in", f->top);
	snprintf(f->out, sizeof(f->out), "%s/out", f->top);
	if (mkdir(f->in, 0755) < 0 || mkdir(f->out, 0755) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/s.sock", f->in);
	f->in_lfd = listen_at(p);
	snprintf(p, sizeof(p), "%s/s.sock", f->out);
	f->out_lfd = listen_at(p);
	*state = f;
	return f->in_lfd < 0 || f->out_lfd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	close(f->in_lfd);
	close(f->out_lfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->top);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

/* fd is a non-blocking, close-on-exec connection that reached the
 * listener in the "sandbox's" dir; both ends are closed. */
static void expect_connected(struct fx *f, int fd)
{
	int c;

	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	c = accept(f->in_lfd, NULL, NULL);
	assert_true(c >= 0);
	close(c);
	close(fd);
}

/* Nothing reached the listener outside the "sandbox's" dir. */
static void assert_out_untouched(struct fx *f)
{
	int c = accept(f->out_lfd, NULL, NULL);

	assert_int_equal(c, -1);
	assert_int_equal(errno, EAGAIN);
}

static void expect_fail(struct fx *f, const char *name, int e)
{
	errno = 0;
	assert_int_equal(sbx_unix_connect_beneath(f->in, name), -1);
	assert_int_equal(errno, e);
	assert_out_untouched(f);
}

static void connects_to_a_socket(void **state)
{
	struct fx *f = *state;
	char p[160];
	int fd = sbx_unix_connect_beneath(f->in, "s.sock");

	expect_connected(f, fd);
	snprintf(p, sizeof(p), "%s/s.sock", f->in);
	fd = sbx_unix_connect_last(p);
	assert_true(fd >= 0);
	close(fd);
	close(accept(f->in_lfd, NULL, NULL));
}

static void never_follows_a_symlink(void **state)
{
	struct fx *f = *state;
	char p[160], t[160];

	/* the last component a link to a socket outside */
	snprintf(p, sizeof(p), "%s/agent.sock", f->in);
	snprintf(t, sizeof(t), "%s/s.sock", f->out);
	assert_int_equal(symlink(t, p), 0);
	expect_fail(f, "agent.sock", ELOOP);
	assert_int_equal(sbx_unix_connect_last(p), -1);
	assert_int_equal(errno, ELOOP);
	assert_out_untouched(f);
	/* a relative link, and a link in the middle of the path */
	assert_int_equal(unlink(p), 0);
	assert_int_equal(symlink("../out/s.sock", p), 0);
	expect_fail(f, "agent.sock", ELOOP);
	snprintf(p, sizeof(p), "%s/sub", f->in);
	assert_int_equal(symlink(f->out, p), 0);
	expect_fail(f, "sub/s.sock", ELOOP);
}

static void stays_beneath_its_dir(void **state)
{
	struct fx *f = *state;

	expect_fail(f, "../out/s.sock", EXDEV);
	expect_fail(f, "/tmp", EXDEV);
}

static void refuses_what_is_not_a_socket(void **state)
{
	struct fx *f = *state;
	char p[160];
	int fd;

	snprintf(p, sizeof(p), "%s/file", f->in);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	expect_fail(f, "file", ENOTSOCK);
	snprintf(p, sizeof(p), "%s/fifo", f->in);
	assert_int_equal(mkfifo(p, 0600), 0);
	expect_fail(f, "fifo", ENOTSOCK);          /* and does not block on it */
	expect_fail(f, ".", ENOTSOCK);
	expect_fail(f, "missing.sock", ENOENT);
	errno = 0;
	assert_int_equal(sbx_unix_connect_last("no-slash"), -1);
	assert_int_equal(errno, EINVAL);
}

/* The connect goes through /proc/self/fd/N: a socket whose path is longer
 * than sun_path is reachable too. */
static void long_paths_work(void **state)
{
	struct fx *f = *state;
	char dir[512], p[PATH_MAX];
	int lfd, fd;

	snprintf(dir, sizeof(dir), "%s/in/%0120d", f->top, 0);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(chdir(dir), 0);
	lfd = listen_at("l.sock");
	assert_int_equal(chdir("/"), 0);
	assert_true(lfd >= 0);
	snprintf(p, sizeof(p), "%s/l.sock", dir);
	assert_true(strlen(p) > sizeof(((struct sockaddr_un *)0)->sun_path));
	fd = sbx_unix_connect_last(p);
	assert_true(fd >= 0);
	close(fd);
	close(lfd);
}

/* The plain connect: non-blocking without a timeout, blocking with
 * both timeouts set with one; errors as errno. */
static void plain_connect(void **state)
{
	struct fx *f = *state;
	char p[160], big[200];
	struct timeval tv;
	socklen_t l = sizeof(tv);
	int fd, c;

	snprintf(p, sizeof(p), "%s/s.sock", f->in);
	fd = sbx_unix_connect(p, 0);
	expect_connected(f, fd);

	fd = sbx_unix_connect(p, 1500);
	assert_true(fd >= 0);
	assert_false(fcntl(fd, F_GETFL) & O_NONBLOCK);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &l), 0);
	assert_int_equal(tv.tv_sec, 1);
	assert_int_equal(tv.tv_usec, 500000);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, &l), 0);
	assert_int_equal(tv.tv_sec, 1);
	close(fd);
	c = accept(f->in_lfd, NULL, NULL);
	close(c);

	snprintf(p, sizeof(p), "%s/none.sock", f->in);
	errno = 0;
	assert_int_equal(sbx_unix_connect(p, 0), -1);
	assert_int_equal(errno, ENOENT);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	errno = 0;
	assert_int_equal(sbx_unix_connect(big, 0), -1);
	assert_int_equal(errno, ENAMETOOLONG);
}

/* The listener is 0600 whatever the umask, replaces a stale socket file
 * and takes connections. */
static void listener_is_private(void **state)
{
	struct fx *f = *state;
	char p[160];
	struct stat st;
	mode_t old = umask(0);
	int lfd, fd, c;

	snprintf(p, sizeof(p), "%s/l.sock", f->in);
	lfd = listen_at(p);                        /* a stale one: its file stays */
	assert_true(lfd >= 0);
	close(lfd);
	lfd = sbx_unix_listen(p, 4);
	umask(old);
	assert_true(lfd >= 0);
	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	fd = sbx_unix_connect(p, 0);
	assert_true(fd >= 0);
	c = accept(lfd, NULL, NULL);
	assert_true(c >= 0);
	close(c);
	close(fd);
	close(lfd);
}

static int open_fds(void)
{
	int n = 0;

	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/* A descriptor goes across with its bytes; a second one is closed, not
 * handed on; plain bytes give -1. */
static void passes_descriptors(void **state)
{
	int sp[2], pp[2], fd = -2;
	char b[16];
	struct stat a, r;
	union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int) * 2)]; } u;
	struct iovec iov = { "y", 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = u.b, .msg_controllen = sizeof(u.b) };
	int two[2], base;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	assert_int_equal(pipe(pp), 0);
	assert_int_equal(sbx_send_fd(sp[0], "hello", 5, pp[1], 0), 5);
	assert_int_equal(sbx_recv_fd(sp[1], b, sizeof(b), &fd, 0), 5);
	assert_memory_equal(b, "hello", 5);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(fstat(fd, &r), 0);
	assert_int_equal(fstat(pp[1], &a), 0);
	assert_int_equal(a.st_ino, r.st_ino);
	assert_int_equal(write(fd, "z", 1), 1);          /* the very pipe */
	assert_int_equal(read(pp[0], b, 1), 1);
	assert_int_equal(b[0], 'z');
	close(fd);

	/* two descriptors: the first is kept, the second closed */
	memset(&u, 0, sizeof(u));
	u.h.cmsg_level = SOL_SOCKET;
	u.h.cmsg_type = SCM_RIGHTS;
	u.h.cmsg_len = CMSG_LEN(sizeof(int) * 2);
	two[0] = pp[0];
	two[1] = pp[1];
	memcpy(CMSG_DATA(&u.h), two, sizeof(two));
	base = open_fds();
	assert_int_equal(sendmsg(sp[0], &m, 0), 1);
	assert_int_equal(sbx_recv_fd(sp[1], b, sizeof(b), &fd, 0), 1);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &r), 0);
	assert_int_equal(fstat(pp[0], &a), 0);
	assert_int_equal(a.st_ino, r.st_ino);
	close(fd);
	assert_int_equal(open_fds(), base);              /* the second: closed */

	assert_int_equal(write(sp[0], "x", 1), 1);
	assert_int_equal(sbx_recv_fd(sp[1], b, sizeof(b), &fd, 0), 1);
	assert_int_equal(fd, -1);
	close(sp[0]);
	assert_int_equal(sbx_recv_fd(sp[1], b, sizeof(b), &fd, 0), 0);
	assert_int_equal(fd, -1);
	close(sp[1]);
	close(pp[0]);
	close(pp[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(connects_to_a_socket, setup, teardown),
		cmocka_unit_test_setup_teardown(never_follows_a_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(stays_beneath_its_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(refuses_what_is_not_a_socket, setup, teardown),
		cmocka_unit_test_setup_teardown(long_paths_work, setup, teardown),
		cmocka_unit_test_setup_teardown(plain_connect, setup, teardown),
		cmocka_unit_test_setup_teardown(listener_is_private, setup, teardown),
		cmocka_unit_test(passes_descriptors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
