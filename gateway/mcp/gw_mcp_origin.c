/* The Origins /mcp accepts. The MCP transport asks servers to check Origin
 * against DNS rebinding: a page of evil.example whose name was made to
 * resolve to this gateway sends `Host: evil.example:8080` and `Origin:
 * http://evil.example:8080`, both the attacker's own, so Origin is never
 * compared with Host. It is compared with what the gateway serves and what
 * the operator configured: the gateway's own URL (the host names of its
 * listen address, with its port and its scheme: https only when the
 * listener is TLS), --public-url (the URL people reach it at by name or
 * through a proxy) and each --mcp-allowed-origins entry. Origins are
 * compared parsed (scheme, lowercase host, port with 80/443 filled in; an
 * IPv6 literal in its canonical form), as browsers serialize them
 * (RFC 6454), so `http://localhost` and `http://localhost:80` are one. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "gw_mcp_origin.h"

struct origin {
	int https;
	char host[256];
	int port;
};

static struct origin listed[GW_MCP_MAX_ORIGINS];   /* --public-url, --mcp-allowed-origins */
static int nlisted;
static char own_hosts[2][INET6_ADDRSTRLEN + 2];    /* host names of the listen address */
static int nown;

/* An IPv6 literal's canonical text in brackets, as a browser writes it. */
static int v6_host(const char *s, size_t n, char *out, size_t size)
{
	char buf[INET6_ADDRSTRLEN];
	struct in6_addr a;

	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (inet_pton(AF_INET6, buf, &a) != 1 || !inet_ntop(AF_INET6, &a, buf, sizeof buf))
		return -1;
	snprintf(out, size, "[%s]", buf);
	return 0;
}

/* s (n bytes) as scheme://host[:port], and a trailing '/' when slash_ok
 * (a URL as people write it). Nothing else: no user, path or query. */
static int parse(const char *s, size_t n, int slash_ok, struct origin *o)
{
	size_t i, h;

	memset(o, 0, sizeof *o);
	if (n > 7 && !strncasecmp(s, "http://", 7)) {
		i = 7;
	} else if (n > 8 && !strncasecmp(s, "https://", 8)) {
		i = 8;
		o->https = 1;
	} else {
		return -1;
	}
	if (slash_ok && s[n - 1] == '/')
		n--;
	h = i;
	if (i < n && s[i] == '[') {
		const char *end = memchr(s + i, ']', n - i);
		if (!end || v6_host(s + i + 1, (size_t)(end - s - i - 1), o->host, sizeof o->host))
			return -1;
		i = (size_t)(end - s) + 1;
	} else {
		while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '.' || s[i] == '-'))
			i++;
		if (i == h || i - h >= sizeof o->host)
			return -1;
		for (size_t k = h; k < i; k++)
			o->host[k - h] = (char)tolower((unsigned char)s[k]);
	}
	o->port = o->https ? 443 : 80;
	if (i < n && s[i] == ':') {
		size_t d = ++i;
		long p = 0;
		while (i < n && i - d < 5 && isdigit((unsigned char)s[i]))
			p = p * 10 + (s[i++] - '0');
		if (i == d || p < 1 || p > 65535)
			return -1;
		o->port = (int)p;
	}
	return i == n ? 0 : -1;
}

static int same(const struct origin *a, const struct origin *b)
{
	return a->https == b->https && a->port == b->port && !strcmp(a->host, b->host);
}

/* The names a browser on this host may use for the listen address. A
 * wildcard serves loopback too; its other addresses and names are not
 * known here (that is what --public-url is for). */
static int own_from_listen(const char *addr)
{
	struct in_addr a4;
	struct in6_addr a6;
	char buf[INET6_ADDRSTRLEN];

	nown = 0;
	if (!strcmp(addr, "localhost"))
		addr = "127.0.0.1";   /* where the gateway listens for it */
	if (inet_pton(AF_INET, addr, &a4) == 1) {
		if (a4.s_addr == htonl(INADDR_ANY) || a4.s_addr == htonl(INADDR_LOOPBACK)) {
			snprintf(own_hosts[nown++], sizeof own_hosts[0], "localhost");
			snprintf(own_hosts[nown++], sizeof own_hosts[0], "127.0.0.1");
		} else if (inet_ntop(AF_INET, &a4, buf, sizeof buf)) {
			snprintf(own_hosts[nown++], sizeof own_hosts[0], "%s", buf);
		}
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &a6) == 1) {
		if (IN6_IS_ADDR_UNSPECIFIED(&a6) || IN6_IS_ADDR_LOOPBACK(&a6)) {
			snprintf(own_hosts[nown++], sizeof own_hosts[0], "localhost");
			snprintf(own_hosts[nown++], sizeof own_hosts[0], "[::1]");
		} else if (!v6_host(addr, strlen(addr), own_hosts[nown], sizeof own_hosts[0])) {
			nown++;
		}
		return 0;
	}
	return -1;
}

static int add_listed(const char *flag, const char *s, size_t n, int slash_ok, struct sbx_err *err)
{
	if (nlisted == GW_MCP_MAX_ORIGINS)
		return sbx_err_set(err, EINVAL, "%s: more than %d origins in all", flag, GW_MCP_MAX_ORIGINS);
	if (parse(s, n, slash_ok, &listed[nlisted]))
		return sbx_err_set(err, EINVAL, "%s: '%.*s' is not an origin: scheme://host[:port] with "
				   "http or https, nothing after the port", flag, (int)(n > 300 ? 300 : n), s);
	nlisted++;
	return 0;
}

int gw_mcp_origins_configure(const char *listen_addr, const char *public_url,
			     const char *allowed, struct sbx_err *err)
{
	nlisted = 0;
	if (own_from_listen(listen_addr))
		return sbx_err_set(err, EINVAL, "--listen-address %s: not a numeric address", listen_addr);
	if (public_url && add_listed("--public-url", public_url, strlen(public_url), 1, err))
		return -1;   /* nothing was added */
	for (const char *p = allowed; p; ) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (add_listed("--mcp-allowed-origins", p, n, 0, err)) {
			nlisted = 0;
			return -1;
		}
		p = comma ? comma + 1 : NULL;
	}
	return 0;
}

int gw_mcp_origin_ok(const char *origin, size_t n, int tls, int port)
{
	struct origin o;

	if (parse(origin, n, 0, &o))
		return 0;
	for (int i = 0; i < nlisted; i++)
		if (same(&o, &listed[i]))
			return 1;
	if (o.https != !!tls || o.port != port)
		return 0;
	for (int i = 0; i < nown; i++)
		if (!strcmp(o.host, own_hosts[i]))
			return 1;
	return 0;
}
