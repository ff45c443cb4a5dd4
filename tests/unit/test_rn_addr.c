/* Unit tests of the --listen-tls address parser (runner/rn_addr.c): the
 * forms it takes, and a clear refusal of everything else. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../runner/rn_addr.h"

static void ok4(const char *s, const char *addr, unsigned port)
{
	struct sockaddr_storage ss;
	socklen_t len = 0;
	struct sbx_err err = { 0, "" };
	char txt[INET_ADDRSTRLEN];
	const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;

	assert_int_equal(rn_addr_parse(s, &ss, &len, &err), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(len, sizeof(struct sockaddr_in));
	assert_int_equal(ntohs(a->sin_port), port);
	inet_ntop(AF_INET, &a->sin_addr, txt, sizeof(txt));
	assert_string_equal(txt, addr);
}

static void ok6(const char *s, const char *addr, unsigned port)
{
	struct sockaddr_storage ss;
	socklen_t len = 0;
	struct sbx_err err = { 0, "" };
	char txt[INET6_ADDRSTRLEN];
	const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;

	assert_int_equal(rn_addr_parse(s, &ss, &len, &err), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(len, sizeof(struct sockaddr_in6));
	assert_int_equal(ntohs(a->sin6_port), port);
	inet_ntop(AF_INET6, &a->sin6_addr, txt, sizeof(txt));
	assert_string_equal(txt, addr);
}

static void bad(const char *s, const char *why)
{
	struct sockaddr_storage ss;
	socklen_t len = 0;
	struct sbx_err err = { 0, "" };

	assert_int_equal(rn_addr_parse(s, &ss, &len, &err), -1);
	if (!strstr(err.msg, why))
		fail_msg("\"%s\": message \"%s\" lacks \"%s\"", s, err.msg, why);
}

static void test_ipv4(void **state)
{
	(void)state;
	ok4("0.0.0.0:7443", "0.0.0.0", 7443);
	ok4("10.1.2.3:1", "10.1.2.3", 1);
	ok4("127.0.0.1:65535", "127.0.0.1", 65535);
}

static void test_ipv6(void **state)
{
	(void)state;
	ok6("[::]:7443", "::", 7443);
	ok6("[fd00::1]:7443", "fd00::1", 7443);
	ok6("[::ffff:10.0.0.1]:80", "::ffff:10.0.0.1", 80);
}

static void test_port(void **state)
{
	(void)state;
	bad("0.0.0.0:0", "the port must be 1..65535");
	bad("0.0.0.0:65536", "the port must be 1..65535");
	bad("0.0.0.0:", "the port must be 1..65535");
	bad("0.0.0.0:+80", "the port must be 1..65535");
	bad("0.0.0.0:80 ", "the port must be 1..65535");
	bad("0.0.0.0:123456", "the port must be 1..65535");
	bad("[::]:-1", "the port must be 1..65535");
}

static void test_address(void **state)
{
	(void)state;
	bad("7443", "expected ADDR:PORT");
	bad(":7443", "missing or overlong address");
	bad("localhost:7443", "not a numeric IPv4 address");
	bad("10.1.2:7443", "not a numeric IPv4 address");
	bad("::1:7443", "an IPv6 address goes in brackets");
	bad("[::1]7443", "an IPv6 address goes in brackets");
	bad("[::1:7443", "an IPv6 address goes in brackets");
	bad("[]:7443", "missing or overlong address");
	bad("[10.0.0.1]:7443", "not a numeric IPv6 address");
	bad("[fd00::1%eth0]:7443", "not a numeric IPv6 address");
	bad("[0000:0000:0000:0000:0000:0000:0000:0000:0000:0000]:1",
	    "missing or overlong address");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4),
		cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_port),
		cmocka_unit_test(test_address),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
