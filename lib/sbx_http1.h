/* HTTP/1.x message heads, for the runner's egress proxy where it reads
 * a sandbox's requests (and the servers' answers) itself: a request or
 * status line and its header fields, split in place, with the body's
 * framing. The bytes are a sandbox's or a server's choice, so one clear
 * reading or none: obsolete line folding, a header name with spaces, a
 * Content-Length with a Transfer-Encoding, two different Content-Lengths
 * or a transfer coding other than chunked are SBX_H1_BAD. */
#ifndef SBX_HTTP1_H
#define SBX_HTTP1_H
#include <stddef.h>

#define SBX_H1_HEAD_MAX 32768   /* a head longer than this is refused */
#define SBX_H1_FIELDS_MAX 100

enum { SBX_H1_BAD = -1, SBX_H1_MORE = 0 };

enum sbx_h1_body { SBX_H1_NONE, SBX_H1_LENGTH, SBX_H1_CHUNKED, SBX_H1_UNTIL_CLOSE };

struct sbx_h1_span {
	unsigned off, len;
};

struct sbx_h1_head {
	struct sbx_h1_span method, target;      /* a request's */
	int status;                             /* a response's */
	int minor;                              /* HTTP/1.minor */
	int n_fields;
	struct sbx_h1_span name[SBX_H1_FIELDS_MAX], value[SBX_H1_FIELDS_MAX];
	enum sbx_h1_body body;
	unsigned long long length;              /* SBX_H1_LENGTH's */
	int close;                              /* Connection: close, or 1.0 without keep-alive */
};

/* The head at [p, p+n): its length (through the empty line) with h
 * filled, SBX_H1_MORE while incomplete (and shorter than
 * SBX_H1_HEAD_MAX), or SBX_H1_BAD. A request's body is NONE unless
 * framed; a response's body is UNTIL_CLOSE unless framed (the caller
 * knows HEAD, 1xx, 204 and 304 have none). */
long sbx_h1_request(const char *p, size_t n, struct sbx_h1_head *h);
long sbx_h1_response(const char *p, size_t n, struct sbx_h1_head *h);

/* A chunk-size line at [p, p+n) ("hex[;ext]\r\n"): its length with *size
 * set, SBX_H1_MORE, or SBX_H1_BAD (no hex digit, more than 15 of them,
 * control characters, a line over 1024 bytes). */
long sbx_h1_chunk_line(const char *p, size_t n, unsigned long long *size);

/* 1 when the span of p equals s without regard to case. */
int sbx_h1_is(const char *p, struct sbx_h1_span sp, const char *s);

#endif
