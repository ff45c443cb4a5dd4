/* sbx: error reporting, the JSON request helper and small parsers. */
#include "cli.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define JSON_MAX (8u << 20)   /* a list of 4096 sandboxes fits */

void cli_errf(const char *fmt, ...)
{
	va_list ap;

	fputs("sbx: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_fail_request(const struct cli_cfg *c, const struct sbx_err *err)
{
	if (cli_http_unreachable(err)) {
		cli_errf("cannot reach the gateway at %s (%s); is it running? (SBX_URL or --url)",
			 c->url_text, err->msg);
		return CLI_EXIT_UNREACHABLE;
	}
	cli_errf("%s", err->msg);
	return CLI_EXIT_CONN;
}

int cli_fail_status(struct cli_http *h, int status)
{
	struct sbx_err err = { 0 };
	char *body = cli_http_read_all(h, 65536, NULL, &err);
	cJSON *j = body ? cJSON_Parse(body) : NULL;
	cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
	cJSON *msg = cJSON_GetObjectItemCaseSensitive(e, "message");
	cJSON *code = cJSON_GetObjectItemCaseSensitive(e, "code");
	int rc = cli_exit_for_error(status, cJSON_IsString(code) ? code->valuestring : NULL);

	if (cJSON_IsString(msg))
		cli_errf("%s (%s, HTTP %d)", msg->valuestring,
			 cJSON_IsString(code) ? code->valuestring : "error", status);
	else
		cli_errf("the gateway answered HTTP %d", status);
	cJSON_Delete(j);
	free(body);
	cli_http_close(h);
	return rc;
}

int cli_api_json(const struct cli_cfg *c, const char *method, const char *path,
		 const char *body, cJSON **out)
{
	struct sbx_err err = { 0 };
	struct cli_body b = { .data = body, .len = body ? strlen(body) : 0, .fd = -1,
			      .type = "application/json" };
	struct cli_http *h;
	int status;
	char *text;
	cJSON *j;

	h = cli_http_request(&c->url, c->key, method, path, body ? &b : NULL, &status, &err);
	if (!h)
		return cli_fail_request(c, &err);
	if (status < 200 || status > 299)
		return cli_fail_status(h, status);
	if (status == 204) {   /* done, and nothing to say (DELETE /v1/images/NAME) */
		cli_http_close(h);
		if (out)
			*out = NULL;
		return 0;
	}
	text = cli_http_read_all(h, JSON_MAX, NULL, &err);
	cli_http_close(h);
	if (!text) {
		cli_errf("%s", err.msg);
		return CLI_EXIT_CONN;
	}
	j = cJSON_Parse(text);
	free(text);
	if (!j) {
		cli_errf("the gateway's answer to %s %s is not JSON", method, path);
		return CLI_EXIT_CONN;
	}
	if (out)
		*out = j;
	else
		cJSON_Delete(j);
	return 0;
}

long long cli_parse_duration(const char *s)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || v < 0 || v > 1000LL * 86400 * 365)
		return -1;
	if (!strcmp(end, "ms"))
		return v;
	if (!*end || !strcmp(end, "s"))
		return v * 1000;
	if (!strcmp(end, "m"))
		return v * 60000;
	if (!strcmp(end, "h"))
		return v * 3600000;
	return -1;
}

int cli_urlencode(const char *s, char *out, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (o + 4 > n)
			return -1;
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || strchr("-._~/", ch)) {
			out[o++] = (char)ch;
		} else {
			out[o++] = '%';
			out[o++] = hex[ch >> 4];
			out[o++] = hex[ch & 15];
		}
	}
	out[o] = '\0';
	return 0;
}

int cli_signal_status(const char *name)
{
	int s;

	if (!name)
		return 128;
	if (!strncmp(name, "SIG", 3))
		name += 3;
	for (s = 1; s < NSIG; s++) {
		const char *a = sigabbrev_np(s);

		if (a && !strcmp(a, name))
			return 128 + s;
	}
	return 128;
}

int cli_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };

			poll(&pfd, 1, -1);
			continue;
		}
		if (w < 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}
