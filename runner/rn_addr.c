#include "rn_addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

/* 1..65535 in decimal digits only: no sign, no spaces, nothing after. */
static int parse_port(const char *p, unsigned short *port)
{
	unsigned long v = 0;

	if (!*p || strlen(p) > 5)
		return -1;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (v < 1 || v > 65535)
		return -1;
	*port = (unsigned short)v;
	return 0;
}

int rn_addr_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len,
		  struct sbx_err *err)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *colon, *h = s;
	size_t hlen;
	unsigned short port;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':')
			return sbx_err_set(err, EINVAL, "\"%.64s\": an IPv6 address goes in "
					   "brackets, then :PORT (e.g. [::]:7443)", s);
		h = s + 1;
		hlen = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return sbx_err_set(err, EINVAL, "\"%.64s\": expected ADDR:PORT "
					   "(e.g. 0.0.0.0:7443)", s);
		if (memchr(s, ':', (size_t)(colon - s)))
			return sbx_err_set(err, EINVAL, "\"%.64s\": an IPv6 address goes in "
					   "brackets (e.g. [::]:7443)", s);
		hlen = (size_t)(colon - s);
	}
	if (parse_port(colon + 1, &port) < 0)
		return sbx_err_set(err, EINVAL, "\"%.64s\": the port must be 1..65535", s);
	if (hlen == 0 || hlen >= sizeof(host))
		return sbx_err_set(err, EINVAL, "\"%.64s\": missing or overlong address", s);
	memcpy(host, h, hlen);
	host[hlen] = 0;
	if (s[0] == '[') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			return sbx_err_set(err, EINVAL, "\"%.64s\": not a numeric IPv6 address",
					   s);
		a->sin6_family = AF_INET6;
		a->sin6_port = htons(port);
		*len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return sbx_err_set(err, EINVAL, "\"%.64s\": not a numeric IPv4 address "
					   "(names are not resolved)", s);
		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		*len = sizeof(*a);
	}
	return 0;
}
