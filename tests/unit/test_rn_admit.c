/* Unit tests of the runner's memory admission rule (runner/rn_admit_rule.c):
 * the static rule on memory_mb, and --memory-overcommit's rule on what
 * sandboxes use, with a reserve each, under a cap of F x the host. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../runner/rn_admit_rule.h"

/* A 24 GiB host with the default share (0.5) and reserve (8 MiB). */
static struct rn_admit_in host(double overcommit)
{
	struct rn_admit_in in = { .budget_mb = 12288, .host_mb = 24576, .overcommit = overcommit,
				  .reserve_mb = 8, .avail_mb = -1 };
	return in;
}

static void static_rule_counts_every_limit(void **state)
{
	struct rn_admit_in in = host(0);

	(void)state;
	in.committed_mb = 12288 - 256;
	in.n_live = 47;
	in.used_mb = 1;       /* use does not matter without overcommit */
	assert_int_equal(rn_admit_decide(&in, 256), RN_ADMIT_OK);
	assert_int_equal(rn_admit_decide(&in, 257), RN_ADMIT_LIMITS);
	assert_int_equal(rn_admit_limits_cap(&in), 12288);
	assert_int_equal(rn_admit_free_mb(&in), 256);
	in.committed_mb = 12288;
	assert_int_equal(rn_admit_free_mb(&in), 0);
}

/* The case: 1000 idle sandboxes of 256 MB, about 1 MiB used each,
 * on a 24 GiB host: the static rule admits 48, overcommit 11 admits all. */
static void overcommit_admits_a_thousand_idle(void **state)
{
	struct rn_admit_in in = host(11);
	int admitted = 0;

	(void)state;
	for (int i = 0; i < 1000; i++) {
		if (rn_admit_decide(&in, 256) != RN_ADMIT_OK)
			break;
		in.committed_mb += 256;
		in.used_mb += 1;
		in.n_live++;
		admitted++;
	}
	assert_int_equal(admitted, 1000);
	in = host(0);
	for (admitted = 0; rn_admit_decide(&in, 256) == RN_ADMIT_OK; admitted++)
		in.committed_mb += 256;
	assert_int_equal(admitted, 48);
}

static void overcommit_caps_limits_at_f_times_host(void **state)
{
	struct rn_admit_in in = host(2);

	(void)state;
	assert_int_equal(rn_admit_limits_cap(&in), 49152);
	in.committed_mb = 49152 - 512;
	in.n_live = 96;
	assert_int_equal(rn_admit_decide(&in, 512), RN_ADMIT_OK);
	assert_int_equal(rn_admit_decide(&in, 513), RN_ADMIT_LIMITS);
	in.overcommit = 1.5;
	assert_int_equal(rn_admit_limits_cap(&in), 36864);
}

/* In use + a reserve for each live sandbox + the new one's reserve stays
 * within the budget; the new one's reserve is at most its memory_mb. */
static void overcommit_refuses_by_use(void **state)
{
	struct rn_admit_in in = host(8);

	(void)state;
	in.n_live = 10;
	in.committed_mb = 10 * 512;
	in.used_mb = 12288 - 10 * 8 - 8;
	assert_int_equal(rn_admit_decide(&in, 512), RN_ADMIT_OK);
	in.used_mb++;
	assert_int_equal(rn_admit_decide(&in, 512), RN_ADMIT_IN_USE);
	assert_int_equal(rn_admit_free_mb(&in), 0);
	in.reserve_mb = 64;          /* a 32 MB sandbox is counted at 32, not 64 */
	in.used_mb = 12288 - 10 * 64 - 32;
	assert_int_equal(rn_admit_decide(&in, 32), RN_ADMIT_OK);
	assert_int_equal(rn_admit_decide(&in, 33), RN_ADMIT_IN_USE);
}

/* The host's MemAvailable must keep a twentieth of its memory after the
 * new sandbox's reserve; unknown (-1) is not a refusal. */
static void overcommit_refuses_when_host_is_low(void **state)
{
	struct rn_admit_in in = host(4);

	(void)state;
	in.avail_mb = 24576 / 20 + 8;
	assert_int_equal(rn_admit_decide(&in, 256), RN_ADMIT_OK);
	in.avail_mb--;
	assert_int_equal(rn_admit_decide(&in, 256), RN_ADMIT_HOST_LOW);
	in.avail_mb = -1;
	assert_int_equal(rn_admit_decide(&in, 256), RN_ADMIT_OK);
	/* the static rule never looks at the host */
	in = host(0);
	in.avail_mb = 0;
	assert_int_equal(rn_admit_decide(&in, 256), RN_ADMIT_OK);
}

static void reasons_are_sentences(void **state)
{
	(void)state;
	assert_string_equal(rn_admit_reason(RN_ADMIT_IN_USE),
			    "the memory its sandboxes use, with a reserve for each, is at the "
			    "runner's budget");
	assert_string_equal(rn_admit_reason(RN_ADMIT_HOST_LOW),
			    "the host is low on available memory");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(static_rule_counts_every_limit),
		cmocka_unit_test(overcommit_admits_a_thousand_idle),
		cmocka_unit_test(overcommit_caps_limits_at_f_times_host),
		cmocka_unit_test(overcommit_refuses_by_use),
		cmocka_unit_test(overcommit_refuses_when_host_is_low),
		cmocka_unit_test(reasons_are_sentences),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
