/* Unit tests for the agent's output retention ring (guest/agent_ring.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../guest/agent_ring.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_push_read_tags),
		cmocka_unit_test(test_wrap_and_drop),
		cmocka_unit_test(test_shrink),
		cmocka_unit_test(test_too_big),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
