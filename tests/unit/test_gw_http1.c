/* Unit tests of the preview proxy's pure parsers: the HTTP/1.1 request
 * head (gateway/proxy/gw_http1.c), the chunked framer, the TLS SNI reader
 * (gw_sni.c) and preview host names (gw_phost.c). The smuggling cases are
 * the ones RFC 9112 section 11.2 and the usual CL.TE / TE.CL / TE.TE
 * attacks rely on: each must be refused, never interpreted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../../gateway/proxy/gw_http1.h"
#include "../../gateway/proxy/gw_sni.h"
#include "../../gateway/proxy/gw_proxy.h"

static struct gw_h1_head h;

static int parse(const char *s)
{
	return gw_h1_parse(s, strlen(s), &h);
}

static void test_simple_get(void **state)
{
	(void)state;
	const char *r = "GET /a?b=c HTTP/1.1\r\nHost: x.localhost:8080\r\nAccept: */*\r\n\r\nNEXT";
	assert_int_equal(parse(r), (int)strlen(r) - 4);
	assert_int_equal(h.minor, 1);
	assert_int_equal(h.nhdr, 2);
	assert_int_equal(h.host, 0);
	assert_memory_equal(r + h.method.off, "GET", 3);
	assert_int_equal(h.target.len, 6);
	assert_memory_equal(r + h.hdr[0].value.off, "x.localhost:8080", h.hdr[0].value.len);
	assert_int_equal(h.content_length, -1);
	assert_int_equal(h.chunked, 0);
}

static void test_framing_and_tokens(void **state)
{
	(void)state;
	assert_true(parse("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 12\r\n\r\n") > 0);
	assert_int_equal(h.content_length, 12);
	assert_true(parse("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n") > 0);
	assert_int_equal(h.chunked, 1);
	assert_true(parse("GET /ws HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, Upgrade\r\n"
			  "Upgrade: WebSocket\r\n\r\n") > 0);
	assert_true(h.conn_upgrade && h.upgrade_websocket && !h.conn_close);
	assert_true(parse("GET / HTTP/1.0\r\n\r\n") > 0);   /* 1.0 needs no Host */
	assert_int_equal(h.host, -1);
	assert_true(parse("\r\nGET / HTTP/1.1\r\nHost: a\r\nX: \t v \t\r\n\r\n") > 0);
	assert_int_equal(h.hdr[1].value.len, 1);              /* OWS trimmed */
}

static void test_reuse_clears_flags(void **state)
{
	(void)state;
	/* one struct serves every request of a connection */
	assert_true(parse("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
			  "Connection: close, upgrade\r\nUpgrade: websocket\r\n\r\n") > 0);
	assert_true(parse("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n") > 0);
	assert_int_equal(h.chunked, 0);
	assert_int_equal(h.content_length, 5);
	assert_false(h.conn_close || h.conn_upgrade || h.upgrade_websocket);
}

static void test_incomplete(void **state)
{
	(void)state;
	assert_int_equal(parse(""), 0);
	assert_int_equal(parse("GET / HTTP/1.1\r\nHost: a\r\n"), 0);
	assert_int_equal(parse("GET / HTTP/1.1\r\nHost: a\r\n\r"), 0);
	assert_int_equal(parse("GET / HTT"), 0);
}

/* RFC 9112 2.2: empty lines before a request line are skipped (CRLF or a
 * bare LF, GW_H1_LEAD_MAX at most); they count in head_len, so the proxy
 * consumes them with the head, and never in what it forwards (from
 * method.off on) */
static void test_leading_empty_lines(void **state)
{
	(void)state;
	static char many[GW_H1_LEAD_MAX * 2 + 64];
	assert_int_equal(gw_h1_lead("", 0), 0);
	assert_int_equal(gw_h1_lead("GET", 3), 0);
	assert_int_equal(gw_h1_lead("\r\n\r\nGET", 7), 4);
	assert_int_equal(gw_h1_lead("\n\r\n\nG", 5), 4);
	assert_int_equal(gw_h1_lead("\r\n\r", 3), 2);    /* the last CR's LF may follow */
	assert_int_equal(gw_h1_lead("\r\rGET", 5), 0);    /* a bare CR ends them */
	const char *r = "\r\n\r\nGET /a HTTP/1.1\r\nHost: a\r\n\r\nNEXT";
	assert_int_equal(parse(r), (int)strlen(r) - 4);
	assert_int_equal(h.method.off, 4);
	assert_memory_equal(r + h.target.off, "/a", 2);
	assert_int_equal(h.host, 0);
	assert_true(parse("\n\nGET / HTTP/1.1\r\nHost: a\r\n\r\n") > 0);
	assert_int_equal(parse("\r\n\r\n"), 0);             /* no request yet */
	assert_int_equal(parse("\r\n\r"), 0);
	assert_int_equal(parse("\r\n\rGET / HTTP/1.1\r\nHost: a\r\n\r\n"), -400);
	/* only the empty lines: a bare LF in the head is still refused */
	assert_int_equal(parse("\nGET / HTTP/1.1\nHost: a\n\n"), -400);
	/* GW_H1_LEAD_MAX empty lines pass, one more is a 400 */
	size_t n = 0;
	for (int i = 0; i < GW_H1_LEAD_MAX; i++)
		n += (size_t)snprintf(many + n, sizeof many - n, i % 2 ? "\n" : "\r\n");
	snprintf(many + n, sizeof many - n, "GET / HTTP/1.1\r\nHost: a\r\n\r\n");
	assert_int_equal(gw_h1_lead(many, strlen(many)), (long)n);
	assert_true(parse(many) > 0);
	memmove(many + 2, many, strlen(many) + 1);
	memcpy(many, "\r\n", 2);
	assert_int_equal(gw_h1_lead(many, strlen(many)), -1);
	assert_int_equal(parse(many), -400);
	/* even before the request line has begun */
	memset(many, '\n', GW_H1_LEAD_MAX + 1);
	assert_int_equal(gw_h1_parse(many, GW_H1_LEAD_MAX + 1, &h), -400);
}

/* the front door's routing hint: the first Host line, after the same
 * empty lines (two of them once sent the request to the API, which
 * closed it unanswered) */
static void test_sniff_host(void **state)
{
	(void)state;
	char out[32];
	static const char *const found[] = {
		"GET / HTTP/1.1\r\nHost: 3000-x.localhost\r\n",
		"\r\n\r\nGET / HTTP/1.1\r\nHost: 3000-x.localhost\r\n\r\n",
		"\n\nGET / HTTP/1.1\r\nX: y\r\nhOST: \t3000-x.localhost \t\r\n\r\n",
	};
	for (size_t k = 0; k < sizeof found / sizeof found[0]; k++) {
		memset(out, 0, sizeof out);
		if (gw_h1_sniff_host(found[k], strlen(found[k]), out, sizeof out) != 1 ||
		    strcmp(out, "3000-x.localhost"))
			fail_msg("case %zu: not found (%s)", k, out);
	}
	static const char *const later[] = {
		"", "\r\n\r\n", "GET / HTTP/1.1", "\r\nGET / HTTP/1.1\r\n", "GET / HTTP/1.1\r\nHost: a",
	};
	for (size_t k = 0; k < sizeof later / sizeof later[0]; k++)
		if (gw_h1_sniff_host(later[k], strlen(later[k]), out, sizeof out) != 0)
			fail_msg("case %zu: not incomplete", k);
	static const char *const none[] = {
		"GET / HTTP/1.1\r\nX: y\r\n\r\nHost: late\r\n",
		"GET / HTTP/1.1\r\nHost: a-name-longer-than-the-output-buffer\r\n",
		"\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
	};
	for (size_t k = 0; k < sizeof none / sizeof none[0]; k++)
		if (gw_h1_sniff_host(none[k], strlen(none[k]), out, sizeof out) != -1)
			fail_msg("case %zu: not refused", k);
}

static void test_smuggling_refused(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1234567890123456789\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\x0b" "chunked\r\n\r\n",
		"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n folded\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\n\tfolded\r\n\r\n",
		"GET / HTTP/1.1\nHost: a\n\n",
		"GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nX: a\x01" "b\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nX: a\x7f\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
		"GET / HTTP/1.1\r\n\r\n",
		"GET  / HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /\x01 HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET / HTTP/1.1 \r\nHost: a\r\n\r\n",
		"G@T / HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET / HTTP/1.1\r\n: empty\r\n\r\n",
		"GET / http/1.1\r\nHost: a\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int rc = gw_h1_parse(bad[i], strlen(bad[i]), &h);
		if (rc != -400)
			fail_msg("case %zu: got %d, want -400", i, rc);
	}
	assert_int_equal(parse("GET / HTTP/2.0\r\nHost: a\r\n\r\n"), -505);
}

static void test_limits(void **state)
{
	(void)state;
	static char big[GW_H1_HEAD_MAX + 64];
	size_t n = (size_t)snprintf(big, sizeof big, "GET / HTTP/1.1\r\nHost: a\r\nX: ");
	memset(big + n, 'a', sizeof big - n);
	assert_int_equal(gw_h1_parse(big, sizeof big, &h), -431);
	/* 101 headers */
	static char many[8192];
	n = (size_t)snprintf(many, sizeof many, "GET / HTTP/1.1\r\nHost: a\r\n");
	for (int i = 0; i < 100; i++)
		n += (size_t)snprintf(many + n, sizeof many - n, "X%d: y\r\n", i);
	n += (size_t)snprintf(many + n, sizeof many - n, "\r\n");
	assert_int_equal(gw_h1_parse(many, n, &h), -431);
}

static long feed_all(struct gw_h1_chunk *c, const char *s)
{
	gw_h1_chunk_init(c);
	return gw_h1_chunk_feed(c, s, strlen(s));
}

static void test_chunked(void **state)
{
	(void)state;
	struct gw_h1_chunk c;
	const char *body = "5\r\nhello\r\n1a;ext=1\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nT: v\r\n\r\nGET";
	assert_int_equal(feed_all(&c, body), (long)strlen(body) - 3);
	assert_true(c.done);
	/* byte at a time gives the same end */
	gw_h1_chunk_init(&c);
	size_t i;
	for (i = 0; !c.done; i++)
		assert_int_equal(gw_h1_chunk_feed(&c, body + i, 1), 1);
	assert_int_equal(i, strlen(body) - 3);
	static const char *const bad[] = {
		"zz\r\nhello\r\n0\r\n\r\n", "\r\n", "5\nhello\r\n0\r\n\r\n", "5\r\nhelloX\r\n",
		"-5\r\n", " 5\r\n", "5 \r\n", "1000000000000000\r\n", "0\r\n folded\r\n\r\n",
		"0x5\r\n", "5;\x01\r\n",
	};
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
		if (feed_all(&c, bad[k]) != -1)
			fail_msg("chunk case %zu accepted", k);
	assert_int_equal(feed_all(&c, "5\r\nhel"), 6);   /* incomplete: all consumed, not done */
	assert_false(c.done);
}

/* A minimal TLS 1.2-style ClientHello with one server_name extension. */
static size_t hello(unsigned char *b, const char *name)
{
	size_t nl = strlen(name), i = 0;
	size_t ext = 2 + 2 + 2 + 1 + 2 + nl;
	size_t body = 2 + 32 + 1 + 2 + 2 + 1 + 1 + 2 + ext;
	b[i++] = 0x16; b[i++] = 3; b[i++] = 1;
	b[i++] = (unsigned char)((body + 4) >> 8); b[i++] = (unsigned char)(body + 4);
	b[i++] = 1; b[i++] = 0; b[i++] = (unsigned char)(body >> 8); b[i++] = (unsigned char)body;
	b[i++] = 3; b[i++] = 3;
	memset(b + i, 0x42, 32); i += 32;
	b[i++] = 0;                        /* session id */
	b[i++] = 0; b[i++] = 2; b[i++] = 0x13; b[i++] = 0x01;   /* one suite */
	b[i++] = 1; b[i++] = 0;            /* null compression */
	b[i++] = (unsigned char)(ext >> 8); b[i++] = (unsigned char)ext;
	b[i++] = 0; b[i++] = 0;            /* server_name */
	b[i++] = (unsigned char)((ext - 4) >> 8); b[i++] = (unsigned char)(ext - 4);
	b[i++] = (unsigned char)((ext - 6) >> 8); b[i++] = (unsigned char)(ext - 6);
	b[i++] = 0;
	b[i++] = (unsigned char)(nl >> 8); b[i++] = (unsigned char)nl;
	memcpy(b + i, name, nl);
	return i + nl;
}

static void test_sni(void **state)
{
	(void)state;
	unsigned char b[512];
	char out[256];
	size_t n = hello(b, "3000-SBX_local_ab.localhost");
	assert_int_equal(gw_sni_parse(b, n, out, sizeof out), 1);
	assert_string_equal(out, "3000-sbx_local_ab.localhost");
	for (size_t k = 0; k < n; k++)      /* every prefix: incomplete, never a misread */
		assert_int_equal(gw_sni_parse(b, k, out, sizeof out), 0);
	b[5] = 2;                           /* not a ClientHello */
	assert_int_equal(gw_sni_parse(b, n, out, sizeof out), -1);
	n = hello(b, "bad name");
	assert_int_equal(gw_sni_parse(b, n, out, sizeof out), -1);
	assert_int_equal(gw_sni_parse((const unsigned char *)"GET /", 5, out, sizeof out), -1);
}

static void test_preview_host(void **state)
{
	(void)state;
	int port;
	char sid[80];
	const char *ok = "3000-sbx_local_abc234.localhost:8080";
	assert_int_equal(gw_phost_parse(ok, strlen(ok), "localhost", &port, sid, sizeof sid), 0);
	assert_int_equal(port, 3000);
	assert_string_equal(sid, "sbx_local_abc234");
	const char *dom = "8000-sbx_local_abc.Preview.Example";
	assert_int_equal(gw_phost_parse(dom, strlen(dom), "preview.example", &port, sid, sizeof sid), 0);
	assert_string_equal(sid, "sbx_local_abc");
	/* which side answers: the proxy for its domain and preview-looking names */
	assert_true(gw_phost_claim("0-x.localhost", 13, "localhost"));
	assert_true(gw_phost_claim("a.b.LOCALHOST:80", 16, "localhost"));
	assert_true(gw_phost_claim("3000-sbx_a_b.localhost.evil.com", 31, "localhost"));
	assert_false(gw_phost_claim("localhost:8080", 14, "localhost"));
	assert_false(gw_phost_claim("api.example.com", 15, "localhost"));
	assert_false(gw_phost_claim("evillocalhost", 13, "localhost"));
	static const char *const bad[] = {
		"localhost", "3000-sbx_a_b.localhost.evil", "3000-sbx_a_b.evillocalhost",
		"0-sbx_a_b.localhost", "65536-sbx_a_b.localhost", "03000-sbx_a_b.localhost",
		"3000sbx_a_b.localhost", "3000-abc.localhost", "3000-sbx_a-b.localhost",
		"3000-sbx_a.b.localhost", "-sbx_a_b.localhost", "3000-.localhost", "",
		"123456-sbx_a_b.localhost", "3000-SBX_A_B.localhost", "3000-sbx_A_b.localhost",
		"1024-sbx_a_b.localhost",
		/* a port suffix is digits only (the Host is used in redirects) */
		"3000-sbx_a_b.localhost:", "3000-sbx_a_b.localhost:@evil.example",
		"3000-sbx_a_b.localhost:80/x", "3000-sbx_a_b.localhost:123456",
		"3000-sbx_a_b.localhost:80:80",
	};
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
		if (!gw_phost_parse(bad[k], strlen(bad[k]), "localhost", &port, sid, sizeof sid))
			fail_msg("host %s accepted", bad[k]);
}

/* the per-client preview cap counts an IPv6 client by its /64 */
static void test_peer_key(void **state)
{
	char k[80];
	(void)state;
	gw_peer_key("203.0.113.7", k, sizeof k);
	assert_string_equal(k, "203.0.113.7");
	gw_peer_key("2001:db8:1:2:aaaa:bbbb:cccc:dddd", k, sizeof k);
	assert_string_equal(k, "2001:db8:1:2::/64");
	gw_peer_key("2001:db8:1:2::99", k, sizeof k);
	assert_string_equal(k, "2001:db8:1:2::/64");
	gw_peer_key("2001:db8:1:3::1", k, sizeof k);
	assert_string_equal(k, "2001:db8:1:3::/64");
	gw_peer_key("unknown", k, sizeof k);
	assert_string_equal(k, "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simple_get),
		cmocka_unit_test(test_framing_and_tokens),
		cmocka_unit_test(test_incomplete),
		cmocka_unit_test(test_reuse_clears_flags),
		cmocka_unit_test(test_leading_empty_lines),
		cmocka_unit_test(test_sniff_host),
		cmocka_unit_test(test_smuggling_refused),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_chunked),
		cmocka_unit_test(test_sni),
		cmocka_unit_test(test_preview_host),
		cmocka_unit_test(test_peer_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
