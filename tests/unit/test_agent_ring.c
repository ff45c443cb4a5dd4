/* Unit tests for the agent's output retention ring (guest/agent_ring.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../guest/agent_ring.h"
#include "sbx_frame.h"

static size_t read_all(struct ag_ring *r, struct ag_cursor *c, unsigned char *out,
		       size_t max, uint64_t *lost_total)
{
	size_t got = 0, n;
	unsigned tag;
	uint64_t lost;

	*lost_total = 0;
	while ((n = ag_ring_read(r, c, &tag, out + got, max - got, &lost)) > 0 || lost) {
		*lost_total += lost;
		got += n;
	}
	return got;
}

static void test_push_read_tags(void **state)
{
	struct ag_ring r;
	struct ag_cursor c;
	unsigned char buf[16];
	unsigned tag;
	uint64_t lost;
	size_t n;

	(void)state;
	assert_int_equal(ag_ring_init(&r, 64), 0);
	assert_int_equal(ag_ring_push(&r, 1, "abc", 3), 0);
	assert_int_equal(ag_ring_push(&r, 2, "de", 2), 0);
	assert_int_equal(ag_ring_seek(&r, 0, &c), 0);
	n = ag_ring_read(&r, &c, &tag, buf, sizeof(buf), &lost);
	assert_int_equal(n, 3);
	assert_int_equal(tag, 1);
	assert_memory_equal(buf, "abc", 3);
	n = ag_ring_read(&r, &c, &tag, buf, sizeof(buf), &lost);
	assert_int_equal(n, 2);
	assert_int_equal(tag, 2);
	assert_int_equal(ag_ring_read(&r, &c, &tag, buf, sizeof(buf), &lost), 0);
	/* offset inside a chunk */
	ag_ring_seek(&r, 4, &c);
	n = ag_ring_read(&r, &c, &tag, buf, sizeof(buf), &lost);
	assert_int_equal(n, 1);
	assert_int_equal(buf[0], 'e');
	/* beyond the end clamps */
	ag_ring_seek(&r, 100, &c);
	assert_int_equal(c.off, 5);
	ag_ring_free(&r);
}

static void test_wrap_and_drop(void **state)
{
	struct ag_ring r;
	struct ag_cursor c, stale;
	unsigned char out[256], exp[1000];
	uint64_t lost;
	size_t i, n;

	(void)state;
	assert_int_equal(ag_ring_init(&r, 50), 0);
	ag_ring_seek(&r, 0, &stale);
	for (i = 0; i < 100; i++) {
		unsigned char ch[7];

		memset(ch, (int)('a' + i % 26), sizeof(ch));
		memcpy(exp + i * 7, ch, 7);
		assert_int_equal(ag_ring_push(&r, 1, ch, 7), 0);
		assert_true(r.head - r.tail <= r.cap);
	}
	assert_int_equal(r.total, 700);
	/* 50 bytes hold 4 records of 12 */
	assert_int_equal(r.tail_off, 700 - 4 * 7);
	lost = ag_ring_seek(&r, 0, &c);
	assert_int_equal(lost, 700 - 28);
	n = read_all(&r, &c, out, sizeof(out), &lost);
	assert_int_equal(n, 28);
	assert_int_equal(lost, 0);
	assert_memory_equal(out, exp + 672, 28);
	/* a stale reader is told what it missed, then gets the rest */
	n = read_all(&r, &stale, out, sizeof(out), &lost);
	assert_int_equal(lost, 672);
	assert_int_equal(n, 28);
	assert_memory_equal(out, exp + 672, 28);
	ag_ring_free(&r);
}

static void test_shrink(void **state)
{
	struct ag_ring r;
	struct ag_cursor c, mid;
	unsigned char out[256], exp[700];
	uint64_t lost;
	size_t i, n;

	(void)state;
	assert_int_equal(ag_ring_init(&r, 50), 0);
	for (i = 0; i < 9; i++) {
		memset(exp + i * 7, (int)('a' + i), 7);
		ag_ring_push(&r, 1 + (unsigned)(i % 2), exp + i * 7, 7);
	}
	ag_ring_seek(&r, r.tail_off + 3, &mid);
	assert_int_equal(ag_ring_shrink(&r), 0);
	assert_int_equal(r.cap, 4 * 12);
	ag_ring_seek(&r, 0, &c);
	n = read_all(&r, &c, out, sizeof(out), &lost);
	assert_int_equal(n, 28);
	assert_memory_equal(out, exp + 63 - 28, 28);
	n = read_all(&r, &mid, out, sizeof(out), &lost);
	assert_int_equal(n, 25);
	assert_memory_equal(out, exp + 63 - 25, 25);
	ag_ring_free(&r);
	/* empty ring */
	assert_int_equal(ag_ring_init(&r, 50), 0);
	assert_int_equal(ag_ring_shrink(&r), 0);
	ag_ring_seek(&r, 0, &c);
	assert_int_equal(read_all(&r, &c, out, sizeof(out), &lost), 0);
	ag_ring_free(&r);
}

static void test_too_big(void **state)
{
	struct ag_ring r;
	unsigned char big[100] = { 0 };

	(void)state;
	assert_int_equal(ag_ring_init(&r, 64), 0);
	assert_int_equal(ag_ring_push(&r, 1, big, 60), -1);
	assert_int_equal(ag_ring_push(&r, 1, big, 59), 0);
	assert_int_equal(ag_ring_push(&r, 1, "", 0), 0);
	ag_ring_free(&r);
}

/* Bytes of iov[0..n) copied out in order. */
static size_t gather(const struct iovec *iov, int n, unsigned char *out)
{
	size_t got = 0;

	for (int i = 0; i < n; i++) {
		memcpy(out + got, iov[i].iov_base, iov[i].iov_len);
		got += iov[i].iov_len;
	}
	return got;
}

/* Chunks written straight into the ring (reserve, commit) across its
 * wrap, then sent from where they lie: the spans are the guest
 * protocol's frames of those chunks, whole records only, and a record
 * cut by a short send has the rest of its frame given back. */
static void test_reserve_span_sent(void **state)
{
	struct ag_ring r;
	struct ag_cursor c;
	struct iovec iov[2];
	unsigned char wire[256], rest[64];
	struct sbx_frame f;
	struct sbx_err err = { 0 };
	int niov;
	size_t n, k;
	long used;

	(void)state;
	assert_int_equal(ag_ring_init(&r, 50), 0);
	ag_ring_seek(&r, 0, &c);
	/* 3 records of 12 bytes, then one that wraps (36 + 5 + 10 > 50) */
	for (unsigned i = 0; i < 4; i++) {
		size_t len = i < 3 ? 7 : 10;
		int m = ag_ring_reserve(&r, len, iov);
		unsigned char src[10];

		memset(src, 'a' + (int)i, sizeof src);
		assert_int_equal(m, i < 3 ? 1 : 2);
		assert_int_equal(iov[0].iov_len + (m == 2 ? iov[1].iov_len : 0), len);
		memcpy(iov[0].iov_base, src, iov[0].iov_len);
		if (m == 2)
			memcpy(iov[1].iov_base, src + iov[0].iov_len, iov[1].iov_len);
		ag_ring_commit(&r, 1 + i % 2, len);
	}
	assert_int_equal(r.total, 31);
	/* the first record made room for the fourth: the cursor is stale */
	assert_int_equal(ag_ring_span(&r, &c, 1000, iov, &niov), 0);
	assert_int_equal(ag_ring_catch(&r, &c), 7);
	n = ag_ring_span(&r, &c, 1000, iov, &niov);
	assert_int_equal(n, 12 + 12 + 15);
	assert_int_equal(niov, 2);
	assert_int_equal(gather(iov, niov, wire), n);
	used = sbx_frame_decode(wire, n, 0, &f, &err);
	assert_int_equal(used, 12);
	assert_int_equal(f.type, SBX_FRAME_STDERR);
	assert_memory_equal(f.payload, "bbbbbbb", 7);
	used += sbx_frame_decode(wire + used, n - (size_t)used, 0, &f, &err);
	assert_int_equal(f.type, SBX_FRAME_STDOUT);
	assert_memory_equal(f.payload, "ccccccc", 7);
	assert_int_equal(sbx_frame_decode(wire + used, n - (size_t)used, 0, &f, &err), 15);
	assert_int_equal(f.type, SBX_FRAME_STDERR);
	assert_int_equal(f.len, 10);
	assert_memory_equal(f.payload, "dddddddddd", 10);
	/* max: whole records only, the first whatever its size */
	assert_int_equal(ag_ring_span(&r, &c, 20, iov, &niov), 12);
	assert_int_equal(ag_ring_span(&r, &c, 1, iov, &niov), 12);
	/* 14 went out: the first record and 2 bytes of the second's header */
	k = ag_ring_sent(&r, &c, 14, rest);
	assert_int_equal(k, 10);
	assert_memory_equal(rest, wire + 14, 10);
	assert_int_equal(c.off, 7 + 7 + 7);
	/* the rest is the last record, whole */
	n = ag_ring_span(&r, &c, 1000, iov, &niov);
	assert_int_equal(n, 15);
	assert_int_equal(ag_ring_sent(&r, &c, 15, rest), 0);
	assert_int_equal(c.off, r.total);
	assert_int_equal(ag_ring_span(&r, &c, 1000, iov, &niov), 0);
	/* a cursor inside a record has no span (ag_ring_read takes that one) */
	ag_ring_seek(&r, r.total - 3, &c);
	assert_int_equal(ag_ring_span(&r, &c, 1000, iov, &niov), 0);
	assert_int_equal(ag_ring_reserve(&r, 46, iov), -1);
	ag_ring_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_push_read_tags),
		cmocka_unit_test(test_wrap_and_drop),
		cmocka_unit_test(test_shrink),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_reserve_span_sent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
