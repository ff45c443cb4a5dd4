/* sbx logs: a command's output from its ndjson log, base64-encoded so the
 * bytes come out exactly as the command wrote them. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#define LINE_MAX_BYTES (4u << 20)   /* a 1 MiB chunk in base64 and JSON, with room */

/* Handle one ndjson line; 1 when the command's end was seen. */
static int one_line(char *line, size_t n)
{
	cJSON *j = cJSON_ParseWithLength(line, n);
	cJSON *stream = cJSON_GetObjectItemCaseSensitive(j, "stream");
	cJSON *data = cJSON_GetObjectItemCaseSensitive(j, "data");
	int end = 0;

	if (cJSON_IsString(stream) && cJSON_IsString(data)) {
		size_t len = strlen(data->valuestring);
		unsigned char *out = malloc(len / 4 * 3 + 3);
		int k = out ? EVP_DecodeBlock(out, (unsigned char *)data->valuestring, (int)len) : -1;

		if (k >= 0) {
			while (len && data->valuestring[len - 1] == '=') {
				len--;
				k--;
			}
			cli_write_all(strcmp(stream->valuestring, "stderr") ? 1 : 2, out, (size_t)k);
		}
		free(out);
	} else if (cJSON_GetObjectItemCaseSensitive(j, "truncated")) {
		cli_errf("warning: %.0f bytes of output were lost to the sandbox's retention bound",
			 cJSON_GetObjectItemCaseSensitive(j, "truncated")->valuedouble);
	} else if (cJSON_GetObjectItemCaseSensitive(j, "exit_code")) {
		end = 1;
	}
	cJSON_Delete(j);
	return end;
}

int cli_cmd_logs(const struct cli_cfg *c, int argc, char **argv)
{
	static char path[1024];
	struct sbx_err err = { 0 };
	struct cli_http *h;
	unsigned long long since = 0;
	int follow = 0, status, i, rc = 0;
	char *buf, *end;
	size_t len = 0, alloc = 65536;

	if (argc < 3 || argv[1][0] == '-' || argv[2][0] == '-') {
		cli_errf("usage: sbx logs ID CMD_ID [-f] [--since N]");
		return CLI_EXIT_USAGE;
	}
	for (i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "-f") || !strcmp(argv[i], "--follow")) {
			follow = 1;
		} else if (!strcmp(argv[i], "--since") && i + 1 < argc) {
			errno = 0;
			since = strtoull(argv[++i], &end, 10);
			if (errno || *end || argv[i][0] == '-' || !argv[i][0]) {
				cli_errf("--since %s: a byte count", argv[i]);
				return CLI_EXIT_USAGE;
			}
		} else {
			cli_errf("logs: unexpected argument '%s'", argv[i]);
			return CLI_EXIT_USAGE;
		}
	}
	if (strlen(argv[1]) > 100 || strlen(argv[2]) > 100 ||
	    strpbrk(argv[1], "/?#%&") || strpbrk(argv[2], "/?#%&")) {
		cli_errf("bad sandbox or command id");
		return CLI_EXIT_USAGE;
	}
	snprintf(path, sizeof(path), "/v1/sandboxes/%s/commands/%s/logs?since=%llu&encoding=base64%s",
		 argv[1], argv[2], since, follow ? "&follow=1" : "");
	h = cli_http_request(&c->url, c->key, "GET", path, NULL, &status, &err);
	if (!h)
		return cli_fail_request(c, &err);
	if (status != 200)
		return cli_fail_status(h, status);
	buf = malloc(alloc);
	if (!buf) {
		cli_http_close(h);
		return CLI_EXIT_LOCAL;
	}
	for (;;) {
		char *nl;
		ssize_t r;

		while ((nl = memchr(buf, '\n', len))) {
			size_t n = (size_t)(nl - buf) + 1;

			one_line(buf, n - 1);
			memmove(buf, buf + n, len - n);
			len -= n;
		}
		if (len == alloc) {
			char *t = alloc < LINE_MAX_BYTES ? realloc(buf, alloc * 2) : NULL;

			if (!t) {
				cli_errf("a log line over %u bytes", LINE_MAX_BYTES);
				rc = CLI_EXIT_CONN;
				break;
			}
			buf = t;
			alloc *= 2;
		}
		r = cli_http_read(h, buf + len, alloc - len, &err);
		if (r < 0) {
			cli_errf("%s", err.msg);
			rc = CLI_EXIT_CONN;
			break;
		}
		if (!r)
			break;
		len += (size_t)r;
	}
	if (!rc && len)
		one_line(buf, len);
	free(buf);
	cli_http_close(h);
	return rc;
}
