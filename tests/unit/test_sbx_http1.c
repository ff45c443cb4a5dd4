/* cmocka tests of the HTTP/1 head parser the egress proxy reads decrypted
 * requests and the servers' answers with (lib/sbx_http1.c): the framing it
 * gives, and the ambiguous heads it refuses (one reading or none). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sbx_http1.h"

static long req(const char *s, struct sbx_h1_head *h)
{
	return sbx_h1_request(s, strlen(s), h);
}

static void request_framing(void **st)
{
	static struct sbx_h1_head h;
	const char *s = "POST /v1/x?a=1 HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\n"
			"X-Empty:\r\n\r\nhello";

	(void)st;
	assert_int_equal(req(s, &h), (long)(strlen(s) - 5));
	assert_true(sbx_h1_is(s, h.method, "post"));
	assert_int_equal(h.target.len, 9);
	assert_int_equal(h.body, SBX_H1_LENGTH);
	assert_int_equal(h.length, 5);
	assert_int_equal(h.n_fields, 3);
	assert_int_equal(h.value[2].len, 0);
	assert_false(h.close);
	for (size_t k = 0; k < strlen(s) - 5; k++)     /* every prefix: read more */
		assert_int_equal(sbx_h1_request(s, k, &h), SBX_H1_MORE);
	assert_true(req("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", &h) > 0);
	assert_int_equal(h.body, SBX_H1_CHUNKED);
	assert_true(req("GET / HTTP/1.0\r\n\r\n", &h) > 0);
	assert_true(h.close);
	assert_true(req("GET / HTTP/1.1\r\nConnection: keep-alive, Close\r\n\r\n", &h) > 0);
	assert_true(h.close);
}

static void request_refusals(void **st)
{
	static struct sbx_h1_head h;
	static const char *const bad[] = {
		"GET / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
		"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
		"GET / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
		"GET / HTTP/1.1\r\nHost : a\r\n\r\n",
		"GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n",
		"GET / HTTP/1.1\nHost: a\n\n",
		"GET / HTTP/2.0\r\n\r\n",
		"GET  / HTTP/1.1\r\n\r\n",
		"GET / HTTP/1.1\r\nBad header\r\n\r\n",
		"GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
		"GET / HTTP/1.1\r\nX: a\x01b\r\n\r\n",
		"\r\nGET / HTTP/1.1\r\n\r\n",
	};
	char *big;

	(void)st;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(req(bad[i], &h), SBX_H1_BAD);
	/* a head that never ends within the bound */
	big = malloc(SBX_H1_HEAD_MAX + 64);
	assert_non_null(big);
	memset(big, 'a', SBX_H1_HEAD_MAX + 63);
	memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
	big[SBX_H1_HEAD_MAX + 63] = '\0';
	assert_int_equal(req(big, &h), SBX_H1_BAD);
	free(big);
}

static void responses_and_chunks(void **st)
{
	static struct sbx_h1_head h;
	const char *r = "HTTP/1.1 204 No Content\r\nServer: x\r\n\r\n";
	unsigned long long size;

	(void)st;
	assert_int_equal(sbx_h1_response(r, strlen(r), &h), (long)strlen(r));
	assert_int_equal(h.status, 204);
	assert_int_equal(h.body, SBX_H1_UNTIL_CLOSE);
	assert_true(sbx_h1_response("HTTP/1.1 200\r\nContent-Length: 3\r\n\r\n", 35, &h) > 0);
	assert_int_equal(h.body, SBX_H1_LENGTH);
	assert_int_equal(sbx_h1_response("HTTP/1.1 20 x\r\n\r\n", 17, &h), SBX_H1_BAD);
	assert_int_equal(sbx_h1_chunk_line("1a;x=y\r\n", 8, &size), 8);
	assert_int_equal(size, 26);
	assert_int_equal(sbx_h1_chunk_line("1a", 2, &size), SBX_H1_MORE);
	assert_int_equal(sbx_h1_chunk_line("1a\r", 3, &size), SBX_H1_MORE);
	assert_int_equal(sbx_h1_chunk_line("x\r\n", 3, &size), SBX_H1_BAD);
	assert_int_equal(sbx_h1_chunk_line("1a\rx", 4, &size), SBX_H1_BAD);
	assert_int_equal(sbx_h1_chunk_line("1111111111111111\r\n", 18, &size), SBX_H1_BAD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(request_framing),
		cmocka_unit_test(request_refusals),
		cmocka_unit_test(responses_and_chunks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
