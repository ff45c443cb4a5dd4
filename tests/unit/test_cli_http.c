/* Unit tests for sbx's HTTP client (cli/cli_http.c) and helpers
 * (cli/cli_util.c): URL parsing, durations, signal statuses, and response
 * bodies framed by Content-Length, chunked encoding and the close, served
 * by a forked child on a loopback socket and read in small pieces. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../cli/cli.h"

static void test_url(void **state)
{
	struct cli_url u;
	struct sbx_err e = { 0 };

	(void)state;
	assert_int_equal(cli_url_parse("http://127.0.0.1:8080", &u, &e), 0);
	assert_string_equal(u.host, "127.0.0.1");
	assert_string_equal(u.port, "8080");
	assert_string_equal(u.prefix, "");
	assert_int_equal(u.tls, 0);
	assert_int_equal(cli_url_parse("https://sb.example.com/api/", &u, &e), 0);
	assert_string_equal(u.port, "443");
	assert_string_equal(u.prefix, "/api");
	assert_int_equal(u.tls, 1);
	assert_int_equal(cli_url_parse("http://[::1]:99/", &u, &e), 0);
	assert_string_equal(u.host, "::1");
	assert_string_equal(u.port, "99");
	assert_int_equal(cli_url_parse("ftp://x", &u, &e), -1);
	assert_int_equal(cli_url_parse("http://x:80a", &u, &e), -1);
	assert_int_equal(cli_url_parse("http://:80", &u, &e), -1);
	assert_int_equal(cli_url_parse("http://x:1234567", &u, &e), -1);
}

static void test_duration_signal(void **state)
{
	(void)state;
	assert_int_equal(cli_parse_duration("10m"), 600000);
	assert_int_equal(cli_parse_duration("90"), 90000);
	assert_int_equal(cli_parse_duration("90s"), 90000);
	assert_int_equal(cli_parse_duration("250ms"), 250);
	assert_int_equal(cli_parse_duration("2h"), 7200000);
	assert_int_equal(cli_parse_duration("5x"), -1);
	assert_int_equal(cli_parse_duration("-1"), -1);
	assert_int_equal(cli_parse_duration(""), -1);
	assert_int_equal(cli_signal_status("SIGKILL"), 137);
	assert_int_equal(cli_signal_status("SIGINT"), 130);
	assert_int_equal(cli_signal_status("TERM"), 143);
	assert_int_equal(cli_signal_status("SIGNOPE"), 128);
}

/* Serve one connection with the canned response, then exit. */
static pid_t serve(const char *resp, struct cli_url *u)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0);
	pid_t pid;

	assert_true(l >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(l, 1), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&a, &al), 0);
	memset(u, 0, sizeof(*u));
	strcpy(u->host, "127.0.0.1");
	snprintf(u->port, sizeof(u->port), "%u", ntohs(a.sin_port));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char req[4096];
		int c = accept(l, NULL, NULL);
		size_t i, n = strlen(resp);

		if (read(c, req, sizeof(req)) <= 0) /* the request head */
			_exit(1);
		for (i = 0; i < n; i += 3) /* in tiny pieces: every boundary is crossed */
			if (write(c, resp + i, n - i < 3 ? n - i : 3) < 0)
				_exit(1);
		close(c);
		_exit(0);
	}
	close(l);
	return pid;
}

static char *fetch(const char *resp, int *status, int *failed)
{
	struct cli_url u;
	struct sbx_err e = { 0 };
	pid_t pid = serve(resp, &u);
	struct cli_http *h = cli_http_request(&u, "k", "GET", "/x", NULL, status, &e);
	char *body = NULL, buf[5];
	size_t n = 0;
	ssize_t r;

	*failed = 0;
	assert_non_null(h);
	body = calloc(1, 65536);
	while ((r = cli_http_read(h, buf, sizeof(buf), &e)) > 0) { /* small reads */
		memcpy(body + n, buf, (size_t)r);
		n += (size_t)r;
	}
	if (r < 0)
		*failed = 1;
	cli_http_close(h);
	waitpid(pid, NULL, 0);
	return body;
}

static void test_bodies(void **state)
{
	int status, failed;
	char *b;

	(void)state;
	b = fetch("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello worldEXTRA", &status, &failed);
	assert_int_equal(status, 200);
	assert_string_equal(b, "hello world");
	assert_int_equal(failed, 0);
	free(b);
	b = fetch("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		  "5\r\nhello\r\n1a;ext=1\r\n abcdefghijklmnopqrstuvwxy\r\n0\r\n\r\n", &status, &failed);
	assert_string_equal(b, "hello abcdefghijklmnopqrstuvwxy");
	assert_int_equal(failed, 0);
	free(b);
	b = fetch("HTTP/1.0 404 Not Found\r\nX: y\r\n\r\n{\"error\":{}}", &status, &failed);
	assert_int_equal(status, 404);
	assert_string_equal(b, "{\"error\":{}}");
	free(b);
	/* a body cut short is an error, not a short file */
	b = fetch("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this", &status, &failed);
	assert_int_equal(failed, 1);
	free(b);
	b = fetch("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", &status, &failed);
	assert_int_equal(failed, 1);
	free(b);
}

static void test_unreachable(void **state)
{
	struct cli_url u;
	struct sbx_err e = { 0 };
	int status;
	pid_t pid = serve("", &u); /* a port that was listening ... */

	(void)state;
	kill(pid, SIGKILL); /* ... and no longer is */
	waitpid(pid, NULL, 0);
	assert_null(cli_http_request(&u, "k", "GET", "/", NULL, &status, &e));
	assert_int_equal(cli_http_unreachable(&e), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_url),
		cmocka_unit_test(test_duration_signal),
		cmocka_unit_test(test_bodies),
		cmocka_unit_test(test_unreachable),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
