/* TLS ClientHello SNI extraction (RFC 8446 4.1.2, RFC 6066 3). Every
 * length read is checked against the bytes that contain it. */
#include <string.h>
#include "gw_sni.h"

struct rd {
	const unsigned char *p;
	size_t n, i;
};

static int take(struct rd *r, size_t k, const unsigned char **out)
{
	if (r->n - r->i < k)
		return -1;
	*out = r->p + r->i;
	r->i += k;
	return 0;
}

static long num(struct rd *r, size_t k)
{
	const unsigned char *b;
	if (take(r, k, &b))
		return -1;
	long v = 0;
	for (size_t i = 0; i < k; i++)
		v = v << 8 | b[i];
	return v;
}

/* Skip a vector with a k-byte length prefix. */
static int skip_vec(struct rd *r, size_t k)
{
	const unsigned char *b;
	long len = num(r, k);
	return len < 0 ? -1 : take(r, (size_t)len, &b);
}

static int server_name(const unsigned char *p, size_t n, char *out, size_t outsz)
{
	struct rd r = { p, n, 0 };
	long list = num(&r, 2);
	if (list < 0 || (size_t)list > n - 2)
		return -1;
	r.n = 2 + (size_t)list;
	while (r.i < r.n) {
		long type = num(&r, 1), len = num(&r, 2);
		const unsigned char *name;
		if (type < 0 || len < 0 || take(&r, (size_t)len, &name))
			return -1;
		if (type != 0)
			continue;
		if (len == 0 || (size_t)len >= outsz)
			return -1;
		for (long i = 0; i < len; i++) {
			unsigned char c = name[i];
			if (c >= 'A' && c <= 'Z')
				c = (unsigned char)(c + 32);
			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			      c == '-' || c == '.' || c == '_'))
				return -1;
			out[i] = (char)c;
		}
		out[len] = '\0';
		return 1;
	}
	return -1;
}

int gw_sni_parse(const unsigned char *p, size_t n, char *out, size_t outsz)
{
	if (n < 5)
		return n && p[0] != 0x16 ? -1 : 0;
	if (p[0] != 0x16 || p[1] != 0x03)
		return -1;
	size_t rec = (size_t)p[3] << 8 | p[4];
	if (rec < 4 || rec > 16384)
		return -1;
	if (n - 5 < rec)
		return 0;
	struct rd r = { p + 5, rec, 0 };
	const unsigned char *b;
	if (num(&r, 1) != 1)          /* ClientHello */
		return -1;
	long hlen = num(&r, 3);
	if (hlen < 0)
		return -1;
	if ((size_t)hlen < r.n - r.i)
		r.n = r.i + (size_t)hlen;  /* a ClientHello split over records: look at this part */
	if (take(&r, 2 + 32, &b) || skip_vec(&r, 1) || skip_vec(&r, 2) || skip_vec(&r, 1))
		return -1;
	long ext = num(&r, 2);
	if (ext < 0)
		return -1;
	if ((size_t)ext < r.n - r.i)
		r.n = r.i + (size_t)ext;
	while (r.i < r.n) {
		long type = num(&r, 2), len = num(&r, 2);
		if (type < 0 || len < 0 || take(&r, (size_t)len, &b))
			return -1;
		if (type == 0)
			return server_name(b, (size_t)len, out, outsz);
	}
	return -1;
}
