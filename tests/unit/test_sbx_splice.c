/* Unit tests of lib/sbx_splice.c, the two-way relay with half-close, over
 * real socket pairs: a and b are the relay's ends, pa and pb the peers the
 * test speaks as. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "sbx_splice.h"

struct fx {
	int a, pa, b, pb;
	struct sbx_buf to_a, to_b;
	struct sbx_splice s;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	int x[2], y[2];

	if (!f || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, x) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, y) < 0)
		return -1;
	f->a = x[0], f->pa = x[1], f->b = y[0], f->pb = y[1];
	sbx_buf_init(&f->to_a, 0);
	sbx_buf_init(&f->to_b, 0);
	sbx_splice_init(&f->s, &f->to_a, &f->to_b, 8);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	close(f->a), close(f->pa), close(f->b), close(f->pb);
	sbx_buf_free(&f->to_a);
	sbx_buf_free(&f->to_b);
	free(f);
	return 0;
}

static void expect_bytes(int fd, const char *want)
{
	char b[64];
	ssize_t n = recv(fd, b, sizeof(b), MSG_DONTWAIT);

	assert_int_equal(n, (ssize_t)strlen(want));
	assert_memory_equal(b, want, strlen(want));
}

static void expect_eof(int fd)
{
	char b[4];

	assert_int_equal(recv(fd, b, sizeof(b), MSG_DONTWAIT), 0);
}

static void expect_nothing(int fd)
{
	char b[4];

	assert_int_equal(recv(fd, b, sizeof(b), MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
}

/* Bytes both ways, in order, and what each side waits for. */
static void relays_both_ways(void **state)
{
	struct fx *f = *state;

	assert_int_equal(sbx_splice_events(&f->s, SBX_SPLICE_A), SBX_SPLICE_IN);
	assert_int_equal(send(f->pa, "ping", 4, 0), 4);
	assert_int_equal(send(f->pb, "pong", 4, 0), 4);
	assert_int_equal(sbx_splice_read(&f->s, SBX_SPLICE_A, f->a), 4);
	assert_int_equal(sbx_splice_read(&f->s, SBX_SPLICE_B, f->b), 4);
	assert_int_equal(sbx_splice_read(&f->s, SBX_SPLICE_B, f->b), -2);   /* nothing now */
	assert_int_equal(sbx_splice_events(&f->s, SBX_SPLICE_B), SBX_SPLICE_IN | SBX_SPLICE_OUT);
	assert_int_equal(sbx_splice_step(&f->s, f->a, f->b), 1);
	expect_bytes(f->pb, "ping");
	expect_bytes(f->pa, "pong");
	assert_int_equal(sbx_splice_events(&f->s, SBX_SPLICE_B), SBX_SPLICE_IN);
}

/* A side is not read past cap bytes toward the other: backpressure. */
static void bounded_by_cap(void **state)
{
	struct fx *f = *state;

	assert_int_equal(send(f->pa, "0123456789abc", 13, 0), 13);
	assert_int_equal(sbx_splice_read(&f->s, SBX_SPLICE_A, f->a), 8);
	assert_int_equal(f->to_b.len, 8);
	assert_int_equal(sbx_splice_read(&f->s, SBX_SPLICE_A, f->a), -2);   /* full */
	assert_false(sbx_splice_events(&f->s, SBX_SPLICE_A) & SBX_SPLICE_IN);
	assert_int_equal(sbx_splice_step(&f->s, f->a, f->b), 1);
	assert_int_equal(sbx_splice_read(&f->s, SBX_SPLICE_A, f->a), 5);
	assert_int_equal(sbx_splice_step(&f->s, f->a, f->b), 1);
	expect_bytes(f->pb, "0123456789abc");
}

/* EOF from A reaches B as a half-close after A's last bytes, and B can
 * still answer; the splice ends when both directions ended. */
static void half_close_in_order(void **state)
{
	struct fx *f = *state;

	assert_int_equal(send(f->pa, "last", 4, 0), 4);
	assert_int_equal(shutdown(f->pa, SHUT_WR), 0);
	assert_int_equal(sbx_splice_read(&f->s, SBX_SPLICE_A, f->a), 4);
	assert_int_equal(sbx_splice_read(&f->s, SBX_SPLICE_A, f->a), 0);
	assert_false(sbx_splice_events(&f->s, SBX_SPLICE_A) & SBX_SPLICE_IN);
	assert_int_equal(sbx_splice_step(&f->s, f->a, f->b), 1);
	expect_bytes(f->pb, "last");
	expect_eof(f->pb);
	/* the other way still works */
	assert_int_equal(send(f->pb, "reply", 5, 0), 5);
	assert_int_equal(shutdown(f->pb, SHUT_WR), 0);
	assert_int_equal(sbx_splice_read(&f->s, SBX_SPLICE_B, f->b), 5);
	assert_int_equal(sbx_splice_read(&f->s, SBX_SPLICE_B, f->b), 0);
	assert_int_equal(sbx_splice_step(&f->s, f->a, f->b), 0);   /* over */
	expect_bytes(f->pa, "reply");
	expect_eof(f->pa);
}

/* The EOF waits for the bytes before it: nothing is shut down while they
 * are still buffered. */
static void eof_waits_for_bytes(void **state)
{
	struct fx *f = *state;

	assert_int_equal(send(f->pa, "abcdefgh", 8, 0), 8);
	assert_int_equal(shutdown(f->pa, SHUT_WR), 0);
	assert_int_equal(sbx_splice_read(&f->s, SBX_SPLICE_A, f->a), 8);
	/* cap reached: the EOF is not even read yet */
	assert_int_equal(sbx_splice_read(&f->s, SBX_SPLICE_A, f->a), -2);
	assert_int_equal(f->s.shut[SBX_SPLICE_B], 0);
	assert_int_equal(sbx_splice_step(&f->s, f->a, f->b), 1);
	expect_bytes(f->pb, "abcdefgh");
	expect_nothing(f->pb);
	assert_int_equal(sbx_splice_read(&f->s, SBX_SPLICE_A, f->a), 0);
	assert_int_equal(sbx_splice_step(&f->s, f->a, f->b), 1);
	expect_eof(f->pb);
}

/* A side that hung up: its pending bytes are dropped, it counts as shut,
 * and a write error to a closed peer is -1. */
static void gone_side_and_write_error(void **state)
{
	struct fx *f = *state;

	assert_int_equal(send(f->pa, "lost", 4, 0), 4);
	assert_int_equal(sbx_splice_read(&f->s, SBX_SPLICE_A, f->a), 4);
	sbx_splice_gone(&f->s, SBX_SPLICE_B);
	assert_int_equal(f->to_b.len, 0);
	assert_int_equal(sbx_splice_events(&f->s, SBX_SPLICE_B), SBX_SPLICE_IN);
	assert_int_equal(sbx_splice_step(&f->s, f->a, f->b), 1);
	expect_nothing(f->pb);

	close(f->pa);
	f->pa = -1;
	assert_int_equal(send(f->pb, "x", 1, 0), 1);
	assert_int_equal(sbx_splice_read(&f->s, SBX_SPLICE_B, f->b), 1);
	assert_int_equal(sbx_splice_step(&f->s, f->a, f->b), -1);
}

/* The plain send of a buffer: all of it when the socket takes it; a
 * closed peer is -1 and the bytes stay. */
static void send_buf_writes_all(void **state)
{
	struct fx *f = *state;
	struct sbx_buf b;

	sbx_buf_init(&b, 0);
	assert_int_equal(sbx_buf_append(&b, "reply", 5), 0);
	assert_int_equal(sbx_send_buf(f->a, &b), 0);
	assert_int_equal(b.len, 0);
	expect_bytes(f->pa, "reply");
	close(f->pa);
	f->pa = -1;
	assert_int_equal(sbx_buf_append(&b, "more", 4), 0);
	assert_int_equal(sbx_send_buf(f->a, &b), -1);
	assert_int_equal(b.len, 4);
	sbx_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(relays_both_ways, setup, teardown),
		cmocka_unit_test_setup_teardown(bounded_by_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(half_close_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(eof_waits_for_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(gone_side_and_write_error, setup, teardown),
		cmocka_unit_test_setup_teardown(send_buf_writes_all, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
