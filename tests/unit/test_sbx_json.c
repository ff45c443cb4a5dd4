/* Unit tests of lib/sbx_json.c's whole strings: a string that holds U+0000
 * ("\u0000" in the text) is never read cut short. It is refused where a
 * name is wanted (naming the field), decoded with its length where it is
 * data, and printed back as the same JSON. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sbx_json.h"

static cJSON *parse(const char *txt)
{
	struct sbx_err err = { 0 };
	cJSON *o = sbx_json_parse_object(txt, strlen(txt), &err);

	if (!o)
		fail_msg("%s: %s", txt, err.msg);
	return o;
}

/* Each body names one field whose string holds a NUL, in every place a
 * string can be: the getters and the walk refuse it by its path. */
static void nul_refused_naming_the_field(void **state)
{
	static const struct { const char *txt, *path; } t[] = {
		{ "{\"isolation\":\"jail\\u0000gvisor\"}", "isolation" },
		{ "{\"isolation\":\"gvisor\\u0000\"}", "isolation" },
		{ "{\"cmd\":\"echo one\\u0000; echo two\"}", "cmd" },
		{ "{\"path\":\"\\u0000\"}", "path" },
		{ "{\"a\":1,\"args\":[\"ok\",\"b\\u0000c\"]}", "args[1]" },
		{ "{\"env\":{\"A\":\"1\",\"B\":\"x\\u0000y\"}}", "env.B" },
		{ "{\"files\":[{\"path\":\"p\",\"content\":\"ab\\u0000cd\"}]}", "files[0].content" },
		{ "{\"n\":{\"m\":[[1,\"\\u0000\"]]}}", "n.m[0][1]" },
		/* a backslash, then the NUL */
		{ "{\"p\":\"\\\\\\u0000\"}", "p" },
		/* the first of two */
		{ "{\"p\":\"a\\u0000\",\"q\":\"\\u0000\"}", "p" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct sbx_err err = { 0 };
		char path[100];
		cJSON *o = parse(t[i].txt);

		assert_int_equal(sbx_json_find_nul(o, path, sizeof path), 1);
		assert_string_equal(path, t[i].path);
		assert_int_equal(sbx_json_refuse_nul(o, &err), -1);
		assert_int_equal(err.code, EINVAL);
		snprintf(path, sizeof path, "field \"%s\" must not contain NUL (\\u0000)", t[i].path);
		assert_string_equal(err.msg, path);
		if (!strchr(t[i].path, '.') && !strchr(t[i].path, '[')) {
			const char *s = "untouched";
			memset(&err, 0, sizeof err);
			assert_int_equal(sbx_json_get_str(o, t[i].path, &s, &err), -1);
			assert_string_equal(s, "untouched");   /* never the part before the NUL */
			assert_non_null(strstr(err.msg, "must not contain NUL"));
			assert_non_null(strstr(err.msg, t[i].path));
		}
		cJSON_Delete(o);
	}
}

/* Without a NUL every string is a plain cJSON string, whole, escapes that
 * only look like one included. */
static void other_strings_stay_strings(void **state)
{
	static const struct { const char *txt, *want; size_t len; } t[] = {
		{ "{\"s\":\"gvisor\"}", "gvisor", 6 },
		{ "{\"s\":\"a\\\\u0000\"}", "a\\u0000", 7 },     /* an escaped backslash, then text */
		{ "{\"s\":\"\\\\\\\\u0000\"}", "\\\\u0000", 7 },
		{ "{\"s\":\"\\u0001\\u00e9\"}", "\001\xc3\xa9", 3 },
		{ "{\"s\":\"\"}", "", 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct sbx_err err = { 0 };
		const char *s = NULL;
		char path[16];
		cJSON *o = parse(t[i].txt);

		assert_int_equal(sbx_json_find_nul(o, path, sizeof path), 0);
		assert_string_equal(path, "");
		assert_int_equal(sbx_json_refuse_nul(o, &err), 0);
		assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "s")));
		assert_int_equal(sbx_json_get_str(o, "s", &s, &err), 1);
		assert_int_equal(strlen(s), t[i].len);
		assert_memory_equal(s, t[i].want, t[i].len);
		cJSON_Delete(o);
	}
}

/* The strings after one with a NUL are the ones they were: the text's
 * strings and the tree's items stay in step through keys and nesting. */
static void strings_stay_in_step(void **state)
{
	const char *txt = "{\"a\":\"x\\u0000\",\"k\\\"ey\":\"y\",\"c\":[\"\\u0000\",\"z\",{\"\\\\u0000\":\"w\"}],"
			  "\"d\":\"v\\u0000\\u0000\",\"e\":\"u\"}";
	cJSON *o = parse(txt);
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "c");

	(void)state;
	assert_true(sbx_json_has_nul(cJSON_GetObjectItemCaseSensitive(o, "a")));
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(o, "k\"ey")->valuestring, "y");
	assert_true(sbx_json_has_nul(cJSON_GetArrayItem(c, 0)));
	assert_string_equal(cJSON_GetArrayItem(c, 1)->valuestring, "z");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(c, 2), "\\u0000")->valuestring, "w");
	assert_true(sbx_json_has_nul(cJSON_GetObjectItemCaseSensitive(o, "d")));
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(o, "e")->valuestring, "u");
	assert_false(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "a")));
	cJSON_Delete(o);
}

/* A key names a field; the part before its NUL would name another. */
static void nul_in_a_key_is_a_parse_error(void **state)
{
	static const char *const t[] = {
		"{\"isolation\\u0000\":\"gvisor\"}",
		"{\"env\":{\"A\\u0000B\":\"x\"}}",
		"{\"a\":[{\"b\":1,\"\\u0000\":2}]}",
	};
	(void)state;
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct sbx_err err = { 0 };
		assert_null(sbx_json_parse_object(t[i], strlen(t[i]), &err));
		assert_int_equal(err.code, EINVAL);
		assert_non_null(strstr(err.msg, "a key holds NUL"));
	}
}

/* cJSON decodes a \u escape without four hex digits as U+0000, which is not
 * JSON: refused at the parse, so "\u0000" is the one way to a NUL. */
static void bad_unicode_escape_is_a_parse_error(void **state)
{
	static const char *const t[] = {
		"{\"isolation\":\"gvisor\\uZZZZ\"}",
		"{\"isolation\":\"gvisor\\u00zz\"}",
		"{\"a\":[\"x\\u%00e9\"]}",
		"{\"k\\u00g0\":1}",
		"{\"a\":\"\\u12\"}",
	};
	(void)state;
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct sbx_err err = { 0 };
		assert_null(sbx_json_parse_object(t[i], strlen(t[i]), &err));
		assert_non_null(strstr(err.msg, "u needs four hex digits"));
	}
}

/* Data: the bytes, NUL included, with their count. */
static void data_decodes_whole(void **state)
{
	static const struct { const char *txt; const char *want; size_t len; } t[] = {
		{ "{\"content\":\"ab\\u0000cd\"}", "ab\0cd", 5 },
		{ "{\"content\":\"\\u0000\"}", "\0", 1 },
		{ "{\"content\":\"\\u0000\\u0000\"}", "\0\0", 2 },
		{ "{\"content\":\"x\\u0000\\u00e9\\ud83d\\ude00\\n\\\"\\\\\\/\\b\\f\\r\\t\\u20AC\"}",
		  "x\0\xc3\xa9\xf0\x9f\x98\x80\n\"\\/\b\f\r\t\xe2\x82\xac", 19 },
		{ "{\"content\":\"plain text\"}", "plain text", 10 },
		{ "{\"content\":\"\"}", "", 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct sbx_err err = { 0 };
		char *b = NULL;
		size_t n = 99;
		cJSON *o = parse(t[i].txt), *d;

		assert_int_equal(sbx_json_get_bytes(o, "content", &b, &n, &err), 1);
		assert_int_equal(n, t[i].len);
		assert_memory_equal(b, t[i].want, n);
		assert_int_equal(b[n], '\0');
		free(b);
		/* a copy of the tree (the MCP tools take one) is as whole */
		d = cJSON_Duplicate(o, 1);
		assert_int_equal(sbx_json_get_bytes(d, "content", &b, &n, &err), 1);
		assert_int_equal(n, t[i].len);
		assert_memory_equal(b, t[i].want, n);
		free(b);
		cJSON_Delete(d);
		cJSON_Delete(o);
	}
}

static void data_getter_contract(void **state)
{
	struct sbx_err err = { 0 };
	cJSON *o = parse("{\"n\":5,\"z\":null}");
	char *b = NULL;
	size_t n = 7;

	(void)state;
	assert_int_equal(sbx_json_get_bytes(o, "missing", &b, &n, &err), 0);
	assert_int_equal(sbx_json_get_bytes(o, "z", &b, &n, &err), 0);
	assert_null(b);
	assert_int_equal(n, 7);
	assert_int_equal(sbx_json_get_bytes(o, "n", &b, &n, &err), -1);
	assert_non_null(strstr(err.msg, "\"n\" must be a string"));
	/* a raw item the parse did not make is not decoded by guesswork */
	cJSON_AddRawToObject(o, "r", "\"a\\q\"");
	assert_int_equal(sbx_json_get_bytes(o, "r", &b, &n, &err), -1);
	cJSON_Delete(o);
}

/* What the gateway passes on is printed from the tree: the same JSON, so
 * the next parser sees the same whole string. */
static void printed_back_the_same(void **state)
{
	struct sbx_err err = { 0 };
	const char *txt = "{\"args\":[\"a\\u0000b\"],\"cwd\":\"/x\"}";
	cJSON *o = parse(txt), *again;
	char *s = sbx_json_print(o);

	(void)state;
	assert_non_null(s);
	assert_string_equal(s, txt);
	again = sbx_json_parse_object(s, strlen(s), &err);
	assert_non_null(again);
	assert_true(cJSON_Compare(o, again, 1));
	assert_true(sbx_json_has_nul(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(again, "args"), 0)));
	cJSON_free(s);
	cJSON_Delete(again);
	cJSON_Delete(o);
}

/* A value of any type (sbx_json_parse, for JSON-RPC) and paths at their
 * bounds. */
static void roots_and_bounds(void **state)
{
	struct sbx_err err = { 0 };
	char path[300], small[8], txt[200], key[80];
	cJSON *o = sbx_json_parse("\"a\\u0000\"", 9, &err);

	(void)state;
	assert_non_null(o);
	assert_true(sbx_json_has_nul(o));
	assert_int_equal(sbx_json_find_nul(o, path, sizeof path), 1);
	assert_string_equal(path, "");
	cJSON_Delete(o);
	o = sbx_json_parse("[\"x\",[\"\\u0000\"]]", 16, &err);
	assert_non_null(o);
	assert_int_equal(sbx_json_find_nul(o, path, sizeof path), 1);
	assert_string_equal(path, "[1][0]");
	cJSON_Delete(o);
	/* a long key is cut at 64 bytes, a long path at the buffer */
	memset(key, 'k', 72);
	key[72] = '\0';
	snprintf(txt, sizeof txt, "{\"%s\":{\"b\":\"\\u0000\"}}", key);
	o = parse(txt);
	assert_int_equal(sbx_json_find_nul(o, path, sizeof path), 1);
	assert_int_equal(strlen(path), 64 + 2);
	assert_int_equal(sbx_json_find_nul(o, small, sizeof small), 1);
	assert_string_equal(small, "kkkkkkk");
	assert_int_equal(sbx_json_find_nul(NULL, small, sizeof small), 0);
	cJSON_Delete(o);
	/* the bytes "\u0000" outside any string's NUL: nothing to mark */
	o = parse("{\"a\":\"\\\\u0000\",\"b\":[\"\\\\\\\\u0000\"]}");
	assert_int_equal(sbx_json_find_nul(o, path, sizeof path), 0);
	cJSON_Delete(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nul_refused_naming_the_field),
		cmocka_unit_test(other_strings_stay_strings),
		cmocka_unit_test(strings_stay_in_step),
		cmocka_unit_test(nul_in_a_key_is_a_parse_error),
		cmocka_unit_test(bad_unicode_escape_is_a_parse_error),
		cmocka_unit_test(data_decodes_whole),
		cmocka_unit_test(data_getter_contract),
		cmocka_unit_test(printed_back_the_same),
		cmocka_unit_test(roots_and_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
