#include "sbx_id.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

static const char b32[] = "abcdefghijklmnopqrstuvwxyz234567";

int sbx_id_new(const char *prefix, char *out, size_t outlen)
{
	unsigned char rnd[SBX_ID_RANDOM_CHARS];
	size_t pl = strlen(prefix), i;
	ssize_t got = 0;

	if (outlen < pl + SBX_ID_RANDOM_CHARS + 1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	while ((size_t)got < sizeof(rnd)) {
		ssize_t r = getrandom(rnd + got, sizeof(rnd) - (size_t)got, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		got += r;
	}
	memcpy(out, prefix, pl);
	/* One random byte per character, 5 bits used: simple and unbiased. */
	for (i = 0; i < SBX_ID_RANDOM_CHARS; i++)
		out[pl + i] = b32[rnd[i] & 31];
	out[pl + SBX_ID_RANDOM_CHARS] = '\0';
	return 0;
}

int sbx_id_valid(const char *prefix, const char *s)
{
	size_t pl = strlen(prefix), i;

	if (strncmp(s, prefix, pl) != 0 || strlen(s) != pl + SBX_ID_RANDOM_CHARS)
		return 0;
	for (i = pl; s[i]; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '2' && s[i] <= '7')))
			return 0;
	return 1;
}
