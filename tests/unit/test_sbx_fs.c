/* Unit tests of lib/sbx_fs.c: mkdir -p, the descriptor-walking rm -rf,
 * writing a string to a file, writing all of a buffer to a pipe or a
 * socket, and the binary's own directory. Real files in
 * a temp dir. */
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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "sbx_fs.h"

static char top[64];

static int setup(void **state)
{
	(void)state;
	snprintf(top, sizeof(top), "/tmp/sbx-fs-test.XXXXXX");
	return mkdtemp(top) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return sbx_rmtree(top);
}

static const char *at(const char *rel)
{
	static char p[4][PATH_MAX];
	static int i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", top, rel);
	return p[i];
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	return st.st_mode;
}

static void mkdir_p_makes_parents(void **state)
{
	mode_t old = umask(0);

	(void)state;
	assert_int_equal(sbx_mkdir_p(at("a/b/c"), 0751, 0700), 0);
	umask(old);
	assert_true(S_ISDIR(mode_of(at("a/b/c"))));
	assert_int_equal(mode_of(at("a")) & 0777, 0751);
	assert_int_equal(mode_of(at("a/b")) & 0777, 0751);
	assert_int_equal(mode_of(at("a/b/c")) & 0777, 0700);
	/* again: nothing to do, fine; trailing slash too */
	assert_int_equal(sbx_mkdir_p(at("a/b/c"), 0755, 0755), 0);
	assert_int_equal(sbx_mkdir_p(at("a/b/"), 0755, 0755), 0);
	/* a file in the way */
	assert_int_equal(sbx_write_file(at("a/f"), "x", O_CREAT | O_EXCL, 0600), 0);
	errno = 0;
	assert_int_equal(sbx_mkdir_p(at("a/f"), 0755, 0755), -1);
	assert_int_equal(errno, ENOTDIR);
	errno = 0;
	assert_int_equal(sbx_mkdir_p(at("a/f/g"), 0755, 0755), -1);
	assert_int_equal(errno, ENOTDIR);
}

static void rmtree_removes_all(void **state)
{
	(void)state;
	assert_int_equal(sbx_mkdir_p(at("t/d1/d2"), 0755, 0755), 0);
	assert_int_equal(sbx_write_file(at("t/d1/f"), "1", O_CREAT, 0600), 0);
	assert_int_equal(sbx_write_file(at("t/d1/d2/g"), "2", O_CREAT, 0600), 0);
	assert_int_equal(sbx_rmtree(at("t")), 0);
	assert_int_equal(access(at("t"), F_OK), -1);
	/* missing: success */
	assert_int_equal(sbx_rmtree(at("t")), 0);
	/* a plain file at the top goes too */
	assert_int_equal(sbx_write_file(at("lone"), "1", O_CREAT, 0600), 0);
	assert_int_equal(sbx_rmtree(at("lone")), 0);
	assert_int_equal(access(at("lone"), F_OK), -1);
}

/* A symlink inside the tree is removed as a name: what it points at
 * stays whole. */
static void rmtree_never_follows_a_symlink(void **state)
{
	(void)state;
	assert_int_equal(sbx_mkdir_p(at("keep/sub"), 0755, 0755), 0);
	assert_int_equal(sbx_write_file(at("keep/sub/precious"), "p", O_CREAT, 0600), 0);
	assert_int_equal(sbx_mkdir_p(at("t"), 0755, 0755), 0);
	assert_int_equal(symlink(at("keep"), at("t/link")), 0);
	assert_int_equal(symlink(at("keep/sub/precious"), at("t/flink")), 0);
	assert_int_equal(sbx_rmtree(at("t")), 0);
	assert_int_equal(access(at("t"), F_OK), -1);
	assert_int_equal(access(at("keep/sub/precious"), F_OK), 0);
	/* a symlink as the top: removed, not followed */
	assert_int_equal(symlink(at("keep"), at("top-link")), 0);
	assert_int_equal(sbx_rmtree(at("top-link")), 0);
	assert_true(S_ISDIR(mode_of(at("keep/sub"))));
}

static void rmtree_depth_is_bounded(void **state)
{
	char rel[PATH_MAX] = "deep";

	(void)state;
	for (int i = 0; i < 40; i++)
		strcat(rel, "/d");
	assert_int_equal(sbx_mkdir_p(at(rel), 0755, 0755), 0);
	errno = 0;
	assert_int_equal(sbx_rmtree(at("deep")), -1);
	assert_int_equal(errno, ELOOP);
	assert_int_equal(access(at("deep"), F_OK), 0);   /* refused, kept */
	/* emptied from the bottom, it goes */
	assert_int_equal(rename(at(rel), at("moved")), 0);
	for (int i = 40; i > 0; i--) {
		rel[strlen(rel) - 2] = 0;
		assert_int_equal(rmdir(at(rel)), 0);
	}
	assert_int_equal(rmdir(at("moved")), 0);
	assert_int_equal(access(at("deep"), F_OK), -1);
}

static void write_file_whole_string(void **state)
{
	char b[64];
	int fd;
	ssize_t n;

	(void)state;
	assert_int_equal(sbx_write_file(at("w"), "first text", O_CREAT | O_EXCL | O_NOFOLLOW, 0444), 0);
	assert_int_equal(mode_of(at("w")) & 0777, 0444);
	fd = open(at("w"), O_RDONLY);
	n = read(fd, b, sizeof(b));
	close(fd);
	assert_int_equal(n, 10);
	assert_memory_equal(b, "first text", 10);
	/* O_EXCL: an existing file is EEXIST, and untouched */
	errno = 0;
	assert_int_equal(sbx_write_file(at("w"), "x", O_CREAT | O_EXCL, 0600), -1);
	assert_int_equal(errno, EEXIST);
	/* O_NOFOLLOW: a symlink is not written through */
	assert_int_equal(symlink(at("w"), at("l")), 0);
	errno = 0;
	assert_int_equal(sbx_write_file(at("l"), "x", O_NOFOLLOW, 0), -1);
	assert_int_equal(errno, ELOOP);
	/* no flags: the file must exist */
	errno = 0;
	assert_int_equal(sbx_write_file(at("none"), "x", 0, 0), -1);
	assert_int_equal(errno, ENOENT);
	/* a write the file refuses: the error, not silence */
	errno = 0;
	assert_int_equal(sbx_write_file("/proc/self/stat", "x", 0, 0), -1);
	assert_true(errno != 0);
}

static void read_file_whole_and_bounded(void **state)
{
	char b[8], big[70000];

	(void)state;
	assert_int_equal(sbx_write_file(at("r"), "0123456789", O_CREAT, 0600), 0);
	assert_int_equal(sbx_read_file(at("r"), big, sizeof(big)), 10);
	assert_string_equal(big, "0123456789");
	/* cut at n - 1, always terminated */
	assert_int_equal(sbx_read_file(at("r"), b, sizeof(b)), 7);
	assert_string_equal(b, "0123456");
	/* empty, missing */
	assert_int_equal(sbx_write_file(at("e"), "", O_CREAT, 0600), 0);
	assert_int_equal(sbx_read_file(at("e"), b, sizeof(b)), 0);
	assert_string_equal(b, "");
	errno = 0;
	assert_int_equal(sbx_read_file(at("none"), b, sizeof(b)), -1);
	assert_int_equal(errno, ENOENT);
	/* a /proc file, read to its end */
	assert_true(sbx_read_file("/proc/self/status", big, sizeof(big)) > 0);
	assert_non_null(strstr(big, "VmRSS:"));
}

/* The old file or the new one, never a temp file left, never through a
 * symlink at the temp name. */
static void replace_file_whole(void **state)
{
	char b[32];

	(void)state;
	assert_int_equal(sbx_replace_file(at("r"), "one", 0600), 0);
	assert_int_equal(sbx_replace_file(at("r"), "two!", 0600), 0);
	assert_int_equal(sbx_read_file(at("r"), b, sizeof(b)), 4);
	assert_string_equal(b, "two!");
	assert_int_equal(access(at("r.tmp"), F_OK), -1);
	/* a stale temp file (even a symlink) is removed, not written through */
	assert_int_equal(symlink(at("target"), at("r.tmp")), 0);
	assert_int_equal(sbx_replace_file(at("r"), "three", 0600), 0);
	assert_int_equal(access(at("target"), F_OK), -1);
	assert_int_equal(sbx_read_file(at("r"), b, sizeof(b)), 5);
	/* a directory that is not there: -1, nothing made */
	errno = 0;
	assert_int_equal(sbx_replace_file(at("none/r"), "x", 0600), -1);
	assert_int_equal(errno, ENOENT);
}

/* More than a pipe holds, read by a child meanwhile: every byte arrives,
 * in order; a socket whose peer is gone is EPIPE, not a SIGPIPE. */
static void write_all_pipe_and_socket(void **state)
{
	static unsigned char big[256 * 1024], got[sizeof big];
	int p[2], sv[2];
	size_t have = 0;

	(void)state;
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (unsigned char)(i * 7 + i / 251);
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		_exit(sbx_write_all(p[1], big, sizeof big) ? 1 : 0);
	}
	close(p[1]);
	for (ssize_t k; (k = read(p[0], got + have, sizeof got - have)) > 0;)
		have += (size_t)k;
	close(p[0]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(have, sizeof big);
	assert_memory_equal(got, big, sizeof big);

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	close(sv[1]);
	errno = 0;
	assert_int_equal(sbx_write_all(sv[0], big, 10), -1);
	assert_int_equal(errno, EPIPE);
	close(sv[0]);
}

static void self_dir_is_the_binary_s(void **state)
{
	char d[PATH_MAX], exe[PATH_MAX], small[4];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	(void)state;
	assert_true(n > 0);
	exe[n] = 0;
	*strrchr(exe, '/') = 0;
	assert_int_equal(sbx_self_dir(d, sizeof(d)), 0);
	assert_string_equal(d, exe);
	errno = 0;
	assert_int_equal(sbx_self_dir(small, sizeof(small)), -1);
	assert_int_equal(errno, ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(mkdir_p_makes_parents, setup, teardown),
		cmocka_unit_test_setup_teardown(rmtree_removes_all, setup, teardown),
		cmocka_unit_test_setup_teardown(rmtree_never_follows_a_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(rmtree_depth_is_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(write_file_whole_string, setup, teardown),
		cmocka_unit_test_setup_teardown(read_file_whole_and_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(replace_file_whole, setup, teardown),
		cmocka_unit_test(write_all_pipe_and_socket),
		cmocka_unit_test(self_dir_is_the_binary_s),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
