/* Unit tests of the Origins /mcp accepts (gateway/mcp/gw_mcp_origin.c):
 * the gateway's own URL from its listen address, port and scheme,
 * --public-url and --mcp-allowed-origins, and what is never accepted
 * (a DNS-rebinding name, the wrong scheme or port, anything that is not
 * a bare origin). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../../gateway/mcp/gw_mcp_origin.h"

static int ok(const char *origin, int tls, int port)
{
	return gw_mcp_origin_ok(origin, strlen(origin), tls, port);
}

static void configure(const char *listen, const char *public_url, const char *allowed)
{
	struct sbx_err err = { 0 };
	assert_int_equal(gw_mcp_origins_configure(listen, public_url, allowed, &err), 0);
}

static void test_own_url_loopback(void **state)
{
	(void)state;
	configure("127.0.0.1", NULL, NULL);
	assert_true(ok("http://127.0.0.1:8080", 0, 8080));
	assert_true(ok("http://localhost:8080", 0, 8080));   /* what `make run` prints */
	assert_true(ok("HTTP://LocalHost:8080", 0, 8080));
	/* the DNS-rebinding pair: a name of the attacker's, whatever Host says */
	assert_false(ok("http://evil.example:8080", 0, 8080));
	/* a plain listener is not https, nor another port */
	assert_false(ok("https://127.0.0.1:8080", 0, 8080));
	assert_false(ok("https://localhost:8080", 0, 8080));
	assert_false(ok("http://127.0.0.1:8081", 0, 8080));
	assert_false(ok("http://127.0.0.1", 0, 8080));
	/* not served on this listener */
	assert_false(ok("http://[::1]:8080", 0, 8080));
	assert_false(ok("http://127.0.0.2:8080", 0, 8080));
	/* with TLS, https only */
	assert_true(ok("https://localhost:8443", 1, 8443));
	assert_false(ok("http://localhost:8443", 1, 8443));
	/* default ports, written or not */
	assert_true(ok("http://localhost", 0, 80));
	assert_true(ok("http://localhost:80", 0, 80));
	assert_true(ok("https://localhost", 1, 443));
	assert_false(ok("http://localhost", 0, 443));

	configure("localhost", NULL, NULL);
	assert_true(ok("http://localhost:9000", 0, 9000));
	assert_true(ok("http://127.0.0.1:9000", 0, 9000));
}

static void test_own_url_other_addresses(void **state)
{
	(void)state;
	configure("10.1.2.3", NULL, NULL);
	assert_true(ok("https://10.1.2.3:443", 1, 443));
	assert_true(ok("https://10.1.2.3", 1, 443));
	assert_false(ok("https://localhost", 1, 443));   /* not listened on */
	assert_false(ok("https://127.0.0.1", 1, 443));

	configure("::1", NULL, NULL);
	assert_true(ok("http://[::1]:8080", 0, 8080));
	assert_true(ok("http://[0:0::1]:8080", 0, 8080));   /* the same address */
	assert_true(ok("http://localhost:8080", 0, 8080));
	assert_false(ok("http://127.0.0.1:8080", 0, 8080));

	configure("fd00::0:5", NULL, NULL);
	assert_true(ok("https://[fd00::5]", 1, 443));
	assert_true(ok("https://[FD00::5]", 1, 443));
	assert_false(ok("https://[fd00::6]", 1, 443));
	assert_false(ok("https://[fd00::5%25eth0]", 1, 443));

	/* a wildcard serves loopback; its names come from --public-url */
	configure("0.0.0.0", NULL, NULL);
	assert_true(ok("https://localhost:8443", 1, 8443));
	assert_true(ok("https://127.0.0.1:8443", 1, 8443));
	assert_false(ok("https://0.0.0.0:8443", 1, 8443));
	assert_false(ok("https://sandbox.example.com:8443", 1, 8443));
	configure("::", NULL, NULL);
	assert_true(ok("http://[::1]:8080", 0, 8080));
	assert_false(ok("http://[::]:8080", 0, 8080));
}

static void test_public_url_and_list(void **state)
{
	(void)state;
	configure("127.0.0.1", "https://Sandbox.Example.com/",
		  "http://app.example:3000,https://ide.example,http://[fd00::1]:5173");
	/* behind a TLS proxy the public URL is https while the listener is not */
	assert_true(ok("https://sandbox.example.com", 0, 8080));
	assert_true(ok("https://sandbox.example.com:443", 0, 8080));
	assert_false(ok("http://sandbox.example.com", 0, 8080));
	assert_false(ok("https://sandbox.example.com:8080", 0, 8080));
	assert_false(ok("https://evil.sandbox.example.com", 0, 8080));
	assert_true(ok("http://app.example:3000", 0, 8080));
	assert_false(ok("http://app.example:3001", 0, 8080));
	assert_false(ok("https://app.example:3000", 0, 8080));
	assert_false(ok("http://app.example", 0, 8080));
	assert_true(ok("https://ide.example", 0, 8080));
	assert_true(ok("http://[fd00::1]:5173", 0, 8080));
	/* the own URL still is */
	assert_true(ok("http://localhost:8080", 0, 8080));
}

static void test_not_origins(void **state)
{
	(void)state;
	configure("127.0.0.1", NULL, "http://app.example:3000");
	const char *bad[] = {
		"null", "", "app.example:3000", "ws://app.example:3000", "file://app.example:3000",
		"http://app.example:3000/", "http://app.example:3000/x", "http://user@app.example:3000",
		"http://app.example:3000?x", "http://app.example:3000#x", "http://app.example:03000x",
		"http://app.example:", "http://app.example:0", "http://app.example:65536",
		"http://app.example:3000 ", " http://app.example:3000", "http://app.example:3000,http://x",
		"http://app_example:3000", "http://", "http://[]:3000", "http://[::1:3000",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (ok(bad[i], 0, 3000))
			fail_msg("accepted '%s'", bad[i]);
	}
	/* a NUL inside the header's bytes cuts nothing */
	assert_false(gw_mcp_origin_ok("http://app.example:3000\0x", 25, 0, 3000));
	assert_false(gw_mcp_origin_ok("http://app.example\0:3000", 24, 0, 3000));
	assert_true(gw_mcp_origin_ok("http://app.example:3000", 23, 0, 3000));
}

static void test_bad_configuration(void **state)
{
	struct sbx_err err = { 0 };
	char many[40 * 24] = "";
	(void)state;

	assert_int_equal(gw_mcp_origins_configure("127.0.0.1", NULL, "http://a.example,http://b.example/", &err), -1);
	assert_non_null(strstr(err.msg, "--mcp-allowed-origins"));
	assert_non_null(strstr(err.msg, "'http://b.example/'"));
	/* refused entirely: the good entry before it is not kept */
	assert_false(ok("http://a.example", 0, 8080));
	assert_int_equal(gw_mcp_origins_configure("127.0.0.1", NULL, "http://a.example,", &err), -1);
	assert_int_equal(gw_mcp_origins_configure("127.0.0.1", NULL, "http://a.example, http://b.example", &err), -1);
	assert_int_equal(gw_mcp_origins_configure("127.0.0.1", "sandbox.example.com", NULL, &err), -1);
	assert_non_null(strstr(err.msg, "--public-url"));
	assert_int_equal(gw_mcp_origins_configure("127.0.0.1", "https://sandbox.example.com/mcp", NULL, &err), -1);
	assert_int_equal(gw_mcp_origins_configure("127.0.0.1", "https://sandbox.example.com//", NULL, &err), -1);
	assert_int_equal(gw_mcp_origins_configure("not-an-address", NULL, NULL, &err), -1);
	for (int i = 0; i < 33; i++)
		snprintf(many + strlen(many), sizeof many - strlen(many), "%shttp://h%d.example", i ? "," : "", i);
	assert_int_equal(gw_mcp_origins_configure("127.0.0.1", NULL, many, &err), -1);
	assert_non_null(strstr(err.msg, "32"));
	*strrchr(many, ',') = '\0';   /* 32: room for them all */
	configure("127.0.0.1", NULL, many);
	assert_true(ok("http://h31.example", 0, 8080));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_url_loopback),
		cmocka_unit_test(test_own_url_other_addresses),
		cmocka_unit_test(test_public_url_and_list),
		cmocka_unit_test(test_not_origins),
		cmocka_unit_test(test_bad_configuration),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
