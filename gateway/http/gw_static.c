/* The web demo's files (--web-dir) for GET/HEAD of paths outside /v1:
 * "/" is index.html; nothing outside the directory is reachable (no ".."
 * segment, and the resolved path must stay under the directory's). The
 * file goes out through the usual response writer (lws's own file sender
 * keeps writing while the connection is held: gw_pipeline.c), read whole:
 * the demo's files are small, and one over GW_STATIC_CAP is refused. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../http/gw_req.h"
#include "sbx_fs.h"
#include "sbx_log.h"

#define GW_STATIC_CAP (16u << 20)

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

/* The first n bytes of path into r->resp: 0, or -1. */
static int read_whole(struct gw_req *r, const char *path, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	int rc = fd < 0 ? -1 : 0;

	sbx_buf_init(&r->resp, n ? n : 1);
	while (!rc && r->resp.len < n) {
		unsigned char *p = sbx_buf_reserve(&r->resp, n - r->resp.len);
		ssize_t k = p ? read(fd, p, n - r->resp.len) : -1;
		if (k <= 0 && !(k < 0 && errno == EINTR))
			rc = -1;   /* the file shrank or failed: no half answer */
		else if (k > 0)
			sbx_buf_commit(&r->resp, (size_t)k);
	}
	if (fd >= 0)
		close(fd);
	return rc;
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
	if (st.st_size > (off_t)GW_STATIC_CAP) {
		gw_resp_error(r, 413, "too_large", "file over %u bytes", GW_STATIC_CAP);
		return 1;
	}
	if (read_whole(r, real, strcmp(r->method, "HEAD") ? (size_t)st.st_size : 0)) {
		gw_resp_error(r, 500, "internal", "cannot read the file");
		return 1;
	}
	r->xhdr.name = "cache-control:";
	snprintf(r->xhdr.val, sizeof r->xhdr.val, "no-store");
	r->status = 200;
	r->ctype = mime(real);
	r->content_len = (int64_t)st.st_size;
	r->resp_done = 1;
	r->resp_ready = 1;
	gw_req_wake(r);
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
