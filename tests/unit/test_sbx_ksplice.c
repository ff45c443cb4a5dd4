/* Unit tests of lib/sbx_ksplice.c, the relay through kernel pipes, over
 * real TCP connections on the loopback (splice(2) wants sockets that
 * splice): a and b are the relay's ends, pa and pb the peers the test
 * speaks as. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
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

#include "sbx_ksplice.h"

#define CAP (64 * 1024)

struct fx {
	int a, pa, b, pb;
	struct sbx_ksplice s;
	unsigned long long read_a, read_b;      /* bytes the relay took from each side */
};

/* A connected pair of non-blocking TCP sockets on 127.0.0.1. */
static int tcp_pair(int *x, int *y)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &al) < 0)
		return -1;
	*x = socket(AF_INET, SOCK_STREAM, 0);
	if (*x < 0 || connect(*x, (struct sockaddr *)&a, sizeof(a)) < 0)
		return -1;
	*y = accept(l, NULL, NULL);
	close(l);
	if (*y < 0)
		return -1;
	fcntl(*x, F_SETFL, O_NONBLOCK);
	fcntl(*y, F_SETFL, O_NONBLOCK);
	return 0;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f || tcp_pair(&f->a, &f->pa) < 0 || tcp_pair(&f->b, &f->pb) < 0 ||
	    sbx_ksplice_init(&f->s, CAP) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	close(f->a), close(f->pa), close(f->b), close(f->pb);
	sbx_ksplice_free(&f->s);
	free(f);
	return 0;
}

/* One pass of the relay as a loop would run it: read each side it may
 * read, then write and pass EOFs on. The step's result. */
static int pump(struct fx *f)
{
	long n;

	if (sbx_ksplice_events(&f->s, SBX_SPLICE_A) & SBX_SPLICE_IN)
		while ((n = sbx_ksplice_read(&f->s, SBX_SPLICE_A, f->a)) > 0)
			f->read_a += (unsigned long long)n;
	if (sbx_ksplice_events(&f->s, SBX_SPLICE_B) & SBX_SPLICE_IN)
		while ((n = sbx_ksplice_read(&f->s, SBX_SPLICE_B, f->b)) > 0)
			f->read_b += (unsigned long long)n;
	return sbx_ksplice_step(&f->s, f->a, f->b);
}

static unsigned char pattern(size_t i, unsigned seed)
{
	return (unsigned char)((i * 2654435761u + seed) >> 13);
}

/* One direction of a transfer: what is sent and what arrived. */
struct flow {
	int from, to;
	unsigned seed;
	size_t total, sent, got;
	int bad, eof;
};

static void flow_step(struct flow *w)
{
	unsigned char buf[16384];

	if (w->sent < w->total) {
		size_t k = w->total - w->sent < sizeof(buf) ? w->total - w->sent : sizeof(buf);
		for (size_t i = 0; i < k; i++)
			buf[i] = pattern(w->sent + i, w->seed);
		ssize_t n = send(w->from, buf, k, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0)
			w->sent += (size_t)n;
	}
	for (;;) {
		ssize_t n = recv(w->to, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0)
			w->eof = 1;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] != pattern(w->got + (size_t)i, w->seed))
				w->bad = 1;
		w->got += (size_t)n;
	}
}

static void wait_a_little(struct fx *f)
{
	struct pollfd p[4] = { { f->a, POLLIN, 0 }, { f->b, POLLIN, 0 },
			       { f->pa, POLLIN, 0 }, { f->pb, POLLIN, 0 } };

	poll(p, 4, 5);
}

/* 8 MiB each way at once arrive byte-exact, counted exactly; then a
 * half-close of one side reaches the other only after its bytes, the
 * other way keeps flowing, and the relay ends when both are shut. */
static void test_both_ways_then_half_close(void **state)
{
	struct fx *f = *state;
	struct flow ab = { f->pa, f->pb, 1, 8u << 20, 0, 0, 0, 0 };
	struct flow ba = { f->pb, f->pa, 7, 8u << 20, 0, 0, 0, 0 };
	int guard = 0;

	while ((ab.got < ab.total || ba.got < ba.total) && guard++ < 200000) {
		flow_step(&ab);
		flow_step(&ba);
		assert_int_equal(pump(f), 1);
		assert_true(f->s.pending[SBX_SPLICE_A] <= CAP && f->s.pending[SBX_SPLICE_B] <= CAP);
		if (guard % 64 == 0)
			wait_a_little(f);
	}
	assert_int_equal(ab.got, ab.total);
	assert_int_equal(ba.got, ba.total);
	assert_false(ab.bad);
	assert_false(ba.bad);
	assert_int_equal(f->read_a, ab.total);
	assert_int_equal(f->read_b, ba.total);

	/* A sends its last bytes and shuts its write side */
	ab.total += 100000;
	while (ab.sent < ab.total)
		flow_step(&ab), pump(f);
	shutdown(f->pa, SHUT_WR);
	ba.total += 300000;
	for (guard = 0; !(ab.eof && ba.got == ba.total) && guard < 100000; guard++) {
		flow_step(&ab);
		flow_step(&ba);
		assert_int_equal(pump(f), 1);   /* B still sends: not over */
		if (guard % 64 == 0)
			wait_a_little(f);
	}
	assert_true(ab.eof);
	assert_int_equal(ab.got, ab.total);
	assert_int_equal(ba.got, ba.total);
	assert_false(ab.bad || ba.bad);
	assert_true(f->s.shut[SBX_SPLICE_B]);
	assert_false(f->s.shut[SBX_SPLICE_A]);
	shutdown(f->pb, SHUT_WR);
	int rc = 1;
	for (guard = 0; rc == 1 && guard < 1000; guard++) {
		rc = pump(f);
		flow_step(&ba);
		wait_a_little(f);
	}
	assert_int_equal(rc, 0);
	assert_true(ba.eof);
	assert_int_equal(f->read_a, ab.total);
	assert_int_equal(f->read_b, ba.total);
}

/* An EOF read while bytes still wait for the other side (its socket is
 * full): the half-close waits for them, and they all arrive before it. */
static void test_eof_waits_for_queued_bytes(void **state)
{
	struct fx *f = *state;
	static unsigned char buf[1 << 16];
	size_t filler = 0, got = 0, tail = 0;
	int eof = 0;

	memset(buf, 'f', sizeof(buf));
	for (ssize_t n; (n = send(f->b, buf, sizeof(buf), MSG_DONTWAIT)) > 0;)
		filler += (size_t)n;
	assert_int_equal(send(f->pa, "the-tail", 8, 0), 8);
	shutdown(f->pa, SHUT_WR);
	for (int guard = 0; !f->s.eof[SBX_SPLICE_A] && guard < 1000; guard++) {
		assert_int_equal(pump(f), 1);
		wait_a_little(f);
	}
	assert_true(f->s.eof[SBX_SPLICE_A]);
	assert_int_equal(f->s.pending[SBX_SPLICE_B], 8);
	assert_false(f->s.shut[SBX_SPLICE_B]);
	for (int guard = 0; !eof && guard < 100000; guard++) {
		ssize_t n = recv(f->pb, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0)
			eof = 1;
		for (ssize_t i = 0; i < n; i++, got++)
			if (got >= filler)
				assert_int_equal(buf[i], (unsigned char)"the-tail"[tail++]);
		pump(f);
		if (n < 0)
			wait_a_little(f);
	}
	assert_true(eof);
	assert_int_equal(got, filler + 8);
	assert_int_equal(tail, 8);
}

/* A pipe's slots fill before its bytes do (one slot per segment): the
 * read that finds it full stops asking for more (a level-triggered loop
 * would otherwise spin on a readable socket) until bytes leave it, and
 * then every byte arrives in order. A is a UNIX stream here: each send is
 * a segment of its own. */
static void test_full_pipe_stops_reading(void **state)
{
	struct fx *f = *state;
	static unsigned char buf[1 << 16];
	int u[2];
	size_t filler = 0, got = 0;
	unsigned char next = 0;
	long n;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, u), 0);
	close(f->a), close(f->pa);
	f->a = u[0], f->pa = u[1];
	memset(buf, 'f', sizeof(buf));
	for (ssize_t k; (k = send(f->b, buf, sizeof(buf), MSG_DONTWAIT)) > 0;)
		filler += (size_t)k;
	for (int i = 0; i < 200; i++) {
		unsigned char c = (unsigned char)i;
		assert_int_equal(send(f->pa, &c, 1, 0), 1);
	}
	while ((n = sbx_ksplice_read(&f->s, SBX_SPLICE_A, f->a)) > 0)
		;
	assert_int_equal(n, -2);
	assert_true(f->s.pending[SBX_SPLICE_B] < 200);  /* slots, not bytes, ran out */
	assert_int_equal(sbx_ksplice_step(&f->s, f->a, f->b), 1);
	assert_false(sbx_ksplice_events(&f->s, SBX_SPLICE_A) & SBX_SPLICE_IN);
	for (int guard = 0; got < filler + 200 && guard < 100000; guard++) {
		ssize_t k = recv(f->pb, buf, sizeof(buf), MSG_DONTWAIT);
		for (ssize_t i = 0; i < k; i++, got++)
			if (got >= filler)
				assert_int_equal(buf[i], next++);
		pump(f);
		if (k < 0)
			wait_a_little(f);
	}
	assert_int_equal(got, filler + 200);
}

/* A reader that never reads: the relay stops taking A's bytes with at
 * most CAP of them queued, asks for no more reads (no spinning), and
 * everything arrives once the reader reads. */
static void test_stalled_reader_backpressure(void **state)
{
	struct fx *f = *state;
	struct flow ab = { f->pa, f->pb, 3, 64u << 20, 0, 0, 0, 0 };
	unsigned char buf[16384];
	size_t last = (size_t)-1;

	/* fill everything: A's sends, the relay, B's buffers, without reading at pb */
	for (int still = 0; still < 50;) {
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = pattern(ab.sent + i, ab.seed);
		ssize_t n = send(f->pa, buf, sizeof(buf), MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0)
			ab.sent += (size_t)n;
		pump(f);
		still = ab.sent == last ? still + 1 : 0;
		last = ab.sent;
		if (still)
			wait_a_little(f);
	}
	assert_true(f->s.pending[SBX_SPLICE_B] <= CAP);
	assert_false(sbx_ksplice_events(&f->s, SBX_SPLICE_A) & SBX_SPLICE_IN);
	assert_true(sbx_ksplice_events(&f->s, SBX_SPLICE_B) & SBX_SPLICE_OUT);
	assert_true(ab.sent < ab.total);        /* the sender was held back */
	/* the reader reads: all of it, in order */
	ab.total = ab.sent;
	for (int guard = 0; ab.got < ab.total && guard < 100000; guard++) {
		flow_step(&ab);
		pump(f);
		if (guard % 64 == 0)
			wait_a_little(f);
	}
	assert_int_equal(ab.got, ab.total);
	assert_false(ab.bad);
	assert_int_equal(f->read_a, ab.total);
}

/* A pipe grown for bulk holds its new cap toward its side (1 MiB queued
 * where 64 KiB was the most) and takes no more until it drains; the other
 * direction keeps its cap, a shrink is refused, and the bytes read after
 * the queued ones arrive behind them, in order. */
static void test_grown_pipe_holds_its_new_cap(void **state)
{
	struct fx *f = *state;
	static unsigned char big[1 << 20];
	unsigned char buf[16384];
	size_t got = 0, total = sizeof(big) + 1000;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = pattern(i, 7);
	assert_int_equal(sbx_ksplice_grow(&f->s, SBX_SPLICE_B, sizeof(big)), 0);
	assert_int_equal(f->s.cap[SBX_SPLICE_B], sizeof(big));
	assert_int_equal(fcntl(f->s.pipe[SBX_SPLICE_B][1], F_GETPIPE_SZ), sizeof(big));
	assert_int_equal(f->s.cap[SBX_SPLICE_A], CAP);
	errno = 0;
	assert_int_equal(sbx_ksplice_grow(&f->s, SBX_SPLICE_B, CAP), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(f->s.cap[SBX_SPLICE_B], sizeof(big));

	assert_int_equal(sbx_ksplice_queue(&f->s, SBX_SPLICE_B, big, sizeof(big)), 0);
	assert_int_equal(f->s.pending[SBX_SPLICE_B], sizeof(big));
	assert_false(sbx_ksplice_events(&f->s, SBX_SPLICE_A) & SBX_SPLICE_IN);
	for (size_t i = 0; i < 1000; i++)
		buf[i] = pattern(sizeof(big) + i, 7);
	assert_int_equal(send(f->pa, buf, 1000, 0), 1000);
	assert_int_equal(sbx_ksplice_read(&f->s, SBX_SPLICE_A, f->a), -2);    /* full: not read */
	for (int guard = 0; got < total && guard < 100000; guard++) {
		ssize_t k = recv(f->pb, buf, sizeof(buf), MSG_DONTWAIT);
		for (ssize_t i = 0; i < k; i++, got++)
			assert_int_equal(buf[i], pattern(got, 7));
		assert_true(f->s.pending[SBX_SPLICE_B] <= sizeof(big));
		pump(f);
		if (k < 0)
			wait_a_little(f);
	}
	assert_int_equal(got, total);
	assert_int_equal(f->read_a, 1000);
}

/* Bytes queued before the relay began go out first, then the spliced ones. */
static void test_queued_bytes_first(void **state)
{
	struct fx *f = *state;
	char got[64] = "";
	size_t n = 0;

	assert_int_equal(sbx_ksplice_queue(&f->s, SBX_SPLICE_B, "head-", 5), 0);
	assert_int_equal(send(f->pa, "tail", 4, 0), 4);
	for (int guard = 0; n < 9 && guard < 1000; guard++) {
		pump(f);
		ssize_t k = recv(f->pb, got + n, sizeof(got) - 1 - n, MSG_DONTWAIT);
		if (k > 0)
			n += (size_t)k;
		else
			wait_a_little(f);
	}
	assert_string_equal(got, "head-tail");
	/* more than the pipe holds is refused, and nothing is queued */
	static char big[CAP + 1];
	errno = 0;
	assert_int_equal(sbx_ksplice_queue(&f->s, SBX_SPLICE_A, big, sizeof(big)), -1);
	assert_int_equal(errno, ENOBUFS);
	assert_int_equal(f->s.pending[SBX_SPLICE_A], 0);
}

/* A peer that resets: the read from its side is an error, not an EOF
 * that would half-close the other. */
static void test_reset_is_an_error(void **state)
{
	struct fx *f = *state;
	struct linger lg = { 1, 0 };
	long n = -2;

	assert_int_equal(send(f->pa, "abc", 3, 0), 3);
	setsockopt(f->pa, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	/* unread bytes at pa's end make close send a reset */
	assert_int_equal(send(f->a, "zz", 2, 0), 2);
	usleep(20000);
	close(f->pa);
	f->pa = open("/dev/null", O_RDONLY);
	usleep(20000);
	for (int guard = 0; guard < 100 && n != -1; guard++) {
		n = sbx_ksplice_read(&f->s, SBX_SPLICE_A, f->a);
		if (n == -2)
			wait_a_little(f);
	}
	assert_int_equal(n, -1);
	assert_true(f->s.eof[SBX_SPLICE_A]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_both_ways_then_half_close, setup, teardown),
		cmocka_unit_test_setup_teardown(test_eof_waits_for_queued_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_pipe_stops_reading, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stalled_reader_backpressure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_grown_pipe_holds_its_new_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queued_bytes_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reset_is_an_error, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
