/* Unit tests of the preview proxy's response checks (gateway/proxy/
 * gw_presp.c): guests' cookies made host-only, the gateway's token cookie
 * never set by a guest, responses framed as RFC 9112 6.3 says whatever
 * the pieces they arrive in, and heads two parsers could read differently
 * refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../../gateway/proxy/gw_presp.h"

#define TOKEN "sbx_preview_token"

static struct gw_presp rp;
static struct sbx_buf out;

static int setup(void **state)
{
	(void)state;
	gw_presp_init(&rp);
	sbx_buf_init(&out, 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	gw_presp_free(&rp);
	sbx_buf_free(&out);
	return 0;
}

/* Feed s in pieces of step bytes (0: whole); what came out, as a string. */
static const char *feed(const char *s, size_t step, int *rc)
{
	size_t n = strlen(s);
	*rc = 0;
	for (size_t i = 0; i < n && !*rc; i += step ? step : n) {
		size_t k = step && n - i > step ? step : n - i;
		*rc = gw_presp_feed(&rp, s + i, k, &out, TOKEN);
	}
	sbx_buf_append(&out, "", 1);
	out.len--;
	return (const char *)sbx_buf_head(&out);
}

static void test_cookies_host_only(void **state)
{
	(void)state;
	int rc;
	gw_presp_expect(&rp, 0);
	const char *o = feed("HTTP/1.1 200 OK\r\n"
			     "Set-Cookie: a=1; Path=/; Domain=.localhost; HttpOnly\r\n"
			     "set-cookie: b=2;domain=3000-x.localhost\r\n"
			     "Set-Cookie: c=3; Secure; DOMAIN = evil; SameSite=Lax\r\n"
			     "Set-Cookie: " TOKEN "=forged; Path=/\r\n"
			     "Set-Cookie:  " TOKEN " =forged2\r\n"
			     "Set-Cookie: " TOKEN "x=kept\r\n"
			     "Content-Length: 2\r\n\r\nok", 0, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(o, "HTTP/1.1 200 OK\r\n"
			    "Set-Cookie: a=1; Path=/; HttpOnly\r\n"
			    "Set-Cookie: b=2\r\n"
			    "Set-Cookie: c=3; Secure; SameSite=Lax\r\n"
			    "Set-Cookie: " TOKEN "x=kept\r\n"
			    "Content-Length: 2\r\n\r\nok");
	assert_int_equal(rp.state, GW_PR_HEAD);
}

/* Three responses on one connection, cut into every piece size: the
 * cookie in each is rewritten and every body byte passes, in order. */
static void test_framing_any_pieces(void **state)
{
	(void)state;
	const char *in = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nHTTP/"
			 "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			 "4\r\nSet-\r\n9\r\nCookie: x\r\n0\r\n\r\n"
			 "HTTP/1.1 404 Not Found\r\nSet-Cookie: z=1; Domain=d\r\nContent-Length: 0\r\n\r\n";
	const char *want = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nHTTP/"
			   "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			   "4\r\nSet-\r\n9\r\nCookie: x\r\n0\r\n\r\n"
			   "HTTP/1.1 404 Not Found\r\nSet-Cookie: z=1\r\nContent-Length: 0\r\n\r\n";
	for (size_t step = 1; step <= strlen(in); step++) {
		int rc;
		teardown(NULL);
		setup(NULL);
		for (int i = 0; i < 3; i++)
			gw_presp_expect(&rp, 0);
		const char *o = feed(in, step, &rc);
		assert_int_equal(rc, 0);
		assert_string_equal(o, want);
		assert_int_equal(rp.state, GW_PR_HEAD);
		assert_int_equal(rp.count, 0);
	}
}

/* A HEAD's response, 204 and 304 have no body whatever they say; 1xx
 * precede the final response; 101 turns the rest into bytes. */
static void test_bodyless_and_interim(void **state)
{
	(void)state;
	int rc;
	gw_presp_expect(&rp, 1);
	gw_presp_expect(&rp, 0);
	gw_presp_expect(&rp, 0);
	gw_presp_expect(&rp, 0);
	const char *o = feed("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n"
			     "HTTP/1.1 204 No Content\r\n\r\n"
			     "HTTP/1.1 100 Continue\r\n\r\n"
			     "HTTP/1.1 304 Not Modified\r\nContent-Length: 3\r\n\r\n"
			     "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n"
			     "\x81\x02hi HTTP/1.1 200 OK\r\nSet-Cookie: a; Domain=x\r\n\r\n", 0, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(rp.state, GW_PR_RAW);
	assert_non_null(strstr(o, "\x81\x02hi HTTP/1.1 200 OK\r\nSet-Cookie: a; Domain=x"));
	assert_int_equal(rp.count, 0);
}

/* A body without a length runs to the end of the connection. */
static void test_close_delimited(void **state)
{
	(void)state;
	int rc;
	gw_presp_expect(&rp, 0);
	feed("HTTP/1.0 200 OK\r\n\r\nHTTP/1.1 200 OK\r\nSet-Cookie: a=1; Domain=x\r\n\r\n", 0, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(rp.state, GW_PR_RAW);
}

static void refused(const char *head, const char *why)
{
	int rc;
	teardown(NULL);
	setup(NULL);
	gw_presp_expect(&rp, 0);
	const char *o = feed(head, 0, &rc);
	assert_int_equal(rc, -1);
	assert_int_equal(rp.state, GW_PR_BAD);
	assert_int_equal(rp.at_head, 1);
	assert_string_equal(o, "");   /* nothing of a refused head goes on */
	assert_non_null(strstr(rp.why, why));
}

static void test_refused_heads(void **state)
{
	(void)state;
	/* a browser would read a second header where a strict parser
	 * reads one line: the cookie would escape the rewrite */
	refused("HTTP/1.1 200 OK\r\nX: a\nSet-Cookie: t=1; Domain=x\r\n\r\n", "bare CR or LF");
	refused("HTTP/1.1 200 OK\r\nX: a\rSet-Cookie: t=1; Domain=x\r\n\r\n", "bare CR or LF");
	refused("HTTP/1.1 200 OK\r\nX: a\r\n Set-Cookie: t=1\r\n\r\n", "folded");
	refused("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
		"both");
	refused("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", "Content-Length");
	refused("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "Content-Length");
	refused("HTTP/1.1 200 OK\r\nSet Cookie: a\r\n\r\n", "tchar");
	refused("HTTP/1.1 200 OK\r\nX: \001\r\n\r\n", "control");
	refused("HTTP/2 200 OK\r\n\r\n", "status line");
	refused("hello\r\n\r\n", "status line");
	refused("\x01garbage that never ends its head", "status line");
}

static void test_head_too_large(void **state)
{
	(void)state;
	static char big[GW_H1_HEAD_MAX + 64];
	int rc;
	gw_presp_expect(&rp, 0);
	memset(big, 'a', sizeof big - 1);
	memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
	feed(big, 1000, &rc);
	assert_int_equal(rc, -1);
	assert_non_null(strstr(rp.why, "16 KiB"));
}

static void test_bad_chunk_after_head(void **state)
{
	(void)state;
	int rc;
	gw_presp_expect(&rp, 0);
	const char *o = feed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 0, &rc);
	assert_int_equal(rc, -1);
	assert_int_equal(rp.at_head, 0);   /* mid-body: no status line may follow */
	assert_non_null(strstr(o, "Transfer-Encoding: chunked\r\n\r\n"));
}

static void test_pending_ring(void **state)
{
	(void)state;
	for (int i = 0; i < GW_PRESP_PENDING_MAX; i++)
		assert_int_equal(gw_presp_expect(&rp, i == 1), 0);
	assert_true(gw_presp_full(&rp));
	assert_int_equal(gw_presp_expect(&rp, 0), -1);
	int rc;
	/* the first answers a GET (its body counts), the second a HEAD */
	feed("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxHTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n",
	     0, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(rp.state, GW_PR_HEAD);
	assert_int_equal(rp.count, GW_PRESP_PENDING_MAX - 2);
	assert_false(gw_presp_full(&rp));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cookies_host_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_framing_any_pieces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bodyless_and_interim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_delimited, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_heads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_head_too_large, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_chunk_after_head, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pending_ring, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
