/* cmocka tests of the egress proxy's name parsers (lib/sbx_sni.c) and the
 * network policy (runner/rn_policy.c): what a sandbox's first bytes name,
 * and what a policy allows. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <cJSON.h>

#include "sbx_sni.h"
#include "../../runner/rn_policy.h"

/* A minimal ClientHello with the given extensions block. */
static size_t hello(unsigned char *out, const unsigned char *ext, size_t extlen)
{
	size_t body = 2 + 32 + 1 + 4 + 2 + 2 + extlen, o = 0;

	out[o++] = 0x16; out[o++] = 3; out[o++] = 1;
	out[o++] = (unsigned char)((body + 4) >> 8); out[o++] = (unsigned char)(body + 4);
	out[o++] = 1; out[o++] = 0; out[o++] = (unsigned char)(body >> 8); out[o++] = (unsigned char)body;
	out[o++] = 3; out[o++] = 3;
	memset(out + o, 0xaa, 32); o += 32;
	out[o++] = 0;                       /* session id */
	out[o++] = 0; out[o++] = 2; out[o++] = 0x13; out[o++] = 0x01;
	out[o++] = 1; out[o++] = 0;         /* compression */
	out[o++] = (unsigned char)(extlen >> 8); out[o++] = (unsigned char)extlen;
	memcpy(out + o, ext, extlen);
	return o + extlen;
}

static size_t sni_ext(unsigned char *e, const char *name)
{
	size_t n = strlen(name);

	e[0] = 0; e[1] = 0;
	e[2] = (unsigned char)((n + 5) >> 8); e[3] = (unsigned char)(n + 5);
	e[4] = (unsigned char)((n + 3) >> 8); e[5] = (unsigned char)(n + 3);
	e[6] = 0; e[7] = (unsigned char)(n >> 8); e[8] = (unsigned char)n;
	memcpy(e + 9, name, n);
	return 9 + n;
}

static void sni_found_and_cut(void **st)
{
	unsigned char e[300], m[600];
	char out[SBX_PEEK_NAME_MAX];
	size_t n = hello(m, e, sni_ext(e, "API.Example.test."));

	(void)st;
	assert_int_equal(sbx_sni_peek(m, n, out), SBX_PEEK_NAME);
	assert_string_equal(out, "api.example.test");
	for (size_t k = 0; k < n; k++)   /* every prefix: read more, never a name */
		assert_int_equal(sbx_sni_peek(m, k, out), SBX_PEEK_MORE);
}

static void sni_refusals(void **st)
{
	unsigned char e[600] = { 0 }, m[900];
	char out[SBX_PEEK_NAME_MAX];
	size_t el, n;

	(void)st;
	n = hello(m, e, 0);
	assert_int_equal(sbx_sni_peek(m, n, out), SBX_PEEK_NONAME);
	el = sni_ext(e, "a.test");
	el += sni_ext(e + el, "b.test");            /* two server_name extensions */
	n = hello(m, e, el);
	assert_int_equal(sbx_sni_peek(m, n, out), SBX_PEEK_BAD);
	el = sni_ext(e, "a.test");
	e[el] = 0xfe; e[el + 1] = 0x0d; e[el + 2] = 0; e[el + 3] = 1; e[el + 4] = 0;  /* ECH */
	n = hello(m, e, el + 5);
	assert_int_equal(sbx_sni_peek(m, n, out), SBX_PEEK_ECH);
	n = hello(m, e, sni_ext(e, "evil/name"));
	assert_int_equal(sbx_sni_peek(m, n, out), SBX_PEEK_BAD);
	assert_int_equal(sbx_sni_peek((const unsigned char *)"GET / HTTP/1.1\r\n", 16, out),
			 SBX_PEEK_BAD);
}

static int host(const char *s, char *out)
{
	return sbx_host_peek((const unsigned char *)s, strlen(s), out);
}

static void http_host(void **st)
{
	char out[SBX_PEEK_NAME_MAX];

	(void)st;
	assert_int_equal(host("GET / HTTP/1.1\r\nHost: Allowed.Test:8080\r\n\r\n", out), SBX_PEEK_NAME);
	assert_string_equal(out, "allowed.test");
	assert_int_equal(host("GET / HTTP/1.1\r\nHost: a.test\r\n", out), SBX_PEEK_MORE);
	assert_int_equal(host("GET / HTTP/1.1\r\n\r\n", out), SBX_PEEK_NONAME);
	assert_int_equal(host("GET / HTTP/1.1\r\nHost: a.test\r\nhost: b.test\r\n\r\n", out),
			 SBX_PEEK_BAD);
	assert_int_equal(host("GET http://b.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n", out),
			 SBX_PEEK_BAD);
	assert_int_equal(host("GET http://a.test/x HTTP/1.1\r\nHost: a.test\r\n\r\n", out),
			 SBX_PEEK_NAME);
	assert_int_equal(host("GET http://u@b.test/ HTTP/1.1\r\n\r\n", out), SBX_PEEK_BAD);
	assert_int_equal(host("GET / HTTP/1.1\r\n Host: a.test\r\n\r\n", out), SBX_PEEK_BAD);
	assert_int_equal(host("\x16\x03\x01", out), SBX_PEEK_BAD);
}

static struct rn_policy *parse(const char *json, enum rn_network *mode, int *code)
{
	struct sbx_err err = { 0, "" };
	struct rn_policy *p = NULL;
	cJSON *v = cJSON_Parse(json);

	*code = rn_policy_parse(v, mode, &p, &err) < 0 ? err.code : 0;
	cJSON_Delete(v);
	return p;
}

static void policy_match(void **st)
{
	enum rn_network mode;
	int code;
	struct rn_policy *p = parse("{\"allow\":[\"Registry.npmjs.org\",\"*.pypi.org\"],"
				    "\"deny_cidrs\":[\"203.0.113.0/24\"]}", &mode, &code);

	(void)st;
	assert_int_equal(code, 0);
	assert_int_equal(mode, RN_NET_POLICY);
	assert_non_null(rn_policy_match(p, "registry.npmjs.org"));
	assert_null(rn_policy_match(p, "evil-registry.npmjs.org"));
	assert_non_null(rn_policy_match(p, "files.pypi.org"));
	assert_non_null(rn_policy_match(p, "a.b.pypi.org"));
	assert_null(rn_policy_match(p, "pypi.org"));
	assert_null(rn_policy_match(p, "xpypi.org"));
	assert_string_equal(rn_policy_addr_denied(p, 0xcb007105u), "deny_cidrs");
	assert_string_equal(rn_policy_addr_denied(p, 0xa9fea9feu), "always-denied");
	assert_null(rn_policy_addr_denied(p, 0xc6336401u));
	rn_policy_free(p);
}

static void policy_refusals(void **st)
{
	enum rn_network mode;
	int code;

	(void)st;
	assert_null(parse("\"allow-some\"", &mode, &code));
	assert_int_equal(code, EINVAL);
	assert_null(parse("{\"allow\":[\"1.2.3.4\"]}", &mode, &code));
	assert_int_equal(code, EINVAL);
	assert_null(parse("{\"allow\":[\"*.\"]}", &mode, &code));
	assert_int_equal(code, EINVAL);
	assert_null(parse("{\"deny_cidrs\":[\"1.2.3.4/33\"]}", &mode, &code));
	assert_int_equal(code, EINVAL);
	/* a rule that matches but does nothing */
	assert_null(parse("{\"allow\":{\"a.test\":[{\"match\":{}}]}}", &mode, &code));
	assert_int_equal(code, EINVAL);
	struct rn_policy *p = parse("{\"allow\":{\"a.test\":[]}}", &mode, &code);
	assert_int_equal(code, 0);
	assert_non_null(rn_policy_match(p, "a.test"));
	rn_policy_free(p);
}

/* Vercel's rule shape: parsed, picked in order, shown with the secret
 * redacted; the most specific pattern's rules apply. */
static void policy_rules(void **st)
{
	enum rn_network mode;
	int code;
	struct rn_policy *p = parse(
		"{\"allow\":{\"*\":[],\"api.test\":["
		"{\"match\":{\"path\":{\"startsWith\":\"/deny\"}},"
		"\"response\":{\"statusCode\":403,\"body\":\"no\",\"contentType\":\"text/plain\"}},"
		"{\"match\":{\"method\":[\"POST\"],\"headers\":[{\"key\":{\"exact\":\"X-Key\"},"
		"\"value\":{\"exact\":\"ph\"}}],\"queryString\":[{\"key\":{\"exact\":\"a\"},"
		"\"value\":{\"regex\":\"^[0-9]+$\"}}]},"
		"\"transform\":[{\"headers\":{\"authorization\":\"Bearer top-secret\"}}]},"
		"{\"forwardURL\":\"https://fwd.test:8443/base/\"}]}}", &mode, &code);
	const char *names[] = { "x-key" }, *vals[] = { "ph" };
	struct rn_req_view q = { "POST", "/v1", "a=12&b", 1, names, vals };
	const struct rn_rules *rs;
	char host[64], path[64], *txt;
	int port;
	cJSON *j;

	(void)st;
	assert_int_equal(code, 0);
	rs = rn_policy_rules(p, "api.test");
	assert_non_null(rs);
	assert_null(rn_policy_rules(p, "other.test"));      /* "*": spliced */
	assert_int_equal(rn_rules_pick(rs, &q)->kind, RN_RULE_TRANSFORM);
	q.query = "a=x";
	assert_int_equal(rn_rules_pick(rs, &q)->kind, RN_RULE_FORWARD);
	q.path = "/deny/x";
	assert_int_equal(rn_rules_pick(rs, &q)->kind, RN_RULE_RESPONSE);
	assert_int_equal(rn_forward_url_split("https://fwd.test:8443/base/", host, sizeof(host),
					      &port, path, sizeof(path)), 0);
	assert_string_equal(host, "fwd.test");
	assert_int_equal(port, 8443);
	assert_string_equal(path, "/base");
	assert_int_equal(rn_forward_url_split("https://a.test/x?y", host, sizeof(host), &port,
					      path, sizeof(path)), -1);
	j = rn_policy_json(mode, p);
	txt = cJSON_PrintUnformatted(j);
	assert_null(strstr(txt, "top-secret"));
	assert_non_null(strstr(txt, "\"authorization\":\"<redacted>\""));
	cJSON_free(txt);
	cJSON_Delete(j);
	rn_policy_free(p);
	/* what Vercel's SDK refuses is refused here too */
	assert_null(parse("{\"allow\":{\"a.test\":[{\"response\":{\"statusCode\":204,"
			  "\"body\":\"x\",\"contentType\":\"t\"}}]}}", &mode, &code));
	assert_int_equal(code, EINVAL);
	assert_null(parse("{\"allow\":{\"a.test\":[{\"transform\":[{\"headers\":"
			  "{\"x\":\"a\\r\\nb\"}}]}]}}", &mode, &code));
	assert_int_equal(code, EINVAL);
	assert_null(parse("{\"allow\":{\"a.test\":[{\"transform\":[],\"forwardURL\":"
			  "\"https://b.test\"}]}}", &mode, &code));
	assert_int_equal(code, EINVAL);
	assert_null(parse("{\"allow\":{\"a.test\":[{\"match\":{\"path\":{\"regex\":\"(\"}},"
			  "\"transform\":[]}]}}", &mode, &code));
	assert_int_equal(code, EINVAL);
	/* regexes that would cost the runner: stacked or nested counts, back-references */
	static const char *const costly[] = { "^v~++", "a{10}{10}", "((a{8}){8}){8}", "(a)\\\\1",
					      "a{65}", "x*" "y*" "z*" "a*b*c*d*e*f*g*h*i*j*k*l*m*n*" };
	for (size_t i = 0; i < sizeof(costly) / sizeof(costly[0]); i++) {
		char pol[512];
		snprintf(pol, sizeof(pol), "{\"allow\":{\"a.test\":[{\"match\":{\"path\":"
			 "{\"regex\":\"%s\"}},\"transform\":[]}]}}", costly[i]);
		assert_null(parse(pol, &mode, &code));
		assert_int_equal(code, EINVAL);
	}
	struct rn_policy *ok = parse("{\"allow\":{\"a.test\":[{\"match\":{\"path\":"
				     "{\"regex\":\"^/v[0-9]+/(a|b)*x{2,3}$\"}},\"transform\":[]}]}}",
				     &mode, &code);
	assert_int_equal(code, 0);
	rn_policy_free(ok);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sni_found_and_cut),
		cmocka_unit_test(sni_refusals),
		cmocka_unit_test(http_host),
		cmocka_unit_test(policy_match),
		cmocka_unit_test(policy_refusals),
		cmocka_unit_test(policy_rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
