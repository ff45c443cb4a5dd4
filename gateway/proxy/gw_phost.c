/* Preview host names: `<port>-<id>.<domain>`. Ids are `sbx_<runner>_<rand>`
 * of [a-z0-9_] (docs/runner.md: they contain no '-' for this reason).
 * Strict on purpose: one spelling per preview, so one browser origin. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "gw_proxy.h"

static int lc(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

int gw_phost_parse(const char *host, size_t n, const char *domain,
		   int *port, char *sid, size_t sidsz)
{
	size_t dn = strlen(domain), i = 0;
	const char *colon = memchr(host, ':', n);
	if (colon) {
		/* a port and nothing else: the Host goes into redirects */
		size_t k = (size_t)(colon - host) + 1;
		if (n - k < 1 || n - k > 5)
			return -1;
		for (; k < n; k++)
			if (host[k] < '0' || host[k] > '9')
				return -1;
		n = (size_t)(colon - host);
	}
	if (!dn || n < dn + 1 || host[n - dn - 1] != '.')
		return -1;
	for (size_t k = 0; k < dn; k++)
		if (lc((unsigned char)host[n - dn + k]) != lc((unsigned char)domain[k]))
			return -1;
	n -= dn + 1;
	long p = 0;
	while (i < n && host[i] >= '0' && host[i] <= '9' && i < 5)
		p = p * 10 + (host[i++] - '0');
	if (i == 0 || host[0] == '0' || p < 1 || p > 65535 || i >= n || host[i] != '-')
		return -1;
	i++;
	size_t idn = n - i;
	if (idn < 5 || idn >= sidsz || strncmp(host + i, "sbx_", 4) != 0)
		return -1;
	/* ids are lower case: one spelling per sandbox, so one origin */
	for (size_t k = 0; k < idn; k++) {
		int c = (unsigned char)host[i + k];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
			return -1;
		sid[k] = (char)c;
	}
	sid[idn] = '\0';
	if (p == 1024)   /* the agent's own protocol port: never a preview */
		return -1;
	*port = (int)p;
	return 0;
}

int gw_phost_claim(const char *host, size_t n, const char *domain)
{
	size_t dn = strlen(domain);
	const char *colon = memchr(host, ':', n), *dot;
	if (colon)
		n = (size_t)(colon - host);
	if (dn && n > dn + 1 && host[n - dn - 1] == '.' &&
	    !strncasecmp(host + n - dn, domain, dn))
		return 1;
	dot = memchr(host, '.', n);
	size_t label = dot ? (size_t)(dot - host) : n;
	for (size_t i = 0; i + 5 <= label; i++)
		if (!strncasecmp(host + i, "-sbx_", 5))
			return 1;
	return 0;
}

/* The key a client address is counted under: an IPv4 address as it is,
 * an IPv6 one by its /64, since one end host commonly holds a whole /64
 * and could otherwise open the per-client cap once per address. */
void gw_peer_key(const char *peer, char *out, size_t n)
{
	struct in6_addr a;

	if (strchr(peer, ':') && inet_pton(AF_INET6, peer, &a) == 1) {
		memset(a.s6_addr + 8, 0, 8);
		if (inet_ntop(AF_INET6, &a, out, (socklen_t)n)) {
			strncat(out, "/64", n - strlen(out) - 1);
			return;
		}
	}
	snprintf(out, n, "%s", peer);
}
