/* API keys: loaded from a keys file (one key per line, '#' comments) and
 * from SANDBOX_API_KEYS (comma-separated). Compared in constant time so a
 * timing probe learns nothing about a key's prefix. Keys are never logged. */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdlib.h>
#include "gw.h"
#include "sbx_log.h"

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
		if (vh->keys[i][0] && ct_equal(vh->keys[i], strlen(vh->keys[i]), k, n) &&
		    found < 0)
			found = i;
	return found;
}

/* ---- stream tokens: what a browser puts in a WebSocket URL instead of
 * the API key. "st.<key index>.<expiry ms>.<mac>", the mac an HMAC-SHA256
 * under a per-process secret over the key's tag, the sandbox id and the
 * expiry: valid for one sandbox, until it expires or the key is revoked
 * (its tag then no longer matches), and only in access_token=. */

static void token_mac(struct gw_vh *vh, int key, const char *sid, long long exp, char out[33])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char msg[GW_KEY_MAX + 128];
	int n = snprintf(msg, sizeof msg, "%s|%s|%lld", vh->key_tags[key], sid, exp);

	if (!HMAC(EVP_sha256(), vh->token_secret, sizeof vh->token_secret,
		  (const unsigned char *)msg, (size_t)n, md, &mdlen))
		mdlen = 0;
	for (unsigned i = 0; i < 16; i++) {
		out[2 * i] = hex[i < mdlen ? md[i] >> 4 : 0];
		out[2 * i + 1] = hex[i < mdlen ? md[i] & 15 : 0];
	}
	out[32] = '\0';
}

int gw_token_make(struct gw_vh *vh, int key, const char *sid, int64_t exp_ms,
		  char *out, size_t outlen)
{
	char mac[33];

	token_mac(vh, key, sid, (long long)exp_ms, mac);
	return snprintf(out, outlen, "st.%d.%lld.%s", key, (long long)exp_ms, mac) < (int)outlen ? 0 : -1;
}

static int token_check(struct gw_vh *vh, const char *t, const char *sid)
{
	char mac[33], *end;
	long key, exp;

	if (!sid || strncmp(t, "st.", 3))
		return -1;
	key = strtol(t + 3, &end, 10);
	if (*end != '.' || key < 0 || key >= vh->nkeys || !vh->keys[key][0])
		return -1;
	exp = strtoll(end + 1, &end, 10);
	if (*end != '.' || exp < gw_now_ms())
		return -1;
	token_mac(vh, (int)key, sid, exp, mac);
	return ct_equal(mac, 32, end + 1, strlen(end + 1)) ? (int)key : -1;
}

int gw_auth_check(struct gw_vh *vh, struct lws *wsi, int allow_query, const char *sid)
{
	char buf[GW_KEY_MAX + 16];
	int n = lws_hdr_copy(wsi, buf, sizeof buf, WSI_TOKEN_HTTP_AUTHORIZATION);
	if (n > 7 && !strncasecmp(buf, "Bearer ", 7))
		return match(vh, buf + 7, (size_t)n - 7);
	if (allow_query) {
		const char *v = lws_get_urlarg_by_name(wsi, "access_token=", buf, (int)sizeof buf);
		if (v && !strncmp(v, "st.", 3))
			return token_check(vh, v, sid);
		if (v)
			return match(vh, v, strlen(v));
	}
	return -1;
}

/* ---- reloading keys (SIGHUP) ---- */

static int has_key(const struct gw_vh *nv, const char *k)
{
	for (int i = 0; i < nv->nkeys; i++)
		if (!strcmp(nv->keys[i], k))
			return 1;
	return 0;
}

int gw_auth_reload(struct gw_vh *vh, const char *keys_file, const char *env)
{
	static struct gw_vh nv;   /* only its key list is used */
	struct sbx_err err = { 0 };
	int added = 0, removed = 0;

	memset(nv.keys, 0, sizeof nv.keys);
	nv.nkeys = 0;
	if ((keys_file && gw_auth_load_file(&nv, keys_file, &err)) ||
	    (env && gw_auth_add_list(&nv, env))) {
		sbx_err_log("keys not reloaded: %s", err.msg[0] ? err.msg : "SANDBOX_API_KEYS");
		return -1;
	}
	/* Revoked keys leave an empty slot; their sandboxes become nobody's
	 * and their open streams end. Slots keep their index, which the owner
	 * table and tokens refer to. */
	for (int i = 0; i < vh->nkeys; i++)
		if (vh->keys[i][0] && !has_key(&nv, vh->keys[i])) {
			explicit_bzero(vh->keys[i], sizeof vh->keys[i]);
			memset(vh->key_tags[i], 0, sizeof vh->key_tags[i]);
			gw_owner_forget_key(vh, i);
			gw_ws_end_key(vh, i);
			removed++;
		}
	for (int j = 0; j < nv.nkeys; j++) {
		int i;
		if (match(vh, nv.keys[j], strlen(nv.keys[j])) >= 0)
			continue;
		for (i = 0; i < vh->nkeys && vh->keys[i][0]; i++)
			;
		if (i == vh->nkeys) {
			if (vh->nkeys >= GW_MAX_KEYS) {
				sbx_err_log("keys: no room for another key (%d slots)", GW_MAX_KEYS);
				break;
			}
			vh->nkeys++;
		}
		memcpy(vh->keys[i], nv.keys[j], sizeof vh->keys[i]);
		memcpy(vh->key_tags[i], nv.key_tags[j], sizeof vh->key_tags[i]);
		vh->creating[i] = 0;
		added++;
	}
	explicit_bzero(nv.keys, sizeof nv.keys);
	sbx_info("keys reloaded: %d added, %d revoked", added, removed);
	return 0;
}
