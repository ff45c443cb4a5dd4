/* The gateway's TLS client to a runner on another host (gw_tls.c), on
 * OpenSSL memory BIOs: lws knows nothing of this TLS. The socket is
 * adopted raw (gw_up.c); the peer's bytes are fed in here, what TLS has
 * to send is taken out here and written by lws, and the plaintext goes
 * to and from gw_up's frame path. No socket, no event loop: the unit test
 * drives it against an in-process server. */
#ifndef GW_TLS_H
#define GW_TLS_H
#include <stddef.h>
#include <openssl/ssl.h>
#include "sbx_err.h"

/* The client context from --runner-ca, --runner-cert, --runner-key: TLS
 * 1.3 only, the peer verified against ca with purpose "ssl server", our
 * certificate (chain) and key offered to the runner. NULL with err naming
 * the file that is unreadable or wrong, or the key that does not match. */
SSL_CTX *gw_tls_client_ctx(const char *ca, const char *cert, const char *key,
			   struct sbx_err *err);

/* One connection. rbio is fed the peer's bytes; wbio holds ours. */
struct gw_tls {
	SSL *ssl;
	BIO *rbio, *wbio;
	int established;        /* handshake done and the name checked */
	int offered;            /* an earlier session was offered */
	int resumed;            /* ... and the runner resumed it */
	char name[64];          /* the name the peer's certificate must carry, or "" */
};

/* Ready t (the struct zeroed first); name, when not empty, must be named
 * by the peer's certificate (X509_check_host). 0, or -1 with err. */
int gw_tls_start(struct gw_tls *t, SSL_CTX *ctx, const char *name, struct sbx_err *err);
/* Hand over bytes read from the socket. 0, or -1 out of memory. */
int gw_tls_feed(struct gw_tls *t, const void *p, size_t n);
/* Advance the handshake: 1 established (name checked), 0 waiting for the
 * peer's bytes (send what gw_tls_take_out gives first), -1 refused with
 * err saying why (a bad certificate, a wrong CA, the name). */
int gw_tls_handshake(struct gw_tls *t, struct sbx_err *err);
/* Plaintext from the peer: >0 bytes, 0 none until more is fed, -1 an
 * error (err), -2 the peer closed (close_notify). */
long gw_tls_read(struct gw_tls *t, void *buf, size_t n, struct sbx_err *err);
/* Whether fed bytes or decrypted plaintext wait to be read. */
int gw_tls_has_input(const struct gw_tls *t);
/* Encrypt n plaintext bytes (all of them, into wbio). 0, or -1 with err. */
int gw_tls_write(struct gw_tls *t, const void *p, size_t n, struct sbx_err *err);
/* Bytes waiting to go to the socket. */
size_t gw_tls_out_len(const struct gw_tls *t);
/* Take up to n of them; how many were taken. */
size_t gw_tls_take_out(struct gw_tls *t, void *buf, size_t n);
/* Queue our close_notify (once established). */
void gw_tls_shutdown(struct gw_tls *t);
/* Whether the peer's certificate names name (X509_check_host): 1 yes, 0 no
 * (or no certificate yet). */
int gw_tls_peer_names(const struct gw_tls *t, const char *name);
void gw_tls_free(struct gw_tls *t);
/* Drop the sessions kept for ctx's runners (before SSL_CTX_free). */
void gw_tls_forget_sessions(const SSL_CTX *ctx);
#endif
