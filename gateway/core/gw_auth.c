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
#include "gw_hooks.h"
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
 * the API key. "st.<key index>.<expiry ms>.<scope>.<mac>", the mac an
 * HMAC-SHA256 under a per-process secret over the key's tag, the sandbox
 * id, the expiry and the scope (GW_SCOPE_* bits): valid for one sandbox
 * and only for what its scope allows, until it expires or the key is
 * revoked (its tag then no longer matches), and only in access_token=. */

static void token_mac(struct gw_vh *vh, int key, const char *sid, long long exp,
		      unsigned scope, char out[33])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char msg[GW_KEY_MAX + 160];
	int n = snprintf(msg, sizeof msg, "%s|%s|%lld|%u", vh->key_tags[key], sid, exp, scope);

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
		  unsigned scope, char *out, size_t outlen)
{
	char mac[33];

	token_mac(vh, key, sid, (long long)exp_ms, scope, mac);
	return snprintf(out, outlen, "st.%d.%lld.%u.%s", key, (long long)exp_ms, scope,
			mac) < (int)outlen ? 0 : -1;
}

static int token_check(struct gw_vh *vh, const char *t, const char *sid, unsigned *scope)
{
	char mac[33], *end;
	long key, exp;
	unsigned long sc;

	if (!sid || strncmp(t, "st.", 3))
		return -1;
	key = strtol(t + 3, &end, 10);
	if (*end != '.' || key < 0 || key >= vh->nkeys || !vh->keys[key][0])
		return -1;
	exp = strtoll(end + 1, &end, 10);
	if (*end != '.' || exp < sbx_now_ms())
		return -1;
	sc = strtoul(end + 1, &end, 10);
	if (*end != '.' || !sc || sc > GW_SCOPE_ALL)
		return -1;
	token_mac(vh, (int)key, sid, exp, (unsigned)sc, mac);
	if (!ct_equal(mac, 32, end + 1, strlen(end + 1)))
		return -1;
	*scope = (unsigned)sc;
	return (int)key;
}

int gw_auth_check(struct gw_vh *vh, struct lws *wsi, int allow_query, const char *sid,
		  unsigned *scope)
{
	char buf[GW_KEY_MAX + 16], why[160];
	int n = lws_hdr_copy(wsi, buf, sizeof buf, WSI_TOKEN_HTTP_AUTHORIZATION);

	*scope = 0;
	if (n > 7 && !strncasecmp(buf, "Bearer ", 7)) {
		*scope = GW_SCOPE_ALL;
		return match(vh, buf + 7, (size_t)n - 7);
	}
	if (allow_query) {
		/* a key is shorter than GW_KEY_MAX, and so is a token */
		n = gw_query_get(wsi, "access_token", buf, GW_KEY_MAX, why, sizeof why);
		if (n < 0)
			return -2;
		if (n && !strncmp(buf, "st.", 3))
			return token_check(vh, buf, sid, scope);
		if (n) {
			*scope = GW_SCOPE_ALL;
			return match(vh, buf, strlen(buf));
		}
	}
	return -1;
}

int gw_auth_metrics(struct gw_vh *vh, struct lws *wsi)
{
	char buf[GW_KEY_MAX + 16];
	int n = lws_hdr_copy(wsi, buf, sizeof buf, WSI_TOKEN_HTTP_AUTHORIZATION);

	return vh->metrics_key[0] && n > 7 && !strncasecmp(buf, "Bearer ", 7) &&
	       ct_equal(vh->metrics_key, strlen(vh->metrics_key), buf + 7, (size_t)n - 7);
}

/* The metrics key: the first line of file (trimmed), else env; none
 * leaves /metrics closed. */
int gw_auth_metrics_key(struct gw_vh *vh, const char *file, const char *env,
			struct sbx_err *err)
{
	char line[GW_KEY_MAX + 8] = "";
	size_t n;

	if (file) {
		FILE *f = fopen(file, "re");
		if (!f)
			return sbx_err_sys(err, "open metrics key file %s", file);
		if (!fgets(line, sizeof line, f))
			line[0] = '\0';
		fclose(f);
	} else if (env) {
		snprintf(line, sizeof line, "%s", env);
	} else {
		return 0;
	}
	n = strcspn(line, "\r\n");
	line[n] = '\0';
	if (!n || n >= GW_KEY_MAX)
		return sbx_err_set(err, EINVAL, "metrics key: empty or over %d bytes", GW_KEY_MAX - 1);
	memcpy(vh->metrics_key, line, n + 1);
	explicit_bzero(line, sizeof line);
	return 0;
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
			gw_hooks_key_revoked(vh, i);
			removed++;
		}
	for (int j = 0; j < nv.nkeys; j++) {
		int i;
		if (match(vh, nv.keys[j], strlen(nv.keys[j])) >= 0)
			continue;
		/* a revoked key's slot is taken again only once none of its
		 * creates is on its way: their sandboxes, and their count, would
		 * otherwise land on the new key */
		for (i = 0; i < vh->nkeys && (vh->keys[i][0] || vh->creating[i] > 0); i++)
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
