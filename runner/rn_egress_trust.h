/* What a sandbox is given to trust the runner's egress CA (rn_egress_ca.h)
 * for the names the proxy decrypts: its trust store becomes the image's
 * bundle with the CA appended, and every command's environment names the
 * bundle (SSL_CERT_FILE, REQUESTS_CA_BUNDLE) and the CA alone
 * (NODE_EXTRA_CA_CERTS) unless the sandbox's env sets them. Public
 * material only: no key. Kept apart from the CA (no OpenSSL) so the
 * drivers' pure parts link without it. */
#ifndef RN_EGRESS_TRUST_H
#define RN_EGRESS_TRUST_H

#include <stddef.h>

#include "rn_spec.h"

#define RN_TRUST_BUNDLE_PATH "etc/ssl/certs/ca-certificates.crt"   /* in the root */
#define RN_TRUST_ENV_MAX 3

/* The CA certificate (PEM) the drivers hand out; NULL: none (nothing is
 * added). rn_egress_ca_init sets it. */
void rn_egress_trust_set(const char *pem);
const char *rn_egress_trust_pem(void);

/* The "NAME=value" entries spec's env lacks, into out (up to
 * RN_TRUST_ENV_MAX, static strings): their count. */
int rn_egress_trust_env(const struct rn_spec *spec, const char **out);

/* The bundle: base (the image's, may be NULL) then the CA, in a new
 * string (free it), or NULL when out of memory. */
char *rn_egress_trust_bundle(const char *base, size_t base_len);

/* Under the directory fd root (a sandbox's root, before it runs), the
 * bundle at RN_TRUST_BUNDLE_PATH replacing the image's, without following
 * a symlink in any component (the root may come from a snapshot a
 * sandbox wrote). 0 or -1 with errno. */
int rn_egress_trust_install(int root);

#endif
