/* Unit tests of lib/sbx_usage.c: where a synopsis breaks its lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sbx_usage.h"

/* The synopsis of groups at width, as a string (free it). */
static char *synopsis(const char *lead, const char *const *groups, size_t n, size_t width)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	sbx_usage_synopsis(f, lead, groups, n, width);
	fclose(f);
	return text;
}

static void test_one_line(void **state)
{
	const char *const g[] = { "[--a]", "[--b B]" };
	char *s = synopsis("usage: p ", g, 2, 80);

	(void)state;
	assert_string_equal(s, "usage: p [--a] [--b B]\n");
	free(s);
}

/* A group that ends exactly at the width stays; one more column breaks,
 * and the next line starts under the first group. */
static void test_breaks_at_width(void **state)
{
	const char *const g[] = { "[--aaaa]", "[--bb]", "[--c]" };
	char *fits = synopsis("u: ", g, 2, 3 + 8 + 1 + 6);
	char *breaks = synopsis("u: ", g, 3, 3 + 8 + 1 + 6 + 5);

	(void)state;
	assert_string_equal(fits, "u: [--aaaa] [--bb]\n");
	assert_string_equal(breaks, "u: [--aaaa] [--bb]\n   [--c]\n");
	free(fits);
	free(breaks);
}

/* A group wider than the width is alone on its line, never split, and
 * never leaves an empty line before it. */
static void test_wide_group(void **state)
{
	const char *const g[] = { "[--a]", "[--a-very-long-group X Y Z]", "[--b]" };
	char *s = synopsis("u: ", g, 3, 12);

	(void)state;
	assert_string_equal(s, "u: [--a]\n   [--a-very-long-group X Y Z]\n   [--b]\n");
	free(s);
}

static void test_no_groups(void **state)
{
	char *s = synopsis("usage: p ", NULL, 0, 80);

	(void)state;
	assert_string_equal(s, "usage: p \n");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_line),
		cmocka_unit_test(test_breaks_at_width),
		cmocka_unit_test(test_wide_group),
		cmocka_unit_test(test_no_groups),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
