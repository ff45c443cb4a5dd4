/* The web demo's files (--web-dir) for GET/HEAD of paths outside /v1:
 * "/" is index.html; nothing outside the directory is reachable (no ".."
 * segment, and the resolved path must stay under the directory's). lws
 * sends the file and ends the transaction itself. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../core/gw.h"
#include "sbx_fs.h"
#include "sbx_log.h"

static const char *mime(const char *path)
{
	static const struct { const char *ext, *type; } types[] = {
		{ ".html", "text/html; charset=utf-8" }, { ".js", "text/javascript" },
		{ ".mjs", "text/javascript" }, { ".css", "text/css" },
		{ ".json", "application/json" }, { ".map", "application/json" },
		{ ".svg", "image/svg+xml" }, { ".png", "image/png" },
		{ ".ico", "image/x-icon" }, { ".woff2", "font/woff2" },
		{ ".wasm", "application/wasm" }, { ".txt", "text/plain; charset=utf-8" },
	};
	const char *dot = strrchr(path, '.');

	for (size_t i = 0; dot && i < sizeof types / sizeof types[0]; i++)
		if (!strcmp(dot, types[i].ext))
			return types[i].type;
	return "application/octet-stream";
}

/* 1 when the request was for a static file (answered one way or another). */
int gw_static_try(struct gw_req *r)
{
	char want[PATH_MAX], real[PATH_MAX];
	const char *dir = r->vh->web_dir_real;
	size_t plen = strcspn(r->uri, "?");
	struct stat st;
	int n;

	if (!dir || (strcmp(r->method, "GET") && strcmp(r->method, "HEAD")) ||
	    !strncmp(r->uri, "/v1/", 4) || !strcmp(r->uri, "/v1"))
		return 0;
	if (r->uri[0] != '/' || strstr(r->uri, "/..") || plen > 512) {
		gw_resp_error(r, 404, "not_found", "no such file");
		return 1;
	}
	n = snprintf(want, sizeof want, "%s%.*s%s", dir, (int)plen, r->uri,
		     r->uri[plen - 1] == '/' ? "index.html" : "");
	if (n < 0 || (size_t)n >= sizeof want || !realpath(want, real) ||
	    strncmp(real, dir, strlen(dir)) || real[strlen(dir)] != '/' ||
	    stat(real, &st) || !S_ISREG(st.st_mode)) {
		gw_resp_error(r, 404, "not_found", "no such file");
		return 1;
	}
	r->active = 0;   /* lws owns the rest of this transaction */
	r->vh->m.http_requests++;
	n = lws_serve_http_file(r->wsi, real, mime(real), NULL, 0);
	if (n < 0 || (n > 0 && lws_http_transaction_completed(r->wsi)))
		lws_set_timeout(r->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
	return 1;
}

/* Resolve --web-dir (default: web-demo/dist beside the checkout the binary
 * was built in, when it exists). 0, or -1 after logging. */
int gw_web_dir_init(struct gw_vh *vh, const char *dir)
{
	char self[PATH_MAX], guess[PATH_MAX + 32];

	if (!dir) {
		if (sbx_self_dir(self, sizeof self) < 0)
			return 0;
		snprintf(guess, sizeof guess, "%s/../web-demo/dist", self);
		if (access(guess, R_OK))
			snprintf(guess, sizeof guess, "%s/../../../web-demo/dist", self);
		if (access(guess, R_OK))
			return 0;   /* no demo built: the API alone */
		dir = guess;
	}
	vh->web_dir_real = realpath(dir, NULL);
	if (!vh->web_dir_real) {
		sbx_err_log("--web-dir %s: %s", dir, strerror(errno));
		return -1;
	}
	sbx_info("serving the web demo from %s", vh->web_dir_real);
	return 0;
}
