#include "sbx_hs.h"

#include <string.h>

long sbx_hs_parse_connect(const void *p, size_t n, int *port)
{
	const char *s = p, *nl = memchr(s, '\n', n < SBX_HS_MAX ? n : SBX_HS_MAX);
	size_t len, i;
	long v = 0;

	if (!nl)
		return n >= SBX_HS_MAX ? -1 : 0;
	len = (size_t)(nl - s);
	if (len && s[len - 1] == '\r')
		len--;
	/* digits only, no sign, no spaces, no leading zero: one spelling */
	if (len < 9 || len > 13 || memcmp(s, "CONNECT ", 8) || s[8] == '0')
		return -1;
	for (i = 8; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (v < 1 || v > 65535)
		return -1;
	*port = (int)v;
	return (long)(nl - s) + 1;
}
