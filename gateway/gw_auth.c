/* API keys: loaded from a keys file (one key per line, '#' comments) and
 * from SANDBOX_API_KEYS (comma-separated). Compared in constant time so a
 * timing probe learns nothing about a key's prefix. Keys are never logged. */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <errno.h>
#include <openssl/evp.h>
#include "gw.h"

/* The owner tag a runner keeps for a key's sandboxes: 128 bits of
 * SHA-256 over a fixed prefix and the key, so the runner (and its state
 * files) never hold the key itself. */
static void tag(const char *key, char out[33])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	if (!c || !EVP_DigestInit_ex(c, EVP_sha256(), NULL) ||
	    !EVP_DigestUpdate(c, "sandbox-owner-v1:", 17) ||
	    !EVP_DigestUpdate(c, key, strlen(key)) || !EVP_DigestFinal_ex(c, md, &mdlen))
		mdlen = 0;
	EVP_MD_CTX_free(c);
	for (unsigned i = 0; i < 16; i++) {
		out[2 * i] = hex[i < mdlen ? md[i] >> 4 : 0];
		out[2 * i + 1] = hex[i < mdlen ? md[i] & 15 : 0];
	}
	out[32] = '\0';
}

static int add_key(struct gw_vh *vh, const char *k, size_t n)
{
	while (n && (k[0] == ' ' || k[0] == '\t')) { k++; n--; }
	while (n && (k[n - 1] == ' ' || k[n - 1] == '\t' || k[n - 1] == '\r' ||
		     k[n - 1] == '\n'))
		n--;
	if (!n || k[0] == '#')
		return 0;
	if (n >= GW_KEY_MAX || vh->nkeys >= GW_MAX_KEYS)
		return -1;
	memcpy(vh->keys[vh->nkeys], k, n);
	vh->keys[vh->nkeys][n] = '\0';
	tag(vh->keys[vh->nkeys], vh->key_tags[vh->nkeys]);
	vh->nkeys++;
	return 0;
}

int gw_auth_add_list(struct gw_vh *vh, const char *csv)
{
	const char *p = csv;
	while (p && *p) {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		if (add_key(vh, p, n))
			return -1;
		p = c ? c + 1 : NULL;
	}
	return 0;
}

int gw_auth_load_file(struct gw_vh *vh, const char *path, struct sbx_err *err)
{
	char line[GW_KEY_MAX + 8];
	FILE *f = fopen(path, "re");
	if (!f)
		return sbx_err_sys(err, "open keys file %s", path);
	while (fgets(line, sizeof line, f))
		if (add_key(vh, line, strlen(line))) {
			fclose(f);
			return sbx_err_set(err, EINVAL, "keys file %s: key too long or too many keys", path);
		}
	fclose(f);
	return 0;
}

/* 1 when a and b are equal; time depends only on the lengths. */
static int ct_equal(const char *a, size_t an, const char *b, size_t bn)
{
	unsigned char d = (unsigned char)(an != bn);
	size_t n = an < bn ? an : bn;
	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

static int match(struct gw_vh *vh, const char *k, size_t n)
{
	int found = -1;
	for (int i = 0; i < vh->nkeys; i++)
		if (ct_equal(vh->keys[i], strlen(vh->keys[i]), k, n) && found < 0)
			found = i;
	return found;
}

int gw_auth_check(struct gw_vh *vh, struct lws *wsi, int allow_query)
{
	char buf[GW_KEY_MAX + 16];
	int n = lws_hdr_copy(wsi, buf, sizeof buf, WSI_TOKEN_HTTP_AUTHORIZATION);
	if (n > 7 && !strncasecmp(buf, "Bearer ", 7))
		return match(vh, buf + 7, (size_t)n - 7);
	if (allow_query) {
		const char *v = lws_get_urlarg_by_name(wsi, "access_token=", buf, (int)sizeof buf);
		if (v)
			return match(vh, v, strlen(v));
	}
	return -1;
}
