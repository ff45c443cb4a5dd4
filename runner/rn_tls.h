/* The runner's TCP listener with mutual TLS (--listen-tls), beside the UNIX
 * socket (docs/runner.md). A peer must present a certificate that chains
 * to --client-ca before a byte of its request is read; after the handshake
 * the plaintext goes to the same connection code as the UNIX socket's
 * (runner/rn_conn.c) over a socketpair, marked remote: every op behaves
 * the same, except that no descriptor is passed and `drain` is refused. */
#ifndef RN_TLS_H
#define RN_TLS_H

#include "runner.h"

/* The flags, as given (NULL = not given). */
struct rn_tls_opts {
	const char *listen;             /* ADDR:PORT */
	const char *cert, *key, *client_ca;
};

/* 1 when any of the four flags was given. */
int rn_tls_wanted(const struct rn_tls_opts *o);

/* Check the flags and files and build the TLS context: all four given,
 * ADDR:PORT well-formed, every file readable, the key matching the
 * certificate, the certificate naming r->name (SAN DNS). 0, or -1 with
 * err (the caller exits 2). Nothing is bound yet. */
int rn_tls_setup(const struct runner *r, const struct rn_tls_opts *o, struct sbx_err *err);

/* Bind and listen (non-blocking) on the address of rn_tls_setup. The
 * listening fd, or -1 with err. */
int rn_tls_listen(struct sbx_err *err);

/* Accept every pending connection on listen_fd and start its handshake.
 * -1 when accept failed for want of descriptors or memory (errno set):
 * the caller pauses listening, as for the UNIX socket. */
int rn_tls_accept(struct runner *r, int listen_fd);

/* Free closed connections, end handshakes past their deadline. Returns
 * ms until the next deadline (-1 none). */
int rn_tls_sweep(void);

/* Close every TLS connection and free the context (shutdown). */
void rn_tls_close_all(void);

#endif
