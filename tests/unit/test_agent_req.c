/* Unit tests for the agent's request parser (guest/agent_req.c). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../guest/agent_req.h"

static int parse(const char *s, struct ag_req *r, struct sbx_err *e)
{
	return ag_req_parse(s, strlen(s), r, e);
}

static void test_exec(void **state)
{
	struct ag_req r;
	struct sbx_err e;

	(void)state;
	assert_int_equal(parse("{\"op\":\"exec\",\"cmd\":\"ls\",\"args\":[\"-l\",\"/\"],"
			       "\"env\":{\"A\":\"1\"},\"uid\":1000,\"pty\":true,\"attach\":true}", &r, &e), 0);
	assert_int_equal(r.op, AG_OP_EXEC);
	assert_string_equal(r.argv[0], "ls");
	assert_string_equal(r.argv[2], "/");
	assert_null(r.argv[3]);
	assert_string_equal(r.env[0], "A=1");
	assert_int_equal(r.uid, 1000);
	assert_int_equal(r.gid, -1);
	assert_true(r.pty && r.attach && !r.want_stdin);
	ag_req_free(&r);
}

static void test_rejects(void **state)
{
	static const char *bad[] = {
		"{}", "{\"op\":1}", "{\"op\":\"nope\"}", "[]", "{\"op\":\"exec\"}",
		"{\"op\":\"exec\",\"cmd\":\"\"}", "{\"op\":\"exec\",\"cmd\":\"x\",\"args\":\"a\"}",
		"{\"op\":\"exec\",\"cmd\":\"x\",\"env\":{\"=\":\"a\"}}",
		"{\"op\":\"exec\",\"cmd\":\"x\",\"uid\":-1}",
		"{\"op\":\"stat\"}", "{\"op\":\"stat\",\"path\":\"a\\u0000b\"}",
		"{\"op\":\"attach\",\"id\":\"a b\"}", "{\"op\":\"signal\",\"id\":\"a\",\"signal\":\"SIGFOO\"}",
		"{\"op\":\"forward\",\"port\":70000}", "{\"op\":\"resize\",\"id\":\"a\",\"cols\":3}",
		"{\"op\":\"ping\",\"op\":\"ping\"}",
	};
	struct ag_req r;
	struct sbx_err e;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e.msg[0] = 0;
		assert_int_equal(parse(bad[i], &r, &e), -1);
		assert_true(e.msg[0] != 0);
	}
	assert_int_equal(ag_req_parse("{\"op\":\"ping\"}\0", 15, &r, &e), -1);
}

static void test_escaped_backslash_ok(void **state)
{
	struct ag_req r;
	struct sbx_err e;

	(void)state;
	/* "\\u0000" is a backslash followed by text, not a NUL */
	assert_int_equal(parse("{\"op\":\"stat\",\"path\":\"a\\\\u0000\"}", &r, &e), 0);
	assert_string_equal(r.path, "a\\u0000");
	ag_req_free(&r);
}

static void test_signals(void **state)
{
	struct ag_req r;
	struct sbx_err e;

	(void)state;
	assert_int_equal(ag_signal_from_name("SIGTERM"), SIGTERM);
	assert_int_equal(ag_signal_from_name("KILL"), SIGKILL);
	assert_int_equal(ag_signal_from_name("15"), 15);
	assert_int_equal(ag_signal_from_name("0"), -1);
	assert_string_equal(ag_signal_name(SIGINT), "SIGINT");
	assert_int_equal(parse("{\"op\":\"signal\",\"id\":\"cmd_x\",\"signal\":2}", &r, &e), 0);
	assert_int_equal(r.sig, 2);
	ag_req_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec),
		cmocka_unit_test(test_rejects),
		cmocka_unit_test(test_escaped_backslash_ok),
		cmocka_unit_test(test_signals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
