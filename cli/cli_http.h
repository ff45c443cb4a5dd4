/* A blocking HTTP/1.1 client for the gateway's REST calls: one request per
 * connection (Connection: close), TLS through OpenSSL for https URLs, the
 * request body from memory or streamed from a file descriptor, the response
 * body read incrementally (Content-Length, chunked, or up to the close), so
 * neither direction holds a whole file in memory. */
#ifndef CLI_HTTP_H
#define CLI_HTTP_H

#include <stddef.h>
#include <sys/types.h>

#include "sbx_err.h"

struct cli_url {
	int tls;
	char host[256];
	char port[8];
	char prefix[512];   /* path before /v1, without a trailing slash */
};

/* Parse http[s]://host[:port][/prefix]. 0, or -1 with err. */
int cli_url_parse(const char *s, struct cli_url *u, struct sbx_err *err);

struct cli_body {
	const void *data;   /* body from memory (len bytes) ... */
	size_t len;
	int fd;             /* ... or, when fd >= 0, len bytes read from fd */
	const char *type;   /* Content-Type, or NULL */
};

struct cli_http;        /* one request's connection */

/* Send the request and read the response head. Returns the connection with
 * *status set, or NULL with err (err->code ECONNREFUSED and the like when
 * the gateway cannot be reached: cli_http_unreachable says so). */
struct cli_http *cli_http_request(const struct cli_url *u, const char *key,
				  const char *method, const char *path,
				  const struct cli_body *body, int *status,
				  struct sbx_err *err);

/* Read up to n body bytes. Returns the count, 0 at the end, -1 with err. */
ssize_t cli_http_read(struct cli_http *h, void *buf, size_t n,
		      struct sbx_err *err);

/* Read the whole body, at most cap bytes, NUL-terminated (free()).
 * NULL with err when larger or on error. */
char *cli_http_read_all(struct cli_http *h, size_t cap, size_t *len,
			struct sbx_err *err);

void cli_http_close(struct cli_http *h);

/* 1 when err came from not reaching the gateway at all. */
int cli_http_unreachable(const struct sbx_err *err);

#endif
