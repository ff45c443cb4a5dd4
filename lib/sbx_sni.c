#include "sbx_sni.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

int sbx_peek_name_ok(const char *s)
{
	size_t n = strlen(s), label = 0;

	if (n == 0 || n > 253)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '.') {
			if (label == 0)
				return 0;
			label = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return 0;
		if (++label > 63)
			return 0;
	}
	return label > 0;
}

/* Copy [s, s+n) lower-cased into out, dropping one trailing dot; 1 when
 * the result is a name sbx_peek_name_ok accepts. */
static int take_name(const unsigned char *s, size_t n, char *out)
{
	if (n > 0 && s[n - 1] == '.')
		n--;
	if (n == 0 || n >= SBX_PEEK_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		out[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
	}
	out[n] = '\0';
	return sbx_peek_name_ok(out);
}

static unsigned be16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

/* The server_name extension's body [p, p+n): one host_name. */
static int sni_ext(const unsigned char *p, size_t n, char *out)
{
	size_t list, i = 2;
	int found = 0;

	if (n < 2 || (list = be16(p)) != n - 2)
		return SBX_PEEK_BAD;
	while (i < n) {
		size_t len;
		if (n - i < 3)
			return SBX_PEEK_BAD;
		len = be16(p + i + 1);
		if (n - i - 3 < len)
			return SBX_PEEK_BAD;
		if (p[i] == 0) {
			/* two names would leave the choice to whoever reads second */
			if (found || !take_name(p + i + 3, len, out))
				return SBX_PEEK_BAD;
			found = 1;
		}
		i += 3 + len;
	}
	return found ? SBX_PEEK_NAME : SBX_PEEK_NONAME;
}

int sbx_sni_peek(const unsigned char *p, size_t n, char *out)
{
	size_t rec, hs, i, end, len;
	int sni = SBX_PEEK_NONAME, seen_sni = 0;

	if (n >= 1 && p[0] != 0x16)
		return SBX_PEEK_BAD;
	if (n >= 2 && p[1] != 0x03)
		return SBX_PEEK_BAD;
	if (n < 5)
		return SBX_PEEK_MORE;
	rec = be16(p + 3);
	if (rec < 4 || rec > 16384 + 256)
		return SBX_PEEK_BAD;
	if (n < 5 + 4)
		return SBX_PEEK_MORE;
	if (p[5] != 1)          /* handshake type client_hello */
		return SBX_PEEK_BAD;
	hs = (size_t)p[6] << 16 | (size_t)p[7] << 8 | p[8];
	/* the whole ClientHello in the first record: one split across
	 * records is legal TLS, but no client we serve sends one */
	if (hs > rec - 4)
		return SBX_PEEK_BAD;
	if (n < 5 + rec)
		return SBX_PEEK_MORE;
	i = 9;
	end = 9 + hs;
	/* version, random */
	if (end - i < 34)
		return SBX_PEEK_BAD;
	i += 34;
	/* session id */
	if (end - i < 1 || end - i - 1 < p[i])
		return SBX_PEEK_BAD;
	i += 1 + p[i];
	/* cipher suites */
	if (end - i < 2 || end - i - 2 < be16(p + i))
		return SBX_PEEK_BAD;
	i += 2 + be16(p + i);
	/* compression methods */
	if (end - i < 1 || end - i - 1 < p[i])
		return SBX_PEEK_BAD;
	i += 1 + p[i];
	if (i == end)
		return SBX_PEEK_NONAME;  /* no extensions at all */
	if (end - i < 2 || (len = be16(p + i)) != end - i - 2)
		return SBX_PEEK_BAD;
	i += 2;
	while (i < end) {
		unsigned type;
		if (end - i < 4)
			return SBX_PEEK_BAD;
		type = be16(p + i);
		len = be16(p + i + 2);
		i += 4;
		if (end - i < len)
			return SBX_PEEK_BAD;
		/* encrypted_client_hello (RFC 9849) and its draft ESNI: the
		 * name we would check is then not the one the server sees */
		if (type == 0xfe0d || type == 0xffce)
			return SBX_PEEK_ECH;
		if (type == 0) {
			if (seen_sni++)
				return SBX_PEEK_BAD;
			sni = sni_ext(p + i, len, out);
			if (sni == SBX_PEEK_BAD)
				return SBX_PEEK_BAD;
		}
		i += len;
	}
	return sni;
}

/* The end of the request head (just past its empty line) in [p, p+n), or
 * 0 when it has not come yet. */
static size_t head_end(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++) {
		if (p[i] != '\n')
			continue;
		if (p[i + 1] == '\n')
			return i + 2;
		if (p[i + 1] == '\r' && i + 2 < n && p[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/* [s, s+n) without blanks around it. */
static void trim(const unsigned char **s, size_t *n)
{
	while (*n && (**s == ' ' || **s == '\t'))
		(*s)++, (*n)--;
	while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\r'))
		(*n)--;
}

/* An authority "name[:port]" as a name in out. */
static int authority(const unsigned char *s, size_t n, char *out)
{
	const unsigned char *colon = memchr(s, ':', n);

	if (colon) {
		size_t pn = n - (size_t)(colon - s) - 1;
		if (pn == 0 || pn > 5)
			return 0;
		for (size_t i = 0; i < pn; i++)
			if (colon[1 + i] < '0' || colon[1 + i] > '9')
				return 0;
		n = (size_t)(colon - s);
	}
	return take_name(s, n, out);
}

/* The authority of an absolute-form target (http://name[:port]/...), in
 * out: 1; 0 for an origin-form target; -1 for anything else. */
static int target_authority(const unsigned char *t, size_t n, char *out)
{
	size_t a;

	if (n >= 1 && t[0] == '/')
		return 0;
	if (n < 7 || strncasecmp((const char *)t, "http://", 7) != 0)
		return -1;
	t += 7;
	n -= 7;
	for (a = 0; a < n && t[a] != '/' && t[a] != '?'; a++)
		if (t[a] == '@')
			return -1;      /* userinfo: one more way to hide a name */
	return authority(t, a, out) ? 1 : -1;
}

int sbx_host_peek(const unsigned char *p, size_t n, char *out)
{
	char target[SBX_PEEK_NAME_MAX];
	size_t end, i, line_end;
	const unsigned char *sp1, *sp2;
	int have_target, found = 0;

	end = head_end(p, n > SBX_HOST_HEAD_MAX ? SBX_HOST_HEAD_MAX : n);
	if (!end) {
		/* a request line starts with a token: refuse TLS or binary now */
		for (i = 0; i < n && i < 16 && p[i] != ' '; i++)
			if (p[i] < 'A' || p[i] > 'Z')
				return SBX_PEEK_BAD;
		return n >= SBX_HOST_HEAD_MAX ? SBX_PEEK_BAD : SBX_PEEK_MORE;
	}
	line_end = (size_t)((const unsigned char *)memchr(p, '\n', end) - p);
	sp1 = memchr(p, ' ', line_end);
	if (!sp1 || sp1 == p)
		return SBX_PEEK_BAD;
	for (const unsigned char *m = p; m < sp1; m++)
		if (*m < 'A' || *m > 'Z')
			return SBX_PEEK_BAD;
	sp2 = memchr(sp1 + 1, ' ', (size_t)(p + line_end - sp1 - 1));
	if (!sp2 || (size_t)(p + line_end - sp2) < 9 ||
	    memcmp(sp2 + 1, "HTTP/1.", 7) != 0)
		return SBX_PEEK_BAD;
	have_target = target_authority(sp1 + 1, (size_t)(sp2 - sp1 - 1), target);
	if (have_target < 0)
		return SBX_PEEK_BAD;
	for (i = line_end + 1; i < end; ) {
		const unsigned char *l = p + i, *colon;
		size_t ln = (size_t)((const unsigned char *)memchr(l, '\n', end - i) - l);
		i += ln + 1;
		if (ln == 0 || (ln == 1 && l[0] == '\r'))
			break;
		if (l[0] == ' ' || l[0] == '\t')
			return SBX_PEEK_BAD;    /* obsolete line folding */
		colon = memchr(l, ':', ln);
		if (!colon)
			return SBX_PEEK_BAD;
		if (colon - l == 4 && strncasecmp((const char *)l, "host", 4) == 0) {
			const unsigned char *v = colon + 1;
			size_t vn = ln - 5;
			trim(&v, &vn);
			if (found++ || !authority(v, vn, out))
				return SBX_PEEK_BAD;
		}
	}
	if (have_target == 1) {
		/* the target's authority wins over Host (RFC 9112 3.2.2): they
		 * must agree, or each side of us could read another name */
		if (found && strcmp(target, out) != 0)
			return SBX_PEEK_BAD;
		memcpy(out, target, strlen(target) + 1);
		return SBX_PEEK_NAME;
	}
	return found ? SBX_PEEK_NAME : SBX_PEEK_NONAME;
}
