/* A pure, bounded HTTP/1.1 request-head parser and a chunked-body framer,
 * for the preview proxy (gw_proxy.c), which forwards requests as bytes and
 * must know exactly where each one ends. Strict on purpose: anything two
 * parsers could read differently (the ingredients of request smuggling) is
 * refused rather than guessed at. No allocation, no I/O. */
#ifndef GW_HTTP1_H
#define GW_HTTP1_H
#include <stddef.h>
#include <stdint.h>

#define GW_H1_HEAD_MAX  (16 * 1024)   /* request line + headers + CRLF CRLF */
#define GW_H1_HDR_MAX   100           /* header lines */
#define GW_H1_TRAILER_MAX (16 * 1024) /* chunked trailer section */
#define GW_H1_LEAD_MAX  8             /* empty lines ignored before a request line */

struct gw_h1_span {
	uint32_t off, len;               /* into the parsed buffer */
};

struct gw_h1_hdr {
	struct gw_h1_span name, value;   /* value without surrounding OWS */
	struct gw_h1_span line;          /* the whole line including CRLF */
};

struct gw_h1_head {
	size_t head_len;                 /* bytes up to and including CRLF CRLF */
	struct gw_h1_span method, target;
	int minor;                       /* HTTP/1.<minor>: 0 or 1 */
	int nhdr;
	int host;                        /* index into hdr, -1 when absent */
	int64_t content_length;          /* -1 when absent */
	int chunked;                     /* Transfer-Encoding: chunked */
	int conn_close, conn_upgrade, upgrade_websocket;
	struct gw_h1_hdr hdr[GW_H1_HDR_MAX];   /* last: the parser clears what is before it */
};

/* RFC 9112 2.2: a server should ignore empty lines received before a
 * request line (clients have sent one after a POST body, or before the
 * next request of a keep-alive connection). The bytes of the empty lines
 * (CRLF, or a bare LF) at the start of [p, p+n): 0 when there are none,
 * -1 when there are more than GW_H1_LEAD_MAX (a request that is not
 * coming: 400). A CR as the very last byte is not counted (its LF may
 * follow); a CR followed by anything else ends the empty lines (the
 * request line then has a bare CR: 400). */
long gw_h1_lead(const char *p, size_t n);

/* Parse the head at the start of [p, p+n), after its empty lines
 * (gw_h1_lead; head_len and every offset count them).
 * Returns the head length (> 0) when complete, 0 when more bytes are
 * needed (only while n < GW_H1_HEAD_MAX), or a negative HTTP status:
 * -400 malformed or ambiguous (both Content-Length and Transfer-Encoding,
 * conflicting Content-Length, a transfer coding other than exactly
 * "chunked", obs-fold, control characters, bare LF, missing or repeated
 * Host on HTTP/1.1), -431 head or header count over the limits,
 * -505 a version other than HTTP/1.0 or 1.1. h holds offsets into p. */
int gw_h1_parse(const char *p, size_t n, struct gw_h1_head *h);

/* The Host of a plain request from its first bytes, for the front door's
 * routing only (the proxy parses the head strictly again): the value of
 * the first Host line, OWS trimmed, into out. Returns 1 found, 0 not yet
 * (the head is incomplete), -1 when the head ended without one, the value
 * does not fit out, or there are too many empty lines before the request
 * line (gw_h1_lead, which it skips first). */
int gw_h1_sniff_host(const char *p, size_t n, char *out, size_t outsz);

/* Case-insensitive compare of a header's name with name. */
int gw_h1_name_is(const char *p, const struct gw_h1_hdr *hd, const char *name);

/* Chunked body framer: feed it the body bytes as they arrive; it says how
 * many of them belong to the body (the rest is the next request). */
struct gw_h1_chunk {
	int state;
	uint64_t left;      /* data bytes left in the current chunk */
	unsigned digits;    /* hex digits of the size seen */
	unsigned extlen;    /* bytes of chunk extension seen */
	unsigned trailer;   /* bytes of trailer section seen */
	unsigned sizes;     /* chunk-size lines completed */
	int done;           /* the whole body has been seen */
};

void gw_h1_chunk_init(struct gw_h1_chunk *c);

/* Consume from [p, p+n). Returns how many bytes belong to the body (<= n;
 * less than n only when the body ended, then c->done is set), or -1 for
 * bad framing (a size that is not hex, over 2^60, extensions or trailers
 * over their limits, a missing CRLF). */
long gw_h1_chunk_feed(struct gw_h1_chunk *c, const char *p, size_t n);

#endif
