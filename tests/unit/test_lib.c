/* Unit tests of the shared library: buffers, framing, ids, JSON. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sbx_buf.h"
#include "sbx_frame.h"
#include "sbx_id.h"
#include "sbx_json.h"

static void buf_append_consume(void **state)
{
	struct sbx_buf b;
	(void)state;
	sbx_buf_init(&b, 0);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(sbx_buf_append(&b, "abcd", 4), 0);
	assert_int_equal(b.len, 4000);
	sbx_buf_consume(&b, 3998);
	assert_int_equal(b.len, 2);
	assert_memory_equal(sbx_buf_head(&b), "cd", 2);
	assert_int_equal(sbx_buf_append(&b, "ef", 2), 0);
	assert_memory_equal(sbx_buf_head(&b), "cdef", 4);
	sbx_buf_free(&b);
}

static void buf_cap_refuses_and_keeps_contents(void **state)
{
	struct sbx_buf b;
	(void)state;
	sbx_buf_init(&b, 10);
	assert_int_equal(sbx_buf_append(&b, "0123456789", 10), 0);
	errno = 0;
	assert_int_equal(sbx_buf_append(&b, "x", 1), -1);
	assert_int_equal(errno, ENOBUFS);
	assert_int_equal(b.len, 10);
	sbx_buf_consume(&b, 5);
	assert_int_equal(sbx_buf_append(&b, "abcde", 5), 0);
	assert_memory_equal(sbx_buf_head(&b), "56789abcde", 10);
	sbx_buf_free(&b);
}

static void frame_roundtrip_and_partial(void **state)
{
	struct sbx_buf b;
	struct sbx_frame f;
	struct sbx_err err = { 0 };
	(void)state;
	sbx_buf_init(&b, 0);
	assert_int_equal(sbx_frame_append(&b, SBX_FRAME_STDOUT, "hello", 5), 0);
	assert_int_equal(sbx_frame_append(&b, SBX_FRAME_EOF, NULL, 0), 0);
	assert_int_equal(b.len, 15);
	/* Every strict prefix of the first frame needs more bytes. */
	for (size_t n = 0; n < 10; n++)
		assert_int_equal(sbx_frame_decode(sbx_buf_head(&b), n, 0, &f, &err), 0);
	assert_int_equal(sbx_frame_decode(sbx_buf_head(&b), b.len, 0, &f, &err), 10);
	assert_int_equal(f.type, SBX_FRAME_STDOUT);
	assert_int_equal(f.len, 5);
	assert_memory_equal(f.payload, "hello", 5);
	sbx_buf_consume(&b, 10);
	assert_int_equal(sbx_frame_decode(sbx_buf_head(&b), b.len, 0, &f, &err), 5);
	assert_int_equal(f.type, SBX_FRAME_EOF);
	sbx_buf_free(&b);
}

static void frame_rejects_bad_headers(void **state)
{
	struct sbx_frame f;
	struct sbx_err err = { 0 };
	unsigned char big[5] = { 0xff, 0xff, 0xff, 0xff, 1 };
	unsigned char type[5] = { 0, 0, 0, 0, 9 };
	unsigned char eof[6] = { 0, 0, 0, 1, SBX_FRAME_EOF, 'x' };
	unsigned char small[5] = { 0, 0, 1, 0, 1 };
	(void)state;
	assert_int_equal(sbx_frame_decode(big, 5, 0, &f, &err), -1);
	assert_int_equal(err.code, EMSGSIZE);
	assert_non_null(strstr(err.msg, "maximum"));
	assert_int_equal(sbx_frame_decode(type, 5, 0, &f, &err), -1);
	assert_int_equal(err.code, EPROTO);
	assert_int_equal(sbx_frame_decode(eof, 6, 0, &f, &err), -1);
	/* A caller-chosen lower maximum applies. */
	assert_int_equal(sbx_frame_decode(small, 5, 100, &f, &err), -1);
	assert_int_equal(sbx_frame_decode(small, 5, 0, &f, &err), 0);
}

static void frame_append_refuses_oversize(void **state)
{
	struct sbx_buf b;
	static char payload[SBX_FRAME_MAX + 1];
	(void)state;
	sbx_buf_init(&b, 0);
	assert_int_equal(sbx_frame_append(&b, SBX_FRAME_DATA, payload, sizeof(payload)), -1);
	assert_int_equal(errno, EMSGSIZE);
	assert_int_equal(b.len, 0);
	sbx_buf_free(&b);
}

static void id_shape_and_uniqueness(void **state)
{
	char a[64], b[64];
	(void)state;
	assert_int_equal(sbx_id_new("sbx_", a, sizeof(a)), 0);
	assert_int_equal(sbx_id_new("sbx_", b, sizeof(b)), 0);
	assert_int_equal(strlen(a), 4 + SBX_ID_RANDOM_CHARS);
	assert_true(sbx_id_valid("sbx_", a));
	assert_string_not_equal(a, b);
	assert_false(sbx_id_valid("sbx_", "sbx_ABC"));
	a[10] = 'A';
	assert_false(sbx_id_valid("sbx_", a));
	assert_false(sbx_id_valid("cmd_", b));
	assert_int_equal(sbx_id_new("sbx_", a, 10), -1);
}

static void json_parse_errors_say_where(void **state)
{
	struct sbx_err err = { 0 };
	const char *bad = "{\"a\": 1, \"b\": }";
	(void)state;
	assert_null(sbx_json_parse_object(bad, strlen(bad), &err));
	assert_non_null(strstr(err.msg, "invalid JSON at byte 14"));
	assert_null(sbx_json_parse_object("[1]", 3, &err));
	assert_non_null(strstr(err.msg, "expected a JSON object"));
	assert_null(sbx_json_parse_object("{\"id\":\"A\",\"id\":\"B\"}", 19, &err));
	assert_non_null(strstr(err.msg, "duplicate key \"id\""));
	assert_null(sbx_json_parse_object("{\"x\":{\"k\":1,\"k\":2}}", 19, &err));
	assert_null(sbx_json_parse_object("{} x", 4, &err));
	assert_non_null(strstr(err.msg, "trailing"));
	assert_null(sbx_json_parse_object("", 0, &err));
	/* Not NUL-terminated: the parser must stop at the length. */
	char nonterm[2] = { '{', '}' };
	cJSON *o = sbx_json_parse_object(nonterm, 2, &err);
	assert_non_null(o);
	cJSON_Delete(o);
}

static void json_getters_name_the_field(void **state)
{
	struct sbx_err err = { 0 };
	const char *txt = "{\"s\":\"x\",\"n\":5,\"f\":1.5,\"b\":true,\"big\":1e999}";
	cJSON *o = sbx_json_parse_object(txt, strlen(txt), &err);
	const char *s = NULL;
	int64_t n = 0;
	int b = 0;
	(void)state;
	assert_non_null(o);
	assert_int_equal(sbx_json_get_str(o, "s", &s, &err), 1);
	assert_string_equal(s, "x");
	assert_int_equal(sbx_json_get_str(o, "missing", &s, &err), 0);
	assert_int_equal(sbx_json_get_str(o, "n", &s, &err), -1);
	assert_non_null(strstr(err.msg, "\"n\" must be a string"));
	assert_int_equal(sbx_json_get_i64(o, "n", 0, 10, &n, &err), 1);
	assert_int_equal(n, 5);
	assert_int_equal(sbx_json_get_i64(o, "n", 0, 4, &n, &err), -1);
	assert_non_null(strstr(err.msg, "between 0 and 4"));
	assert_int_equal(sbx_json_get_i64(o, "f", 0, 10, &n, &err), -1);
	assert_non_null(strstr(err.msg, "integer"));
	assert_int_equal(sbx_json_get_i64(o, "big", 0, 10, &n, &err), -1);
	assert_int_equal(sbx_json_get_bool(o, "b", &b, &err), 1);
	assert_true(b);
	assert_int_equal(sbx_json_get_bool(o, "s", &b, &err), -1);
	cJSON_Delete(o);
}

static void json_edges_stay_defined(void **state)
{
	struct sbx_err err = { 0 };
	const char *txt = "{\"a\":9223372036854775807,\"b\":-9223372036854775808,\"c\":1e300}";
	cJSON *o = sbx_json_parse_object(txt, strlen(txt), &err);
	int64_t n = 7;
	char dup[200];

	(void)state;
	assert_non_null(o);
	/* 2^63 (what 9223372036854775807 becomes as a double) is out of range,
	 * never an overflowing cast */
	assert_int_equal(sbx_json_get_i64(o, "a", 0, INT64_MAX, &n, &err), -1);
	assert_int_equal(sbx_json_get_i64(o, "b", INT64_MIN, 0, &n, &err), 1);
	assert_int_equal(sbx_json_get_i64(o, "c", 0, INT64_MAX, &n, &err), -1);
	cJSON_Delete(o);
	/* a long duplicate key cut in the message at a character boundary */
	snprintf(dup, sizeof dup, "{\"%s\":1,\"%s\":2}",
		 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\u00e9\u00e9",
		 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\u00e9\u00e9");
	assert_null(sbx_json_parse_object(dup, strlen(dup), &err));
	assert_non_null(strstr(err.msg, "aaa\""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(buf_append_consume),
		cmocka_unit_test(buf_cap_refuses_and_keeps_contents),
		cmocka_unit_test(frame_roundtrip_and_partial),
		cmocka_unit_test(frame_rejects_bad_headers),
		cmocka_unit_test(frame_append_refuses_oversize),
		cmocka_unit_test(id_shape_and_uniqueness),
		cmocka_unit_test(json_parse_errors_say_where),
		cmocka_unit_test(json_getters_name_the_field),
		cmocka_unit_test(json_edges_stay_defined),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
