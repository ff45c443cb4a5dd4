/* Bounded HTTP/1.1 request-head parser and chunked framer (gw_http1.h).
 * RFC 9112 with the leniencies removed that let a front and a back end
 * disagree about where a request ends: no obs-fold, no bare CR or LF, no
 * whitespace before the colon, exactly one Content-Length or exactly one
 * "Transfer-Encoding: chunked", never both. The one leniency kept is the
 * one RFC 9112 2.2 asks for, a few empty lines before the request line
 * (bare LF ones too): they are never forwarded, so no later parser can
 * read them differently. */
#include <string.h>
#include <strings.h>
#include "gw_http1.h"

static int is_tchar(unsigned char c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return 1;
	return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* field-value bytes: VCHAR, obs-text, SP, HT; never CTLs or DEL */
static int is_vchar(unsigned char c)
{
	return c == ' ' || c == '\t' || (c > 0x20 && c != 0x7f);
}

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static int ieq(const char *a, size_t n, const char *b)
{
	if (strlen(b) != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (lower((unsigned char)a[i]) != lower((unsigned char)b[i]))
			return 0;
	return 1;
}

int gw_h1_name_is(const char *p, const struct gw_h1_hdr *hd, const char *name)
{
	return ieq(p + hd->name.off, hd->name.len, name);
}

/* Call back for each comma-separated token of a list value (OWS trimmed);
 * sets the flags of the tokens we care about. */
static void conn_tokens(const char *v, size_t n, struct gw_h1_head *h, int upgrade_hdr)
{
	size_t i = 0;
	while (i < n) {
		size_t s = i;
		while (i < n && v[i] != ',')
			i++;
		size_t e = i;
		while (s < e && (v[s] == ' ' || v[s] == '\t'))
			s++;
		while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
			e--;
		if (upgrade_hdr) {
			if (ieq(v + s, e - s, "websocket"))
				h->upgrade_websocket = 1;
		} else if (ieq(v + s, e - s, "close")) {
			h->conn_close = 1;
		} else if (ieq(v + s, e - s, "upgrade")) {
			h->conn_upgrade = 1;
		}
		i++;
	}
}

/* Length of the line at p (up to and including CRLF), 0 when incomplete,
 * -1 for a bare CR or LF. */
static long line_len(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\n')
			return -1;
		if (p[i] == '\r') {
			if (i + 1 == n)
				return 0;
			return p[i + 1] == '\n' ? (long)(i + 2) : -1;
		}
	}
	return 0;
}

static int request_line(const char *p, size_t len, uint32_t base, struct gw_h1_head *h)
{
	size_t i = 0, end = len - 2;
	while (i < end && is_tchar((unsigned char)p[i]))
		i++;
	if (i == 0 || i > 32 || i >= end || p[i] != ' ')
		return -400;
	h->method = (struct gw_h1_span){ base, (uint32_t)i };
	size_t t = ++i;
	while (i < end && (unsigned char)p[i] > 0x20 && (unsigned char)p[i] < 0x7f)
		i++;
	if (i == t || i >= end || p[i] != ' ')
		return -400;
	h->target = (struct gw_h1_span){ base + (uint32_t)t, (uint32_t)(i - t) };
	i++;
	if (end - i != 8 || memcmp(p + i, "HTTP/1.", 7) != 0)
		return end - i == 8 && !memcmp(p + i, "HTTP/", 5) ? -505 : -400;
	if (p[i + 7] != '0' && p[i + 7] != '1')
		return p[i + 7] >= '2' && p[i + 7] <= '9' ? -505 : -400;
	h->minor = p[i + 7] - '0';
	return 0;
}

static int header_line(const char *buf, uint32_t off, size_t len, struct gw_h1_head *h)
{
	const char *p = buf + off;
	size_t end = len - 2, i = 0;
	if (p[0] == ' ' || p[0] == '\t')
		return -400;               /* obs-fold */
	while (i < end && is_tchar((unsigned char)p[i]))
		i++;
	if (i == 0 || i >= end || p[i] != ':')
		return -400;               /* also catches "Name :" */
	if (h->nhdr >= GW_H1_HDR_MAX)
		return -431;
	struct gw_h1_hdr *hd = &h->hdr[h->nhdr];
	hd->name = (struct gw_h1_span){ off, (uint32_t)i };
	hd->line = (struct gw_h1_span){ off, (uint32_t)len };
	i++;
	for (size_t k = i; k < end; k++)
		if (!is_vchar((unsigned char)p[k]))
			return -400;
	while (i < end && (p[i] == ' ' || p[i] == '\t'))
		i++;
	while (end > i && (p[end - 1] == ' ' || p[end - 1] == '\t'))
		end--;
	hd->value = (struct gw_h1_span){ off + (uint32_t)i, (uint32_t)(end - i) };
	h->nhdr++;
	return 0;
}

/* What the headers mean, once all are in. */
static int semantics(const char *buf, struct gw_h1_head *h)
{
	int ncl = 0, nte = 0;
	for (int k = 0; k < h->nhdr; k++) {
		const struct gw_h1_hdr *hd = &h->hdr[k];
		const char *v = buf + hd->value.off;
		size_t vn = hd->value.len;
		if (gw_h1_name_is(buf, hd, "host")) {
			if (h->host >= 0)
				return -400;
			h->host = k;
		} else if (gw_h1_name_is(buf, hd, "content-length")) {
			if (ncl++ || vn == 0 || vn > 18)
				return -400;
			int64_t cl = 0;
			for (size_t i = 0; i < vn; i++) {
				if (v[i] < '0' || v[i] > '9')
					return -400;
				cl = cl * 10 + (v[i] - '0');
			}
			h->content_length = cl;
		} else if (gw_h1_name_is(buf, hd, "transfer-encoding")) {
			if (nte++ || !ieq(v, vn, "chunked"))
				return -400;
			h->chunked = 1;
		} else if (gw_h1_name_is(buf, hd, "connection")) {
			conn_tokens(v, vn, h, 0);
		} else if (gw_h1_name_is(buf, hd, "upgrade")) {
			conn_tokens(v, vn, h, 1);
		}
	}
	if (ncl && nte)
		return -400;
	if (nte && h->minor == 0)
		return -400;               /* RFC 9112 6.1: faulty framing */
	if (h->host < 0 && h->minor == 1)
		return -400;
	return 0;
}

long gw_h1_lead(const char *p, size_t n)
{
	size_t i = 0;
	for (int lines = 0;; lines++) {
		size_t k = i < n && p[i] == '\r' ? i + 1 : i;
		if (k >= n || p[k] != '\n')
			return (long)i;
		if (lines == GW_H1_LEAD_MAX)
			return -1;
		i = k + 1;
	}
}

int gw_h1_parse(const char *p, size_t n, struct gw_h1_head *h)
{
	int have_rl = 0;
	memset(h, 0, offsetof(struct gw_h1_head, hdr));
	h->host = -1;
	h->content_length = -1;
	h->nhdr = 0;
	if (n > GW_H1_HEAD_MAX)
		n = GW_H1_HEAD_MAX;
	long lead = gw_h1_lead(p, n);
	if (lead < 0)
		return -400;
	size_t off = (size_t)lead;
	for (;;) {
		long len = line_len(p + off, n - off);
		if (len < 0)
			return -400;
		if (len == 0)
			return n >= GW_H1_HEAD_MAX ? -431 : 0;
		int rc;
		if (!have_rl) {
			rc = request_line(p + off, (size_t)len, (uint32_t)off, h);
			have_rl = 1;
		} else if (len == 2) {
			h->head_len = off + 2;
			rc = semantics(p, h);
			return rc ? rc : (int)h->head_len;
		} else {
			rc = header_line(p, (uint32_t)off, (size_t)len, h);
		}
		if (rc)
			return rc;
		off += (size_t)len;
	}
}

int gw_h1_sniff_host(const char *p, size_t n, char *out, size_t outsz)
{
	long lead = gw_h1_lead(p, n);
	if (lead < 0)
		return -1;
	const char *e = p + n, *l = memchr(p + lead, '\n', n - (size_t)lead);   /* the request line */
	while (l && l + 1 < e) {
		l++;
		const char *nl = memchr(l, '\n', (size_t)(e - l));
		if (!nl)
			return 0;
		size_t len = (size_t)(nl - l);
		if (len <= 1)
			return -1;                      /* end of the head */
		if (len > 5 && !strncasecmp(l, "host:", 5)) {
			const char *v = l + 5, *ve = nl;
			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			while (ve > v && (ve[-1] == '\r' || ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			if ((size_t)(ve - v) >= outsz)
				return -1;
			memcpy(out, v, (size_t)(ve - v));
			out[ve - v] = '\0';
			return 1;
		}
		l = nl;
	}
	return 0;
}

enum { C_SIZE, C_SIZE_MORE, C_EXT, C_SIZE_LF, C_DATA, C_DATA_CR, C_DATA_LF,
       C_TR_START, C_TR_LINE, C_TR_LF, C_END_LF, C_DONE };

void gw_h1_chunk_init(struct gw_h1_chunk *c)
{
	memset(c, 0, sizeof *c);
	c->state = C_SIZE;
}

static int hexval(unsigned char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	ch = (unsigned char)lower(ch);
	return ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

long gw_h1_chunk_feed(struct gw_h1_chunk *c, const char *p, size_t n)
{
	size_t i = 0;
	while (i < n && c->state != C_DONE) {
		unsigned char ch = (unsigned char)p[i];
		switch (c->state) {
		case C_SIZE:
		case C_SIZE_MORE:
			if (hexval(ch) >= 0) {
				if (++c->digits > 15)
					return -1;   /* 2^60: no real body is that big */
				c->left = c->left * 16 + (uint64_t)hexval(ch);
				c->state = C_SIZE_MORE;
			} else if (c->state == C_SIZE_MORE && ch == ';') {
				c->state = C_EXT;
			} else if (c->state == C_SIZE_MORE && ch == '\r') {
				c->state = C_SIZE_LF;
			} else {
				return -1;
			}
			i++;
			break;
		case C_EXT:
			if (ch == '\r')
				c->state = C_SIZE_LF;
			else if (!is_vchar(ch) || ++c->extlen > 1024)
				return -1;
			i++;
			break;
		case C_SIZE_LF:
			if (ch != '\n')
				return -1;
			c->state = c->left ? C_DATA : C_TR_START;
			c->digits = c->extlen = 0;
			c->sizes++;
			i++;
			break;
		case C_DATA: {
			size_t k = n - i;
			if (k > c->left)
				k = (size_t)c->left;
			c->left -= k;
			i += k;
			if (!c->left)
				c->state = C_DATA_CR;
			break;
		}
		case C_DATA_CR:
		case C_TR_LF:
		case C_END_LF:
		case C_DATA_LF:
			if (ch != (c->state == C_DATA_CR ? '\r' : '\n'))
				return -1;
			c->state = c->state == C_DATA_CR ? C_DATA_LF :
				   c->state == C_DATA_LF ? C_SIZE :
				   c->state == C_TR_LF ? C_TR_START : C_DONE;
			i++;
			break;
		case C_TR_START:
			if (ch == '\r') {
				c->state = C_END_LF;
				i++;
				break;
			}
			if (ch == ' ' || ch == '\t')
				return -1;           /* obs-fold in a trailer */
			c->state = C_TR_LINE;
			/* fall through */
		case C_TR_LINE:
			if (++c->trailer > GW_H1_TRAILER_MAX)
				return -1;
			if (ch == '\r')
				c->state = C_TR_LF;
			else if (!is_vchar(ch))
				return -1;
			i++;
			break;
		}
	}
	if (c->state == C_DONE)
		c->done = 1;
	return (long)i;
}
