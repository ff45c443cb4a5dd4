/* The runner's egress CA (docs/security.md "Credential brokering"): the
 * certificate authority the egress proxy mints a leaf certificate from
 * for each name it decrypts (a name with rules, rn_rules.h). Its key is
 * <state>/egress-ca/ca.key, 0600 in a 0700 directory, read only by the
 * runner and never bound into a sandbox; its certificate is also
 * <runtime>/egress-ca.pem, which every sandbox sees read-only at
 * /.sandbox/egress-ca.pem and in its trust store. The upstream side is
 * verified against the host's trust store, or the file named by
 * SANDBOX_EGRESS_TRUST_FILE (the egress suite's test CA). */
#ifndef RN_EGRESS_CA_H
#define RN_EGRESS_CA_H

#include <openssl/ssl.h>

#include "runner.h"

#define RN_EGRESS_CA_IN_SANDBOX "/.sandbox/egress-ca.pem"
#define RN_EGRESS_BUNDLE_IN_SANDBOX "/etc/ssl/certs/ca-certificates.crt"

/* Load the CA from the state dir, or make one; publish its certificate in
 * the runtime dir. 0 or -1 with err. */
int rn_egress_ca_init(const struct runner *r, struct sbx_err *err);

/* The CA certificate as PEM (NUL-terminated), or NULL before init. */
const char *rn_egress_ca_pem(void);

/* A server-side TLS object for name: a leaf for it (minted once, cached),
 * ALPN http/1.1 only. Thread-safe. NULL with err. */
SSL *rn_egress_ca_server(const char *name, struct sbx_err *err);

/* A client-side TLS object that verifies the server is name (a DNS name
 * or an IPv4 literal) against the host's trust. Thread-safe. NULL with err. */
SSL *rn_egress_ca_client(const char *name, struct sbx_err *err);

#endif
