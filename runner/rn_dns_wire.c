#include "rn_dns_wire.h"

#include <string.h>
#include <strings.h>

static unsigned be16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static void put16(unsigned char *p, unsigned v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

/* An uncompressed name at p[*i..n) into out (dotted, lower-case); *i past it. */
static int read_plain_name(const unsigned char *p, size_t n, size_t *i, char *out)
{
	size_t o = 0;

	for (;;) {
		size_t len;
		if (*i >= n)
			return -1;
		len = p[*i];
		if (len == 0) {
			(*i)++;
			break;
		}
		if (len > 63 || n - *i - 1 < len || o + len + 1 > 253)
			return -1;
		if (o)
			out[o++] = '.';
		for (size_t k = 0; k < len; k++) {
			unsigned char c = p[*i + 1 + k];
			if (c >= 'A' && c <= 'Z')
				c = (unsigned char)(c + 32);
			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
				return -1;
			out[o++] = (char)c;
		}
		*i += 1 + len;
	}
	out[o] = '\0';
	return 0;
}

int rn_dns_parse_query(const unsigned char *p, size_t n, struct rn_dns_query *q)
{
	size_t i = 12, start;

	if (n < 12 + 5 || n > 4096)
		return -1;
	q->id = (uint16_t)be16(p);
	q->flags = (uint16_t)be16(p + 2);
	/* a query (QR 0), standard opcode, one question, no answers */
	if (q->flags & 0x8000 || (q->flags >> 11 & 15) != 0 || be16(p + 4) != 1 ||
	    be16(p + 6) != 0 || be16(p + 8) != 0 || be16(p + 10) > 1)
		return -1;
	start = i;
	if (read_plain_name(p, n, &i, q->name) < 0 || n - i < 4)
		return -1;
	q->qtype = (uint16_t)be16(p + i);
	q->qclass = (uint16_t)be16(p + i + 2);
	i += 4;
	q->question = p + start;
	q->question_len = i - start;
	return 0;
}

size_t rn_dns_answer(const struct rn_dns_query *q, int rcode, const uint32_t *addrs,
		     int n_addrs, uint32_t ttl, unsigned char *out)
{
	size_t o = 12;

	if (rcode != RN_DNS_NOERROR || q->qtype != RN_DNS_T_A)
		n_addrs = 0;
	if (12 + q->question_len + (size_t)n_addrs * 16 > RN_DNS_MSG_MAX)
		n_addrs = 0;        /* cannot happen for RN_DNS_MAX_ADDRS and a name <= 255 */
	put16(out, q->id);
	/* QR, the query's RD, RA, rcode */
	put16(out + 2, 0x8000 | (q->flags & 0x0100) | 0x0080 | (unsigned)(rcode & 15));
	put16(out + 4, 1);
	put16(out + 6, (unsigned)n_addrs);
	put16(out + 8, 0);
	put16(out + 10, 0);
	memcpy(out + o, q->question, q->question_len);
	o += q->question_len;
	for (int k = 0; k < n_addrs; k++) {
		put16(out + o, 0xc00c);          /* the question's name */
		put16(out + o + 2, RN_DNS_T_A);
		put16(out + o + 4, 1);
		out[o + 6] = (unsigned char)(ttl >> 24);
		out[o + 7] = (unsigned char)(ttl >> 16);
		out[o + 8] = (unsigned char)(ttl >> 8);
		out[o + 9] = (unsigned char)ttl;
		put16(out + o + 10, 4);
		memcpy(out + o + 12, &addrs[k], 4);
		o += 16;
	}
	return o;
}

size_t rn_dns_build_a_query(uint16_t id, const char *name, unsigned char *out)
{
	size_t o = 12, nl = strlen(name);
	const char *s = name;

	if (nl == 0 || nl > 253)
		return 0;
	memset(out, 0, 12);
	put16(out, id);
	put16(out + 2, 0x0100);     /* RD */
	put16(out + 4, 1);
	while (*s) {
		const char *dot = strchr(s, '.');
		size_t len = dot ? (size_t)(dot - s) : strlen(s);
		if (len == 0 || len > 63)
			return 0;
		out[o++] = (unsigned char)len;
		memcpy(out + o, s, len);
		o += len;
		s += len + (dot ? 1 : 0);
		if (dot && !*s)
			return 0;
	}
	out[o++] = 0;
	put16(out + o, RN_DNS_T_A);
	put16(out + o + 2, 1);
	return o + 4;
}

/* Past a possibly compressed name at p[*i..n). */
static int skip_name(const unsigned char *p, size_t n, size_t *i)
{
	for (int hops = 0; hops < 128; hops++) {
		if (*i >= n)
			return -1;
		if ((p[*i] & 0xc0) == 0xc0) {
			if (n - *i < 2)
				return -1;
			*i += 2;
			return 0;
		}
		if (p[*i] & 0xc0)
			return -1;
		if (p[*i] == 0) {
			(*i)++;
			return 0;
		}
		if (n - *i - 1 < p[*i])
			return -1;
		*i += 1 + p[*i];
	}
	return -1;
}

int rn_dns_parse_a_reply(const unsigned char *p, size_t n, uint16_t id, const char *name,
			 uint32_t *addrs, int *n_addrs, uint32_t *ttl)
{
	char qname[256];
	size_t i = 12;
	unsigned an;

	*n_addrs = 0;
	*ttl = 300;
	if (n < 12 || be16(p) != id || !(be16(p + 2) & 0x8000) || be16(p + 4) != 1)
		return -1;
	if (read_plain_name(p, n, &i, qname) < 0 || strcasecmp(qname, name) != 0 ||
	    n - i < 4 || be16(p + i) != RN_DNS_T_A)
		return -1;
	i += 4;
	an = be16(p + 6);
	for (unsigned k = 0; k < an; k++) {
		unsigned type, cls, rdlen;
		uint32_t t;
		if (skip_name(p, n, &i) < 0 || n - i < 10)
			return -1;
		type = be16(p + i);
		cls = be16(p + i + 2);
		t = (uint32_t)p[i + 4] << 24 | (uint32_t)p[i + 5] << 16 |
		    (uint32_t)p[i + 6] << 8 | p[i + 7];
		rdlen = be16(p + i + 8);
		i += 10;
		if (n - i < rdlen)
			return -1;
		if (type == RN_DNS_T_A && cls == 1 && rdlen == 4 && *n_addrs < RN_DNS_MAX_ADDRS) {
			memcpy(&addrs[(*n_addrs)++], p + i, 4);
			if (t < *ttl)
				*ttl = t;
		}
		i += rdlen;
	}
	return be16(p + 2) & 15;
}
