/* Query arguments of a connection: every one the gateway reads goes
 * through here (the request forms that answer a refusal: api/gw_query.c).
 *
 * lws_get_urlarg_by_name() stops at the first argument longer than the
 * caller's buffer and answers "absent", so `?path=<long>&mode=0600` lost
 * its mode and the file was written 0644. Here every argument is looked at
 * whole, and nothing is dropped: an argument longer than its buffer, one
 * given twice, one the endpoint does not take, or a value that does not
 * parse is refused with 422 `invalid` naming the argument (docs/api.md,
 * "Query arguments"). lws has URL-decoded each argument already: one
 * "name=value" fragment of WSI_TOKEN_HTTP_URI_ARGS per '&' or ';'. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gw.h"

/* Any fragment fits (lws keeps their lengths in 16 bits), so a failed
 * copy means there is no such fragment. One service thread: static. */
static char frag[65536 + 1];

#define SAFE_NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-."

/* Fragment i in frag, its length; -1 when there is none. */
static int fragment(struct lws *wsi, int i)
{
	return lws_hdr_copy_fragment(wsi, frag, (int)sizeof frag, WSI_TOKEN_HTTP_URI_ARGS, i);
}

/* Length of the name part of frag (n bytes): up to '=' or its end. */
static size_t name_len(size_t n)
{
	const char *eq = memchr(frag, '=', n);
	return eq ? (size_t)(eq - frag) : n;
}

int gw_query_get(struct lws *wsi, const char *name, char *buf, size_t size,
		 char *why, size_t whylen)
{
	size_t nl = strlen(name);
	int n, found = 0;

	for (int i = 0; (n = fragment(wsi, i)) >= 0; i++) {
		size_t vl;
		if (name_len((size_t)n) != nl || memcmp(frag, name, nl))
			continue;
		if (found) {
			snprintf(why, whylen, "query argument %s is given twice", name);
			return -1;
		}
		found = 1;
		vl = (size_t)n > nl ? (size_t)n - nl - 1 : 0;   /* "name" alone: "" */
		if (vl >= size) {
			snprintf(why, whylen, "query argument %s is longer than %zu bytes",
				 name, size - 1);
			return -1;
		}
		memcpy(buf, frag + n - vl, vl);
		buf[vl] = '\0';
	}
	return found;
}

int gw_query_known(struct lws *wsi, const char *const *names, char *why, size_t whylen)
{
	int n;

	for (int i = 0; (n = fragment(wsi, i)) >= 0; i++) {
		size_t nl = name_len((size_t)n);
		const char *const *p = names;

		if (!n)
			continue;   /* "?", "&&" or a trailing '&': nothing was said */
		while (*p && (strlen(*p) != nl || memcmp(frag, *p, nl)))
			p++;
		if (!*p) {
			/* the name goes into JSON error bodies: plain characters only */
			for (size_t k = 0; k < nl; k++)
				if (!strchr(SAFE_NAME_CHARS, frag[k]) || !frag[k])
					frag[k] = '?';
			snprintf(why, whylen, "unknown query argument %.*s", nl > 64 ? 64 : (int)nl,
				 frag);
			return -1;
		}
	}
	return 0;
}

int gw_query_num(struct lws *wsi, const char *name, int64_t lo, int64_t hi, int64_t *out,
		 char *why, size_t whylen)
{
	char b[GW_QUERY_NUM_MAX + 1], *end;
	long long x;
	int rc = gw_query_get(wsi, name, b, sizeof b, why, whylen);

	if (rc <= 0)
		return rc;
	errno = 0;
	x = strtoll(b, &end, 10);
	if (b[0] < '0' || b[0] > '9' || *end || errno || x < lo || x > hi) {
		snprintf(why, whylen, "query argument %s must be a whole number %lld..%lld",
			 name, (long long)lo, (long long)hi);
		return -1;
	}
	*out = x;
	return 1;
}
