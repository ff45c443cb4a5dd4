#include "sbx_http1.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

static int tchar(unsigned char c)
{
	return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

int sbx_h1_is(const char *p, struct sbx_h1_span sp, const char *s)
{
	return strlen(s) == sp.len && strncasecmp(p + sp.off, s, sp.len) == 0;
}

/* The end of the head: the offset past "\r\n\r\n", 0 when not there yet,
 * -1 when a bare LF or CR appears (one reading only: CRLF lines). */
static long head_end(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\n' && (i == 0 || p[i - 1] != '\r'))
			return -1;
		if (p[i] == '\r' && i + 1 < n && p[i + 1] != '\n')
			return -1;
		if (i >= 3 && p[i] == '\n' && memcmp(p + i - 3, "\r\n\r\n", 4) == 0)
			return (long)(i + 1);
	}
	return 0;
}

static int parse_version(const char *p, size_t n, int *minor)
{
	if (n != 8 || memcmp(p, "HTTP/1.", 7) != 0 || (p[7] != '0' && p[7] != '1'))
		return -1;
	*minor = p[7] - '0';
	return 0;
}

/* Whether the comma-separated list of the span contains tok. */
static int list_has(const char *p, struct sbx_h1_span sp, const char *tok)
{
	size_t i = sp.off, end = sp.off + sp.len, tn = strlen(tok);

	while (i < end) {
		size_t s, e;
		while (i < end && (p[i] == ' ' || p[i] == '\t' || p[i] == ','))
			i++;
		s = i;
		while (i < end && p[i] != ',')
			i++;
		e = i;
		while (e > s && (p[e - 1] == ' ' || p[e - 1] == '\t'))
			e--;
		if (e - s == tn && strncasecmp(p + s, tok, tn) == 0)
			return 1;
	}
	return 0;
}

/* The header fields from off to the empty line at end - 2; the framing. */
static int parse_fields(const char *p, size_t off, size_t end, struct sbx_h1_head *h)
{
	int have_len = 0, have_te = 0, keep_alive = 0;

	h->n_fields = 0;
	h->close = 0;
	h->length = 0;
	while (off + 2 < end) {
		size_t eol = off, nend, vs, ve;
		while (p[eol] != '\r')
			eol++;
		nend = off;
		while (nend < eol && tchar((unsigned char)p[nend]))
			nend++;
		if (nend == off || nend >= eol || p[nend] != ':')
			return -1;      /* no name, a space before the colon, folding */
		vs = nend + 1;
		while (vs < eol && (p[vs] == ' ' || p[vs] == '\t'))
			vs++;
		ve = eol;
		while (ve > vs && (p[ve - 1] == ' ' || p[ve - 1] == '\t'))
			ve--;
		for (size_t i = vs; i < ve; i++)
			if (((unsigned char)p[i] < 0x20 && p[i] != '\t') || p[i] == 0x7f)
				return -1;
		if (h->n_fields >= SBX_H1_FIELDS_MAX)
			return -1;
		struct sbx_h1_span name = { (unsigned)off, (unsigned)(nend - off) };
		struct sbx_h1_span val = { (unsigned)vs, (unsigned)(ve - vs) };
		h->name[h->n_fields] = name;
		h->value[h->n_fields] = val;
		h->n_fields++;
		if (sbx_h1_is(p, name, "content-length")) {
			unsigned long long v = 0;
			if (val.len == 0 || val.len > 15)
				return -1;
			for (size_t i = vs; i < ve; i++) {
				if (p[i] < '0' || p[i] > '9')
					return -1;
				v = v * 10 + (unsigned)(p[i] - '0');
			}
			if (have_len && v != h->length)
				return -1;
			have_len = 1;
			h->length = v;
		} else if (sbx_h1_is(p, name, "transfer-encoding")) {
			if (have_te || !sbx_h1_is(p, val, "chunked"))
				return -1;
			have_te = 1;
		} else if (sbx_h1_is(p, name, "connection")) {
			if (list_has(p, val, "close"))
				h->close = 1;
			if (list_has(p, val, "keep-alive"))
				keep_alive = 1;
		}
		off = eol + 2;
	}
	if (have_len && have_te)
		return -1;
	h->body = have_te ? SBX_H1_CHUNKED : have_len ? SBX_H1_LENGTH : SBX_H1_NONE;
	if (h->minor == 0 && !keep_alive)
		h->close = 1;
	return 0;
}

long sbx_h1_request(const char *p, size_t n, struct sbx_h1_head *h)
{
	long end = head_end(p, n < SBX_H1_HEAD_MAX ? n : SBX_H1_HEAD_MAX);
	size_t i = 0, eol;

	if (end < 0)
		return SBX_H1_BAD;
	if (end == 0)
		return n >= SBX_H1_HEAD_MAX ? SBX_H1_BAD : SBX_H1_MORE;
	memset(h, 0, sizeof(*h));
	while (tchar((unsigned char)p[i]))
		i++;
	if (i == 0 || p[i] != ' ')
		return SBX_H1_BAD;
	h->method = (struct sbx_h1_span){ 0, (unsigned)i };
	eol = ++i;
	while (p[eol] != '\r')
		eol++;
	while (i < eol && (unsigned char)p[i] > 0x20 && p[i] != 0x7f)
		i++;
	if (i == h->method.len + 1 || i >= eol || p[i] != ' ')
		return SBX_H1_BAD;
	h->target = (struct sbx_h1_span){ h->method.len + 1, (unsigned)(i - h->method.len - 1) };
	if (parse_version(p + i + 1, eol - i - 1, &h->minor) < 0 ||
	    parse_fields(p, eol + 2, (size_t)end, h) < 0)
		return SBX_H1_BAD;
	return end;
}

long sbx_h1_response(const char *p, size_t n, struct sbx_h1_head *h)
{
	long end = head_end(p, n < SBX_H1_HEAD_MAX ? n : SBX_H1_HEAD_MAX);
	size_t eol = 0;

	if (end < 0)
		return SBX_H1_BAD;
	if (end == 0)
		return n >= SBX_H1_HEAD_MAX ? SBX_H1_BAD : SBX_H1_MORE;
	memset(h, 0, sizeof(*h));
	while (p[eol] != '\r')
		eol++;
	if (eol < 12 || parse_version(p, 8, &h->minor) < 0 || p[8] != ' ' ||
	    !isdigit((unsigned char)p[9]) || !isdigit((unsigned char)p[10]) ||
	    !isdigit((unsigned char)p[11]) || (eol > 12 && p[12] != ' '))
		return SBX_H1_BAD;
	h->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
	if (h->status < 100)
		return SBX_H1_BAD;
	for (size_t i = 12; i < eol; i++)
		if (((unsigned char)p[i] < 0x20 && p[i] != '\t') || p[i] == 0x7f)
			return SBX_H1_BAD;
	if (parse_fields(p, eol + 2, (size_t)end, h) < 0)
		return SBX_H1_BAD;
	if (h->body == SBX_H1_NONE)
		h->body = SBX_H1_UNTIL_CLOSE;
	return end;
}

long sbx_h1_chunk_line(const char *p, size_t n, unsigned long long *size)
{
	size_t i = 0;
	unsigned long long v = 0;

	while (i < n && isxdigit((unsigned char)p[i])) {
		if (i >= 15)
			return SBX_H1_BAD;
		v = v * 16 + (unsigned)(isdigit((unsigned char)p[i]) ? p[i] - '0' :
					 (tolower((unsigned char)p[i]) - 'a' + 10));
		i++;
	}
	if (i == n)
		return n > 15 ? SBX_H1_BAD : SBX_H1_MORE;
	if (i == 0 || (p[i] != ';' && p[i] != '\r'))
		return SBX_H1_BAD;
	for (; i < n && i < 1024; i++) {
		if (p[i] == '\r') {
			if (i + 1 == n)
				return SBX_H1_MORE;
			if (p[i + 1] != '\n')
				return SBX_H1_BAD;
			*size = v;
			return (long)(i + 2);
		}
		if (((unsigned char)p[i] < 0x20 && p[i] != '\t') || p[i] == 0x7f)
			return SBX_H1_BAD;
	}
	return i >= 1024 ? SBX_H1_BAD : SBX_H1_MORE;
}
