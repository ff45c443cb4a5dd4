#include "sbx_tarpath.h"

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
