#include "sbx_tarpath.h"

#include <stdio.h>
#include <string.h>

int sbx_tar_path_clean(const char *name, char *out, size_t n)
{
	size_t o = 0;
	const char *p = name;

	if (!*name || *name == '/')
		return -1;
	while (*p) {
		const char *s = p;
		size_t len = strcspn(s, "/");
		p = s + len;
		if (*p == '/')
			p++;
		if (!len || (len == 1 && s[0] == '.'))
			continue;
		if (len == 2 && s[0] == '.' && s[1] == '.')
			return -1;
		if (o + len + 2 > n)
			return -1;
		if (o)
			out[o++] = '/';
		memcpy(out + o, s, len);
		o += len;
	}
	if (!o)
		return -1;
	out[o] = '\0';
	return 0;
}

int sbx_tar_number(const unsigned char *p, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;

	if (p[0] & 0x80) {   /* base-256 (GNU) */
		if (p[0] != 0x80)
			return -1;
		for (i = 1; i < n; i++) {
			if (v >> 55)
				return -1;
			v = v << 8 | p[i];
		}
		*out = v;
		return 0;
	}
	while (i < n && p[i] == ' ')
		i++;
	for (; i < n && p[i] >= '0' && p[i] <= '7'; i++) {
		if (v >> 60)
			return -1;
		v = v * 8 + (uint64_t)(p[i] - '0');
	}
	if (i < n && p[i] != ' ' && p[i] != '\0')
		return -1;
	*out = v;
	return 0;
}

int sbx_tar_checksum_ok(const unsigned char *h)
{
	uint64_t want;
	unsigned long sum = 0;

	if (sbx_tar_number(h + 148, 8, &want))
		return 0;
	for (int i = 0; i < 512; i++)
		sum += i >= 148 && i < 156 ? ' ' : h[i];
	return sum == want;
}

void sbx_tar_header_name(const unsigned char *h, char *out, size_t n)
{
	char name[101], prefix[156];

	memcpy(name, h, 100);
	name[100] = '\0';
	memcpy(prefix, h + 345, 155);
	prefix[155] = '\0';
	/* only ustar headers have a prefix field; in old ones it is data */
	if (!memcmp(h + 257, "ustar", 5) && prefix[0])
		snprintf(out, n, "%s/%s", prefix, name);
	else
		snprintf(out, n, "%s", name);
}
