/* The guest's responses on a preview connection (gw_presp.h). */
#include <string.h>
#include <strings.h>
#include "gw_presp.h"

void gw_presp_init(struct gw_presp *rp)
{
	memset(rp, 0, sizeof *rp);
	sbx_buf_init(&rp->part, GW_H1_HEAD_MAX);
}

void gw_presp_free(struct gw_presp *rp)
{
	sbx_buf_free(&rp->part);
}

int gw_presp_expect(struct gw_presp *rp, int head_method)
{
	if (rp->count == GW_PRESP_PENDING_MAX)
		return -1;
	rp->pending[(rp->first + rp->count++) % GW_PRESP_PENDING_MAX] = head_method != 0;
	return 0;
}

int gw_presp_full(const struct gw_presp *rp)
{
	return rp->count == GW_PRESP_PENDING_MAX;
}

/* The response that begins answers the oldest pending request: 1 when
 * that was a HEAD. A response nobody asked for (a 408 before any request)
 * answers none. */
static int take_pending(struct gw_presp *rp)
{
	int head;
	if (!rp->count)
		return 0;
	head = rp->pending[rp->first];
	rp->first = (rp->first + 1) % GW_PRESP_PENDING_MAX;
	rp->count--;
	return head;
}

static int bad(struct gw_presp *rp, const char *why)
{
	rp->state = GW_PR_BAD;
	rp->why = why;
	return -1;
}

/* The end of a head in [p, p+n): its length with CRLF CRLF, 0 when it has
 * not ended yet. */
static size_t head_end(const char *p, size_t n)
{
	for (size_t i = 3; i < n; i++)
		if (p[i] == '\n' && p[i - 1] == '\r' && p[i - 2] == '\n' && p[i - 3] == '\r')
			return i + 1;
	return 0;
}

static int name_is(const char *p, size_t n, const char *name)
{
	return strlen(name) == n && !strncasecmp(p, name, n);
}

static int is_tchar(unsigned char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

static void trim(const char **p, size_t *n)
{
	while (*n && (**p == ' ' || **p == '\t'))
		(*p)++, (*n)--;
	while (*n && ((*p)[*n - 1] == ' ' || (*p)[*n - 1] == '\t'))
		(*n)--;
}

/* A Set-Cookie value made safe into out ("Set-Cookie: ...\r\n"), or
 * nothing when it is the gateway's own cookie. Attributes are split at
 * ';' as browsers split them (RFC 6265 5.2); every Domain goes. */
static int set_cookie(const char *v, size_t n, struct sbx_buf *out, const char *token_cookie)
{
	const char *semi = memchr(v, ';', n), *eq;
	size_t pair = semi ? (size_t)(semi - v) : n, i = pair;
	const char *name = v;
	size_t nl = pair;

	if ((eq = memchr(v, '=', pair)))
		nl = (size_t)(eq - v);
	trim(&name, &nl);
	if (nl == strlen(token_cookie) && !memcmp(name, token_cookie, nl))
		return 0;
	if (sbx_buf_append(out, "Set-Cookie: ", 12) || sbx_buf_append(out, v, pair))
		return -1;
	while (i < n) {   /* at a ';' */
		const char *a = v + i + 1, *an;
		const char *e = memchr(a, ';', n - i - 1);
		size_t alen = e ? (size_t)(e - a) : n - i - 1, k;
		an = a;
		k = alen;
		if ((eq = memchr(a, '=', alen)))
			k = (size_t)(eq - a);
		trim(&an, &k);
		if (!name_is(an, k, "domain") && (sbx_buf_append(out, ";", 1) ||
						  sbx_buf_append(out, a, alen)))
			return -1;
		i += 1 + alen;
	}
	return sbx_buf_append(out, "\r\n", 2);
}

/* What the head's framing headers say. */
struct framing {
	int status;
	int64_t length;      /* -1 none */
	int te, chunked;     /* Transfer-Encoding present; its last coding is chunked */
};

static int content_length(const char *v, size_t n, int64_t *out)
{
	int64_t x = 0;
	if (!n || n > 18)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		x = x * 10 + (v[i] - '0');
	}
	if (*out >= 0 && *out != x)
		return -1;   /* two that disagree */
	*out = x;
	return 0;
}

static void transfer_encoding(const char *v, size_t n, struct framing *f)
{
	const char *c = v;
	size_t cn = n;
	const char *comma;
	/* the last coding of the last line decides */
	while ((comma = memchr(c, ',', cn))) {
		cn -= (size_t)(comma - c) + 1;
		c = comma + 1;
	}
	trim(&c, &cn);
	f->te = 1;
	f->chunked = name_is(c, cn, "chunked");
}

/* The status line: "HTTP/1.x SSS[ reason]". */
static int status_line(const char *p, size_t n)
{
	if (n < 12 || memcmp(p, "HTTP/1.", 7) || (p[7] != '0' && p[7] != '1') || p[8] != ' ' ||
	    p[9] < '1' || p[9] > '9' || p[10] < '0' || p[10] > '9' || p[11] < '0' || p[11] > '9' ||
	    (n > 12 && p[12] != ' '))
		return -1;
	for (size_t i = 12; i < n; i++)
		if ((unsigned char)p[i] < 0x20 && p[i] != '\t')
			return -1;
	return (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
}

/* A refused head leaves nothing of itself in out. */
static int refuse(struct gw_presp *rp, struct sbx_buf *out, size_t mark, const char *why)
{
	out->len = mark;
	return bad(rp, why);
}

/* The head [p, p+hl) (ending CRLF CRLF), rewritten into out. */
static int head(struct gw_presp *rp, const char *p, size_t hl, struct sbx_buf *out,
		const char *token_cookie, struct framing *f)
{
	const char *end = p + hl - 2, *line = p, *eol;
	size_t mark = out->len;
	int nhdr = 0;

	f->length = -1;
	f->te = f->chunked = 0;
	for (const char *q = p; q < p + hl; q++)   /* bare CR or LF, NUL */
		if ((*q == '\n' && (q == p || q[-1] != '\r')) ||
		    (*q == '\r' && (q + 1 == p + hl || q[1] != '\n')) || !*q)
			return refuse(rp, out, mark, "a bare CR or LF, or a NUL, in a response head");
	eol = memchr(line, '\r', (size_t)(end - line));
	if ((f->status = status_line(line, (size_t)(eol - line))) < 0)
		return refuse(rp, out, mark, "not an HTTP/1.x status line");
	if (sbx_buf_append(out, line, (size_t)(eol - line) + 2))
		return refuse(rp, out, mark, "out of memory");
	for (line = eol + 2; line < end; line = eol + 2) {
		const char *colon, *v;
		size_t vn;
		eol = memchr(line, '\r', (size_t)(end - line));
		if (++nhdr > GW_H1_HDR_MAX)
			return refuse(rp, out, mark, "too many response header lines");
		if (*line == ' ' || *line == '\t')
			return refuse(rp, out, mark, "a folded response header line");
		colon = memchr(line, ':', (size_t)(eol - line));
		if (!colon || colon == line)
			return refuse(rp, out, mark, "a response header line without a name");
		for (const char *q = line; q < colon; q++)
			if (!is_tchar((unsigned char)*q))
				return refuse(rp, out, mark, "a response header name with a character outside tchar");
		for (const char *q = colon + 1; q < eol; q++)
			if ((unsigned char)*q < 0x20 && *q != '\t')
				return refuse(rp, out, mark, "a control character in a response header");
		v = colon + 1;
		vn = (size_t)(eol - v);
		trim(&v, &vn);
		if (name_is(line, (size_t)(colon - line), "content-length")) {
			if (content_length(v, vn, &f->length))
				return refuse(rp, out, mark, "a bad or conflicting Content-Length");
		} else if (name_is(line, (size_t)(colon - line), "transfer-encoding")) {
			transfer_encoding(v, vn, f);
		} else if (name_is(line, (size_t)(colon - line), "set-cookie")) {
			if (set_cookie(v, vn, out, token_cookie))
				return refuse(rp, out, mark, "out of memory");
			continue;
		}
		if (sbx_buf_append(out, line, (size_t)(eol - line) + 2))
			return refuse(rp, out, mark, "out of memory");
	}
	if (f->te && f->length >= 0)
		return refuse(rp, out, mark, "both Content-Length and Transfer-Encoding");
	if (sbx_buf_append(out, "\r\n", 2))
		return refuse(rp, out, mark, "out of memory");
	return 0;
}

/* RFC 9112 6.3: where this response's body ends. */
static void frame(struct gw_presp *rp, const struct framing *f)
{
	if (f->status == 101) {
		rp->state = GW_PR_RAW;   /* the guest's WebSocket from here on */
		take_pending(rp);
		return;
	}
	if (f->status < 200)
		return;   /* an interim response: the final one follows */
	rp->state = GW_PR_HEAD;
	if (take_pending(rp) || f->status == 204 || f->status == 304)
		return;
	if (f->te) {
		rp->state = f->chunked ? GW_PR_CHUNKED : GW_PR_RAW;
		if (f->chunked)
			gw_h1_chunk_init(&rp->ck);
	} else if (f->length >= 0) {
		rp->left = (uint64_t)f->length;
		rp->state = f->length ? GW_PR_LENGTH : GW_PR_HEAD;
	} else {
		rp->state = GW_PR_RAW;   /* the body ends when the guest closes */
	}
}

/* Bytes at the start of [p, p+n) that a head accounts for (0 when it has
 * not ended: they were kept in rp->part), or -1. */
static long feed_head(struct gw_presp *rp, const char *p, size_t n, struct sbx_buf *out,
		      const char *token_cookie)
{
	struct framing f;
	size_t hl, had = rp->part.len;
	static const char start[] = "HTTP/1.";

	/* not HTTP at all: said at once, not when a head that never ends
	 * would have filled up */
	for (size_t i = had; i < sizeof start - 1 && i - had < n; i++)
		if (p[i - had] != start[i])
			return bad(rp, "not an HTTP/1.x status line");

	if (!had && (hl = head_end(p, n))) {   /* the usual case: all in one read */
		if (head(rp, p, hl, out, token_cookie, &f))
			return -1;
		frame(rp, &f);
		return (long)hl;
	}
	/* a head in pieces: the CRLF CRLF may straddle the pieces */
	size_t take = n < GW_H1_HEAD_MAX - had ? n : GW_H1_HEAD_MAX - had;
	if (sbx_buf_append(&rp->part, p, take))
		return bad(rp, "out of memory");
	hl = head_end((const char *)sbx_buf_head(&rp->part), rp->part.len);
	if (!hl) {
		if (rp->part.len >= GW_H1_HEAD_MAX)
			return bad(rp, "a response head over 16 KiB");
		return (long)take;
	}
	if (head(rp, (const char *)sbx_buf_head(&rp->part), hl, out, token_cookie, &f))
		return -1;
	frame(rp, &f);
	sbx_buf_free(&rp->part);
	return (long)(hl - had);
}

int gw_presp_feed(struct gw_presp *rp, const char *in, size_t len, struct sbx_buf *out,
		  const char *token_cookie)
{
	size_t i = 0;

	while (i < len) {
		const char *p = in + i;
		size_t n = len - i;
		long k;

		switch (rp->state) {
		case GW_PR_BAD:
			return -1;
		case GW_PR_RAW:
			return sbx_buf_append(out, p, n);
		case GW_PR_HEAD:
			if ((k = feed_head(rp, p, n, out, token_cookie)) <= 0) {
				rp->at_head = 1;
				return k < 0 ? -1 : bad(rp, "internal: a head took no bytes");
			}
			break;
		case GW_PR_LENGTH:
			k = n < rp->left ? (long)n : (long)rp->left;
			rp->left -= (uint64_t)k;
			if (!rp->left)
				rp->state = GW_PR_HEAD;
			if (sbx_buf_append(out, p, (size_t)k))
				return bad(rp, "out of memory");
			break;
		case GW_PR_CHUNKED:
			if ((k = gw_h1_chunk_feed(&rp->ck, p, n)) < 0)
				return bad(rp, "bad chunked framing in a response");
			if (rp->ck.done)
				rp->state = GW_PR_HEAD;
			if (sbx_buf_append(out, p, (size_t)k))
				return bad(rp, "out of memory");
			break;
		default:
			return bad(rp, "internal");
		}
		i += (size_t)k;
	}
	return 0;
}
