/* Unit tests of lib/sbx_dial.c: the parse of the guest's "OK <port>\n"
 * (byte by byte, the port checked, one spelling) and a whole dial over a
 * real UNIX socket pair, where the bytes behind the line must stay in the
 * socket for the stream. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "sbx_dial.h"

static long parse(const char *s, int port)
{
	return sbx_dial_parse_ok(s, strlen(s), port);
}

static void accepts_the_line_with_its_port(void **state)
{
	(void)state;
	assert_int_equal(parse("OK 1024\n", 1024), 8);
	assert_int_equal(parse("OK 1\n", 1), 5);
	assert_int_equal(parse("OK 65535\n", 65535), 9);
	assert_int_equal(parse("OK 1024\r\n", 1024), 9);
	/* the stream follows the line: only the line is taken */
	assert_int_equal(parse("OK 8080\n\x00\x00\x00\x05{}", 8080), 8);
}

static void needs_more_on_every_prefix(void **state)
{
	const char *line = "OK 1024\n";

	(void)state;
	for (size_t n = 0; n < strlen(line); n++)
		assert_int_equal(sbx_dial_parse_ok(line, n, 1024), 0);
}

static void refuses_another_port(void **state)
{
	(void)state;
	assert_int_equal(parse("OK 1025\n", 1024), -1);
	assert_int_equal(parse("OK 102\n", 1024), -1);
	assert_int_equal(parse("OK 10240\n", 1024), -1);
	/* Firecracker's muxer names its host-side port: not the guest's */
	assert_int_equal(parse("OK 1073741824\n", 1024), -1);
}

static void refuses_other_words_at_once(void **state)
{
	(void)state;
	/* known bad from the first byte: no waiting for a newline */
	assert_int_equal(parse("N", 1024), -1);
	assert_int_equal(parse("O", 1024), 0);
	assert_int_equal(parse("OX", 1024), -1);
	assert_int_equal(parse("OK1024\n", 1024), -1);
	assert_int_equal(parse("ok 1024\n", 1024), -1);
	assert_int_equal(parse("ERR 1024\n", 1024), -1);
	assert_int_equal(sbx_dial_parse_ok("\x00\x00\x00\x10", 4, 1024), -1);
}

static void one_spelling_only(void **state)
{
	(void)state;
	assert_int_equal(parse("OK 01024\n", 1024), -1);
	assert_int_equal(parse("OK +1024\n", 1024), -1);
	assert_int_equal(parse("OK  1024\n", 1024), -1);
	assert_int_equal(parse("OK 1024 \n", 1024), -1);
	assert_int_equal(parse("OK \n", 1024), -1);
	assert_int_equal(parse("OK 0\n", 0), -1);
	assert_int_equal(parse("OK 1024\r\r\n", 1024), -1);
	assert_int_equal(parse("OK 10x4\n", 1024), -1);
}

static void refuses_a_line_too_long(void **state)
{
	char buf[64];

	(void)state;
	memset(buf, '1', sizeof(buf));
	memcpy(buf, "OK ", 3);
	/* no newline within the longest good line: never a good one */
	assert_int_equal(sbx_dial_parse_ok(buf, SBX_DIAL_LINE_MAX - 1, 1024), 0);
	assert_int_equal(sbx_dial_parse_ok(buf, SBX_DIAL_LINE_MAX, 1024), -1);
	assert_int_equal(sbx_dial_parse_ok(buf, sizeof(buf), 1024), -1);
}

/* A guest on the other end of a listening socket in a temp dir. */
struct fx {
	char dir[64], path[96];
	int lfd;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	snprintf(f->dir, sizeof(f->dir), "/tmp/sbx-dial-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/g.sock", f->dir);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", f->path);
	f->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (f->lfd < 0 || bind(f->lfd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(f->lfd, 8) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	close(f->lfd);
	unlink(f->path);
	rmdir(f->dir);
	free(f);
	return 0;
}

static void dial_writes_connect_and_reads_exactly_ok(void **state)
{
	struct fx *f = *state;
	char buf[64];
	int fd = sbx_dial_start(f->path, 1024), g;
	ssize_t n;

	assert_true(fd >= 0);
	g = accept(f->lfd, NULL, NULL);
	assert_true(g >= 0);
	n = read(g, buf, sizeof(buf));
	assert_int_equal(n, 13);
	assert_memory_equal(buf, "CONNECT 1024\n", 13);
	/* not answered yet: not ready */
	assert_int_equal(sbx_dial_finish(fd, 1024), 0);
	/* half a line: still not */
	assert_int_equal(write(g, "OK 10", 5), 5);
	assert_int_equal(sbx_dial_finish(fd, 1024), 0);
	/* the rest, with the stream's first bytes behind it */
	assert_int_equal(write(g, "24\nHELLO", 8), 8);
	assert_int_equal(sbx_dial_finish(fd, 1024), 1);
	n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	assert_int_equal(n, 5);
	assert_memory_equal(buf, "HELLO", 5);
	close(g);
	close(fd);
}

static void dial_refused_or_closed(void **state)
{
	struct fx *f = *state;
	int fd, g;

	fd = sbx_dial_start(f->path, 8080);
	g = accept(f->lfd, NULL, NULL);
	assert_int_equal(write(g, "OK 1024\n", 8), 8);   /* another port */
	assert_int_equal(sbx_dial_finish(fd, 8080), -1);
	assert_int_equal(errno, ECONNREFUSED);
	close(g);
	close(fd);

	fd = sbx_dial_start(f->path, 8080);
	g = accept(f->lfd, NULL, NULL);
	close(g);                                       /* gone, no answer */
	assert_int_equal(sbx_dial_finish(fd, 8080), -1);
	assert_true(errno == ECONNRESET);
	close(fd);
}

static void dial_start_errors(void **state)
{
	struct fx *f = *state;
	char none[128];

	assert_int_equal(sbx_dial_start(f->path, 0), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(sbx_dial_start(f->path, 65536), -1);
	assert_int_equal(errno, EINVAL);
	snprintf(none, sizeof(none), "%s/none.sock", f->dir);
	assert_int_equal(sbx_dial_start(none, 1024), -1);
	assert_int_equal(errno, ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(accepts_the_line_with_its_port),
		cmocka_unit_test(needs_more_on_every_prefix),
		cmocka_unit_test(refuses_another_port),
		cmocka_unit_test(refuses_other_words_at_once),
		cmocka_unit_test(one_spelling_only),
		cmocka_unit_test(refuses_a_line_too_long),
		cmocka_unit_test_setup_teardown(dial_writes_connect_and_reads_exactly_ok,
						setup, teardown),
		cmocka_unit_test_setup_teardown(dial_refused_or_closed, setup, teardown),
		cmocka_unit_test_setup_teardown(dial_start_errors, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
