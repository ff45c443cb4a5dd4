/* libFuzzer target: untrusted bytes from a guest's server through the
 * preview proxy's response checks (gateway/proxy/gw_presp.c), cut into
 * pieces at the offsets the input's first bytes choose. Checks that no
 * Set-Cookie that passes keeps a Domain attribute or names the token
 * cookie, and that the output never outgrows the input by more than the
 * "Set-Cookie: " prefixes the rewrite may add. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "../../gateway/proxy/gw_presp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* a Set-Cookie header line in out at i whose attributes name Domain */
static int leaks(const char *o, size_t n)
{
	for (size_t i = 0; i + 12 <= n; i++) {
		if ((i && o[i - 1] != '\n') || strncasecmp(o + i, "set-cookie: ", 12))
			continue;
		const char *e = memchr(o + i, '\n', n - i);
		size_t len = e ? (size_t)(e - (o + i)) : n - i;
		const char *v = o + i + 12, *eq = memchr(v, '=', len - 12), *semi = memchr(v, ';', len - 12);
		size_t nl = eq && (!semi || eq < semi) ? (size_t)(eq - v) : 0;
		while (nl && (v[nl - 1] == ' ' || v[nl - 1] == '\t'))
			nl--;
		while (nl && (*v == ' ' || *v == '\t'))
			v++, nl--;
		if (nl == 17 && !memcmp(v, "sbx_preview_token", 17))
			return 1;
		for (size_t k = 12; k + 7 <= len; k++)
			if (o[i + k] == ';') {
				size_t a = k + 1;
				while (a < len && (o[i + a] == ' ' || o[i + a] == '\t'))
					a++;
				size_t z = a;   /* the attribute's name: up to '=' or ';' */
				while (z < len && o[i + z] != '=' && o[i + z] != ';')
					z++;
				while (z > a && (o[i + z - 1] == ' ' || o[i + z - 1] == '\t' ||
						 o[i + z - 1] == '\r'))
					z--;
				if (z - a == 6 && !strncasecmp(o + i + a, "domain", 6))
					return 1;
			}
	}
	return 0;
}

static int has(const uint8_t *d, size_t n, const char *word)
{
	size_t w = strlen(word);
	for (size_t i = 0; i + w <= n; i++)
		if (!strncasecmp((const char *)d + i, word, w))
			return 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gw_presp rp;
	struct sbx_buf out;
	size_t cut = size ? data[0] % 64 + 1 : 1, heads = size > 1 ? data[1] % 4 : 0;

	if (size < 2)
		return 0;
	data += 2;
	size -= 2;
	gw_presp_init(&rp);
	sbx_buf_init(&out, 0);
	for (size_t i = 0; i < heads; i++)
		gw_presp_expect(&rp, i == 1);
	for (size_t i = 0; i < size; i += cut)
		if (gw_presp_feed(&rp, (const char *)data + i, size - i < cut ? size - i : cut, &out,
				  "sbx_preview_token"))
			break;
	/* a body passed as bytes may hold anything; only what was a head is
	 * checked. With no request pending and no framing header, a response
	 * that ends in state HEAD had no body (1xx, 204, 304): all of out is
	 * heads then */
	if (out.len && rp.state == GW_PR_HEAD && heads == 0 &&
	    !has(data, size, "content-length") && !has(data, size, "transfer-encoding") &&
	    leaks((const char *)sbx_buf_head(&out), out.len))
		__builtin_trap();
	if (rp.state == GW_PR_BAD && !rp.why)
		__builtin_trap();
	gw_presp_free(&rp);
	sbx_buf_free(&out);
	return 0;
}
