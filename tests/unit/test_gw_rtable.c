/* Unit tests of the runners table's pure parts (gateway/core/gw_rtable.c):
 * the runner name inside a sandbox id, the placement order of a create
 * and who is no candidate, the isolation checks, and the merge of a
 * discovery result into the table's addresses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../gateway/core/gw_runner.h"

static void test_sid_names(void **state)
{
	char n[GW_RUNNER_NAME_MAX + 1];
	(void)state;

	assert_int_equal(gw_sid_runner_name("sbx_r1_abcdefghijklmnopqrstuvwx", n, sizeof n), 0);
	assert_string_equal(n, "r1");
	assert_int_equal(gw_sid_runner_name("sbx_local_a", n, sizeof n), 0);
	assert_string_equal(n, "local");
	/* the name is everything up to the last '_' (names have none) */
	assert_int_equal(gw_sid_runner_name("sbx_a_b_c", n, sizeof n), -1);   /* '_' is not [a-z0-9] */
	assert_int_equal(gw_sid_runner_name("sbx_0123456789abcdef_x", n, sizeof n), 0);
	assert_string_equal(n, "0123456789abcdef");
	assert_int_equal(gw_sid_runner_name("sbx_0123456789abcdefg_x", n, sizeof n), -1);   /* 17 */
	assert_int_equal(gw_sid_runner_name("sbx__x", n, sizeof n), -1);
	assert_int_equal(gw_sid_runner_name("sbx_r1", n, sizeof n), -1);
	assert_int_equal(gw_sid_runner_name("sbx_R1_x", n, sizeof n), -1);
	assert_int_equal(gw_sid_runner_name("sbx_r-1_x", n, sizeof n), -1);
	assert_int_equal(gw_sid_runner_name("box_r1_x", n, sizeof n), -1);
	assert_int_equal(gw_sid_runner_name("", n, sizeof n), -1);
	assert_int_equal(gw_sid_runner_name(NULL, n, sizeof n), -1);
	/* a buffer too small for the name */
	assert_int_equal(gw_sid_runner_name("sbx_abcd_x", n, 4), -1);
}

static struct gw_runner mk(const char *name, int64_t free_mb, int sandboxes, double load)
{
	struct gw_runner r;
	memset(&r, 0, sizeof r);
	strcpy(r.name, name);
	r.state = GW_RUNNER_UP;
	r.memory_mb_free = free_mb;
	r.sandboxes = sandboxes;
	r.load1 = load;
	r.niso = 2;
	strcpy(r.iso[0].name, "jail");
	r.iso[0].available = 1;
	strcpy(r.iso[1].name, "gvisor");
	r.iso[1].available = 0;
	strcpy(r.default_iso, "jail");
	return r;
}

/* Runners that have the create's image go first, each group keeping the
 * order by room (a runner without it would pull it before answering). */
static void test_place_prefers_image(void **state)
{
	struct gw_runner a = mk("a", 1024, 3, 0.5), b = mk("b", 4096, 9, 2.0), c = mk("c", 1024, 1, 0.9),
			 d = mk("d", 1024, 1, 0.1);
	const struct gw_runner *rs[] = { &a, &b, &c, &d };
	int order[4];
	(void)state;

	a.images[a.nimages++] = gw_image_hash("default");
	a.images[a.nimages++] = gw_image_hash("reg:5000/app:1.2");
	c.images[c.nimages++] = gw_image_hash("reg:5000/app:1.2");
	b.images[b.nimages++] = gw_image_hash("default");
	assert_true(gw_runner_has_image(&a, "reg:5000/app:1.2"));
	assert_false(gw_runner_has_image(&b, "reg:5000/app:1.2"));
	assert_false(gw_runner_has_image(&d, "default"));
	assert_int_equal(gw_place_order(rs, 4, NULL, 512, order, 4), 4);   /* b d c a */
	gw_place_prefer_image(rs, order, 4, "reg:5000/app:1.2");
	assert_int_equal(order[0], 2);   /* c: has it, 1 sandbox */
	assert_int_equal(order[1], 0);   /* a: has it, 3 sandboxes */
	assert_int_equal(order[2], 1);   /* b: the most room, without it */
	assert_int_equal(order[3], 3);
	/* an image no runner has: the order by room stands */
	assert_int_equal(gw_place_order(rs, 4, NULL, 512, order, 4), 4);
	gw_place_prefer_image(rs, order, 4, "reg:5000/other:1");
	assert_int_equal(order[0], 1);
	assert_int_equal(order[1], 3);
}

static void test_place_order(void **state)
{
	struct gw_runner a = mk("a", 1024, 3, 0.5), b = mk("b", 4096, 9, 2.0), c = mk("c", 1024, 1, 0.9),
			 d = mk("d", 1024, 1, 0.1);
	const struct gw_runner *rs[] = { &a, &b, &c, &d };
	int out[4];
	(void)state;

	/* most free memory first; then fewer sandboxes; then lower load */
	assert_int_equal(gw_place_order(rs, 4, NULL, 512, out, 4), 4);
	assert_int_equal(out[0], 1);   /* b: 4096 free */
	assert_int_equal(out[1], 3);   /* d: 1024, 1 sandbox, load 0.1 */
	assert_int_equal(out[2], 2);   /* c: 1024, 1 sandbox, load 0.9 */
	assert_int_equal(out[3], 0);   /* a: 1024, 3 sandboxes */
	/* at most max */
	assert_int_equal(gw_place_order(rs, 4, NULL, 512, out, GW_PLACE_TRIES), 3);
	/* not enough room: only b */
	assert_int_equal(gw_place_order(rs, 4, NULL, 2048, out, 4), 1);
	assert_int_equal(out[0], 1);
	/* draining, down, gone, not yet answered: no candidates */
	b.draining = 1;
	c.state = GW_RUNNER_DOWN;
	d.gone = 1;
	a.state = GW_RUNNER_UNKNOWN;
	assert_int_equal(gw_place_order(rs, 4, NULL, 512, out, 4), 0);
}

static void test_place_unreported_memory(void **state)
{
	/* a runner without `status` (memory unknown) comes after those that
	 * report room, and is still a candidate */
	struct gw_runner a = mk("a", -1, 0, 0), b = mk("b", 512, 5, 0);
	const struct gw_runner *rs[] = { &a, &b };
	int out[2];
	(void)state;

	assert_int_equal(gw_place_order(rs, 2, NULL, 512, out, 2), 2);
	assert_int_equal(out[0], 1);
	assert_int_equal(out[1], 0);
}

static void test_place_isolation(void **state)
{
	struct gw_runner a = mk("a", 1024, 0, 0), b = mk("b", 1024, 0, 0);
	const struct gw_runner *rs[] = { &a, &b };
	char why[64];
	int out[2];
	(void)state;

	/* gvisor is known but available nowhere */
	assert_int_equal(gw_place_iso_known(rs, 2, "gvisor"), 1);
	assert_int_equal(gw_place_order(rs, 2, "gvisor", 512, out, 2), 0);
	assert_string_equal(gw_place_why_not(&a, "gvisor", 512, why, sizeof why), "no gvisor isolation");
	/* available on b only */
	b.iso[1].available = 1;
	assert_int_equal(gw_place_iso_known(rs, 2, "gvisor"), 2);
	assert_int_equal(gw_place_order(rs, 2, "gvisor", 512, out, 2), 1);
	assert_int_equal(out[0], 1);
	/* a name no runner knows */
	assert_int_equal(gw_place_iso_known(rs, 2, "nosuch"), 0);
	/* available only on a runner that is down: known, not available */
	a.iso[1].available = 0;
	b.state = GW_RUNNER_DOWN;
	assert_int_equal(gw_place_iso_known(rs, 2, "gvisor"), 1);
	/* a create naming none takes each runner's default */
	strcpy(a.default_iso, "gvisor");
	assert_int_equal(gw_place_order(rs, 1, NULL, 512, out, 1), 0);
	assert_string_equal(gw_place_why_not(&a, NULL, 512, why, sizeof why), "no gvisor isolation");
	assert_string_equal(gw_place_why_not(&a, "jail", 4096, why, sizeof why), "1024 MB free, 4096 asked");
	assert_string_equal(gw_place_why_not(&b, "jail", 512, why, sizeof why), "down");
}

static void test_pending_creates(void **state)
{
	/* creates sent after the last status's request count on top of it */
	struct gw_runner a = mk("a", 2048, 0, 0), b = mk("b", 1024, 0, 0);
	const struct gw_runner *rs[] = { &a, &b };
	int out[2];
	(void)state;

	uint64_t s1 = gw_runner_seq_next(), c1 = gw_runner_seq_next(), c2 = gw_runner_seq_next();
	gw_runner_create_sent(&a, c1, 512);
	gw_runner_create_sent(&a, c2, 512);
	assert_int_equal(a.pending, 2);
	assert_int_equal(a.pending_mb, 1024);
	/* a (2048 - 1024, 2 sandboxes) ties b on memory: b has fewer */
	assert_int_equal(gw_place_order(rs, 2, NULL, 512, out, 2), 2);
	assert_int_equal(out[0], 1);
	/* a status requested before them does not take them over */
	gw_runner_status_seen(&a, s1);
	assert_int_equal(a.pending, 2);
	/* one failed: it leaves at once */
	gw_runner_create_failed(&a, c2);
	assert_int_equal(a.pending, 1);
	assert_int_equal(a.pending_mb, 512);
	/* a status requested after it counts it itself */
	uint64_t s2 = gw_runner_seq_next();
	a.memory_mb_free = 1536;
	a.sandboxes = 1;
	gw_runner_status_seen(&a, s2);
	assert_int_equal(a.pending, 0);
	assert_int_equal(gw_place_order(rs, 2, NULL, 512, out, 2), 2);
	assert_int_equal(out[0], 0);
}

static void test_discovery_merge(void **state)
{
	const char *have[] = { "10.0.0.1:7443", "10.0.0.2:7443", "unix:/run/r.sock" };
	const char *got[] = { "10.0.0.2:7443", "10.0.0.3:7443", "10.0.0.3:7443", "[fd00::1]:7443" };
	int keep[3], add[4];
	(void)state;

	gw_discovery_merge(have, 3, got, 4, keep, add);
	assert_int_equal(keep[0], 0);   /* gone from DNS */
	assert_int_equal(keep[1], 1);
	assert_int_equal(keep[2], 0);   /* (the caller keeps what DNS did not give) */
	assert_int_equal(add[0], 0);    /* known */
	assert_int_equal(add[1], 1);
	assert_int_equal(add[2], 0);    /* a repeat in the same answer */
	assert_int_equal(add[3], 1);
	/* an empty answer keeps nothing and adds nothing */
	gw_discovery_merge(have, 3, got, 0, keep, add);
	assert_int_equal(keep[0] + keep[1] + keep[2], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sid_names),
		cmocka_unit_test(test_place_order),
		cmocka_unit_test(test_place_prefers_image),
		cmocka_unit_test(test_place_unreported_memory),
		cmocka_unit_test(test_place_isolation),
		cmocka_unit_test(test_pending_creates),
		cmocka_unit_test(test_discovery_merge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
