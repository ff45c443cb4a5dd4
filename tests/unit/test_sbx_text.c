/* Unit tests of lib/sbx_text.c: bytes as JSON text, UTF-8, base64. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sbx_text.h"

/* sbx_text_json of n bytes as a C string (free it). */
static char *json(const char *p, size_t n)
{
	struct sbx_buf b;
	char *out;

	sbx_buf_init(&b, 0);
	assert_int_equal(sbx_text_json(&b, p, n), 0);
	assert_int_equal(sbx_buf_append(&b, "", 1), 0);
	out = strdup((const char *)sbx_buf_head(&b));
	sbx_buf_free(&b);
	return out;
}

static void test_json_escapes(void **state)
{
	char *s = json("a\"b\\c\nd\te\rf\x01g\0h", 15);
	(void)state;
	assert_string_equal(s, "a\\\"b\\\\c\\nd\\te\\rf\\u0001g\\u0000h");
	free(s);
}

static void test_json_utf8_kept_invalid_replaced(void **state)
{
	/* é kept; a lone continuation byte, an overlong '/' and a surrogate
	 * are not UTF-8 */
	char *s = json("\xc3\xa9|\x80|\xc0\xaf|\xed\xa0\x80", 11);
	(void)state;
	assert_string_equal(s, "\xc3\xa9|\\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd");
	free(s);
}

static void test_json_full_buffer(void **state)
{
	struct sbx_buf b;
	(void)state;
	sbx_buf_init(&b, 4);
	assert_int_equal(sbx_text_json(&b, "\x01", 1), -1);   /* 6 bytes into 4 */
	sbx_buf_free(&b);
}

static void test_utf8_clean(void **state)
{
	char *s = sbx_text_utf8("ok\0\xff\xe2\x82\xac", 7);
	(void)state;
	assert_non_null(s);
	/* NUL and 0xff become U+FFFD, the euro sign stays */
	assert_string_equal(s, "ok\xef\xbf\xbd\xef\xbf\xbd\xe2\x82\xac");
	free(s);
}

static void test_base64(void **state)
{
	static const struct { const char *in, *out; } v[] = {   /* RFC 4648 section 10 */
		{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
		{ "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		char *s = sbx_text_base64_str(v[i].in, strlen(v[i].in));
		assert_non_null(s);
		assert_string_equal(s, v[i].out);
		free(s);
	}
	char *z = sbx_text_base64_str("\0\0\xff", 3);
	assert_string_equal(z, "AAD/");
	free(z);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_escapes),
		cmocka_unit_test(test_json_utf8_kept_invalid_replaced),
		cmocka_unit_test(test_json_full_buffer),
		cmocka_unit_test(test_utf8_clean),
		cmocka_unit_test(test_base64),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
