/* Parse a runner address (gw_runner_addr.h). Only numeric addresses: a
 * host name is resolved by discovery, which then hands the numbers here,
 * so a parse never blocks the event loop on DNS. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gw_runner_addr.h"

static int parse_port(const char *s, const char *text, struct sbx_err *err)
{
	char *end;
	long p;

	if (*s < '0' || *s > '9')
		return sbx_err_set(err, EINVAL, "runner address %s: no port after ':'", text);
	errno = 0;
	p = strtol(s, &end, 10);
	if (errno || *end || p < 1 || p > 65535)
		return sbx_err_set(err, EINVAL, "runner address %s: port must be 1 to 65535", text);
	return (int)p;
}

static int parse_unix(struct gw_runner *rn, const char *path, const char *text,
		      struct sbx_err *err)
{
	if (path[0] != '/')
		return sbx_err_set(err, EINVAL, "runner address %s: a socket path must be absolute",
				   text);
	if (strlen(path) >= sizeof rn->path)
		return sbx_err_set(err, ENAMETOOLONG, "runner address %s: socket path longer than %zu",
				   text, sizeof rn->path - 1);
	rn->kind = GW_RUNNER_UNIX;
	snprintf(rn->path, sizeof rn->path, "%s", path);
	snprintf(rn->addr, sizeof rn->addr, "unix:%s", path);
	memset(&rn->sa, 0, sizeof rn->sa);
	rn->salen = 0;
	return 0;
}

int gw_runner_socket_is_tcp(const char *text)
{
	return text && text[0] != '/' && strncmp(text, "unix:", 5) && strchr(text, ':');
}

int gw_runner_parse(struct gw_runner *rn, const char *text, struct sbx_err *err)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *colon, *h;
	size_t hlen;
	int v6, port;

	if (!text || !*text)
		return sbx_err_set(err, EINVAL, "empty runner address");
	if (!strncmp(text, "unix:", 5))
		return parse_unix(rn, text + 5, text, err);
	if (text[0] == '/')
		return parse_unix(rn, text, text, err);
	v6 = text[0] == '[';
	if (v6) {
		const char *close = strchr(text, ']');
		if (!close || close[1] != ':')
			return sbx_err_set(err, EINVAL, "runner address %s: want [v6 address]:port", text);
		h = text + 1;
		hlen = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strchr(text, ':');
		if (!colon || strchr(colon + 1, ':'))
			return sbx_err_set(err, EINVAL, "runner address %s: want host:port, [v6]:port "
					   "or unix:/path", text);
		h = text;
		hlen = (size_t)(colon - text);
	}
	if (!hlen || hlen >= sizeof host)
		return sbx_err_set(err, EINVAL, "runner address %s: no address before the port", text);
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	if ((port = parse_port(colon + 1, text, err)) < 0)
		return -1;
	memset(&rn->sa, 0, sizeof rn->sa);
	if (v6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&rn->sa;
		if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1)
			return sbx_err_set(err, EINVAL, "runner address %s: %s is not an IPv6 address",
					   text, host);
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		rn->salen = sizeof *s6;
		snprintf(rn->addr, sizeof rn->addr, "[%s]:%d", host, port);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&rn->sa;
		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
			return sbx_err_set(err, EINVAL, "runner address %s: %s is not an IPv4 address "
					   "(names are resolved by discovery, not here)", text, host);
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		rn->salen = sizeof *s4;
		snprintf(rn->addr, sizeof rn->addr, "%s:%d", host, port);
	}
	rn->kind = GW_RUNNER_TLS;
	rn->path[0] = '\0';
	return 0;
}
