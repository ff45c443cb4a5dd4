/* Preview tokens: HMAC-SHA256 of the sandbox id under the gateway's
 * preview secret (gw_psecret.c: from --preview-secret-file, or random per
 * process), so the gateway keeps no token table and a token is worthless
 * for any other sandbox. Which sandboxes want one the runner keeps. */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <string.h>
#include "../core/gw.h"

int gw_ptoken(const struct gw_vh *vh, const char *id, char out[33])
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	if (!HMAC(EVP_sha256(), vh->preview_secret, sizeof vh->preview_secret,
		  (const unsigned char *)id, strlen(id), mac, &n) || n < 16)
		return -1;
	for (int i = 0; i < 16; i++) {
		out[2 * i] = "0123456789abcdef"[mac[i] >> 4];
		out[2 * i + 1] = "0123456789abcdef"[mac[i] & 15];
	}
	out[32] = '\0';
	return 0;
}

int gw_ptoken_check(const struct gw_vh *vh, const char *id, const char *tok, size_t n)
{
	char want[33];
	if (n != 32 || gw_ptoken(vh, id, want))
		return 0;
	return CRYPTO_memcmp(want, tok, 32) == 0;
}
