/* Bytes as text (sbx_text.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "sbx_text.h"

/* Length of the valid UTF-8 sequence at p (1..4), 0 if invalid. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0) { len = 2; cp = p[0] & 0x1f; }
	else if ((p[0] & 0xf0) == 0xe0) { len = 3; cp = p[0] & 0x0f; }
	else if ((p[0] & 0xf8) == 0xf0) { len = 4; cp = p[0] & 0x07; }
	else return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

int sbx_text_json(struct sbx_buf *b, const void *in, size_t n)
{
	const unsigned char *p = in;
	static const char hex[] = "0123456789abcdef";
	size_t i = 0;

	while (i < n) {
		size_t k = utf8_seq(p + i, n - i);
		char esc[8];

		if (!k) {
			if (sbx_buf_append(b, "\\ufffd", 6))
				return -1;
			i++;
			continue;
		}
		if (k > 1 || (p[i] >= 0x20 && p[i] != '"' && p[i] != '\\')) {
			if (sbx_buf_append(b, p + i, k))
				return -1;
		} else if (p[i] == '"' || p[i] == '\\' || p[i] == '\n' || p[i] == '\t' ||
			   p[i] == '\r') {
			esc[0] = '\\';
			esc[1] = p[i] == '\n' ? 'n' : p[i] == '\t' ? 't' : p[i] == '\r' ? 'r' : (char)p[i];
			if (sbx_buf_append(b, esc, 2))
				return -1;
		} else {
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[p[i] >> 4];
			esc[5] = hex[p[i] & 15];
			if (sbx_buf_append(b, esc, 6))
				return -1;
		}
		i += k;
	}
	return 0;
}

int sbx_text_base64(struct sbx_buf *b, const void *in, size_t n)
{
	const unsigned char *p = in;
	if (!n)
		return 0;   /* (reserving 0 bytes is no room at all) */
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned char *d = sbx_buf_reserve(b, 4 * ((n + 2) / 3));
	size_t i, k = 0;

	if (!d)
		return -1;
	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		d[k++] = (unsigned char)tab[v >> 18];
		d[k++] = (unsigned char)tab[(v >> 12) & 63];
		d[k++] = (unsigned char)tab[(v >> 6) & 63];
		d[k++] = (unsigned char)tab[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
		d[k++] = (unsigned char)tab[v >> 18];
		d[k++] = (unsigned char)tab[(v >> 12) & 63];
		d[k++] = i + 1 < n ? (unsigned char)tab[(v >> 6) & 63] : '=';
		d[k++] = '=';
	}
	sbx_buf_commit(b, k);
	return 0;
}

char *sbx_text_utf8(const void *in, size_t n)
{
	const unsigned char *p = in;
	char *out = malloc(3 * n + 1), *d = out;   /* U+FFFD is 3 bytes */
	size_t i = 0;

	if (!out)
		return NULL;
	while (i < n) {
		size_t k = p[i] ? utf8_seq(p + i, n - i) : 0;
		if (!k) {
			memcpy(d, "\xef\xbf\xbd", 3);
			d += 3;
			i++;
			continue;
		}
		memcpy(d, p + i, k);
		d += k;
		i += k;
	}
	*d = '\0';
	return out;
}

char *sbx_text_base64_str(const void *p, size_t n)
{
	struct sbx_buf b;
	char *out;

	sbx_buf_init(&b, 0);
	if (sbx_text_base64(&b, p, n) || sbx_buf_append(&b, "", 1)) {
		sbx_buf_free(&b);
		return NULL;
	}
	out = malloc(b.len);
	if (out)
		memcpy(out, sbx_buf_head(&b), b.len);
	sbx_buf_free(&b);
	return out;
}
