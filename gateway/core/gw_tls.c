/* TLS client on memory BIOs (gw_tls.h). The SSL object never sees the
 * socket: gw_up.c moves the bytes. Memory stays bounded by the caller's
 * discipline: it feeds one read at a time and stops reading while its
 * owner is paused; it encrypts one chunk only when the previous chunk's
 * records left (gw_tls_out_len() == 0). SSL_MODE_RELEASE_BUFFERS gives
 * OpenSSL's record buffers back between records, and a memory BIO that
 * grew past BIO_KEEP is replaced by a fresh one once empty (a memory BIO
 * never shrinks), so an idle connection costs the SSL object and the
 * peer's certificate (about 24 KiB measured, tests/unit/test_gw_tls.c),
 * not the high-water mark of the stream that went through it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <openssl/buffer.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include "gw_tls.h"

/* OpenSSL's reason for the last failure, its queue emptied. */
static const char *ssl_reason(char *buf, size_t n)
{
	unsigned long e, last = 0;

	while ((e = ERR_get_error()))
		last = e;
	if (!last)
		return snprintf(buf, n, "no reason given"), buf;
	const char *r = ERR_reason_error_string(last);
	if (r)
		snprintf(buf, n, "%s", r);
	else
		ERR_error_string_n(last, buf, n);
	return buf;
}

/* Resumption: the runner's latest session ticket per (context, runner
 * name), so that a new control connection resumes (TLS 1.3 PSK with
 * ECDHE) instead of a full handshake with both certificates and their
 * signatures. The runner's certificate stays in the session and is
 * checked for the name again; the runner keeps its tickets' lifetime
 * short (rn_tls.c). Least recently used goes when full. */
#define SESSIONS 64

static struct {
	const SSL_CTX *ctx;
	char name[64];
	SSL_SESSION *s;
	uint64_t used;
} sessions[SESSIONS];
static uint64_t session_clock;

static int session_slot(const SSL_CTX *ctx, const char *name, int make)
{
	int free_i = -1, old = 0;
	for (int i = 0; i < SESSIONS; i++) {
		if (sessions[i].s && sessions[i].ctx == ctx && !strcmp(sessions[i].name, name))
			return i;
		if (!sessions[i].s && free_i < 0)
			free_i = i;
		if (sessions[i].used < sessions[old].used)
			old = i;
	}
	if (!make)
		return -1;
	return free_i >= 0 ? free_i : old;
}

/* OpenSSL's new-session callback: a ticket arrived. 1: we keep it. */
static int new_session(SSL *ssl, SSL_SESSION *s)
{
	const struct gw_tls *t = SSL_get_app_data(ssl);
	int i;

	if (!t || !t->name[0] || !SSL_SESSION_is_resumable(s))
		return 0;
	i = session_slot(SSL_get_SSL_CTX(ssl), t->name, 1);
	SSL_SESSION_free(sessions[i].s);
	sessions[i].ctx = SSL_get_SSL_CTX(ssl);
	snprintf(sessions[i].name, sizeof sessions[i].name, "%s", t->name);
	sessions[i].s = s;
	sessions[i].used = ++session_clock;
	return 1;
}

void gw_tls_forget_sessions(const SSL_CTX *ctx)
{
	for (int i = 0; i < SESSIONS; i++)
		if (sessions[i].s && sessions[i].ctx == ctx) {
			SSL_SESSION_free(sessions[i].s);
			memset(&sessions[i], 0, sizeof sessions[i]);
		}
}

static EVP_PKEY *read_key(const char *path)
{
	BIO *b = BIO_new_file(path, "r");
	EVP_PKEY *k = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;
	BIO_free(b);
	return k;
}

SSL_CTX *gw_tls_client_ctx(const char *ca, const char *cert, const char *key,
			   struct sbx_err *err)
{
	char why[256];
	EVP_PKEY *pkey = NULL;
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());

	ERR_clear_error();
	if (!ctx) {
		sbx_err_set(err, ENOMEM, "runner TLS: %s", ssl_reason(why, sizeof why));
		return NULL;
	}
	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION)) {
		sbx_err_set(err, EINVAL, "runner TLS: no TLS 1.3: %s", ssl_reason(why, sizeof why));
		goto fail;
	}
	if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) {
		sbx_err_set(err, EINVAL, "--runner-ca %s: cannot read certificates from it: %s", ca,
			    ssl_reason(why, sizeof why));
		goto fail;
	}
	if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
		sbx_err_set(err, EINVAL, "--runner-cert %s: cannot read a certificate from it: %s",
			    cert, ssl_reason(why, sizeof why));
		goto fail;
	}
	if (!(pkey = read_key(key))) {
		sbx_err_set(err, EINVAL, "--runner-key %s: cannot read a private key from it: %s",
			    key, ssl_reason(why, sizeof why));
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey(ctx, pkey) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
		sbx_err_set(err, EINVAL, "--runner-key %s does not match the certificate in %s: %s",
			    key, cert, ssl_reason(why, sizeof why));
		goto fail;
	}
	/* a runner must show a server certificate of our CA; who it is
	 * (its name) is checked per connection */
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
	SSL_CTX_sess_set_new_cb(ctx, new_session);
	EVP_PKEY_free(pkey);
	return ctx;
fail:
	EVP_PKEY_free(pkey);
	SSL_CTX_free(ctx);
	ERR_clear_error();
	return NULL;
}

int gw_tls_start(struct gw_tls *t, SSL_CTX *ctx, const char *name, struct sbx_err *err)
{
	memset(t, 0, sizeof *t);
	if (name && strlen(name) >= sizeof t->name)
		return sbx_err_set(err, EINVAL, "runner name too long");
	snprintf(t->name, sizeof t->name, "%s", name ? name : "");
	t->ssl = SSL_new(ctx);
	t->rbio = BIO_new(BIO_s_mem());
	t->wbio = BIO_new(BIO_s_mem());
	if (!t->ssl || !t->rbio || !t->wbio) {
		gw_tls_free(t);
		ERR_clear_error();
		return sbx_err_set(err, ENOMEM, "runner TLS: out of memory");
	}
	/* an empty BIO is "come back later", not end of file */
	BIO_set_mem_eof_return(t->rbio, -1);
	BIO_set_mem_eof_return(t->wbio, -1);
	SSL_set_bio(t->ssl, t->rbio, t->wbio);   /* the SSL owns them now */
	SSL_set_app_data(t->ssl, t);
	if (t->name[0]) {
		int i = session_slot(ctx, t->name, 0);
		SSL_set_tlsext_host_name(t->ssl, t->name);
		if (i >= 0 && SSL_SESSION_is_resumable(sessions[i].s) &&
		    SSL_set_session(t->ssl, sessions[i].s) == 1) {
			sessions[i].used = ++session_clock;
			t->offered = 1;
		}
	}
	SSL_set_connect_state(t->ssl);
	return 0;
}

#define BIO_KEEP 4096

/* An empty memory BIO whose buffer grew past BIO_KEEP: a fresh one. */
static void trim(struct gw_tls *t, int rd)
{
	BIO *b = rd ? t->rbio : t->wbio, *n;
	BUF_MEM *bm = NULL;

	if (BIO_ctrl_pending(b) || BIO_get_mem_ptr(b, &bm) != 1 || !bm || bm->max <= BIO_KEEP)
		return;
	if (!(n = BIO_new(BIO_s_mem())))
		return;   /* keep the big one */
	BIO_set_mem_eof_return(n, -1);
	if (rd) {   /* the SSL frees the old one */
		SSL_set0_rbio(t->ssl, n);
		t->rbio = n;
	} else {
		SSL_set0_wbio(t->ssl, n);
		t->wbio = n;
	}
}

int gw_tls_feed(struct gw_tls *t, const void *p, size_t n)
{
	while (n) {
		int k = BIO_write(t->rbio, p, n > (1u << 30) ? 1 << 30 : (int)n);
		if (k <= 0)
			return -1;
		p = (const char *)p + k;
		n -= (size_t)k;
	}
	return 0;
}

/* Why an SSL call failed (rc its return), for err. */
static int failed(struct gw_tls *t, int rc, const char *what, struct sbx_err *err)
{
	char why[256];
	long v = SSL_get_verify_result(t->ssl);
	int e = SSL_get_error(t->ssl, rc);

	if (v != X509_V_OK && !t->established) {
		ERR_clear_error();
		return sbx_err_set(err, EPROTO, "%s: the runner's certificate: %s", what,
				   X509_verify_cert_error_string(v));
	}
	if (e == SSL_ERROR_SYSCALL && !ERR_peek_error())
		return sbx_err_set(err, EPROTO, "%s: the runner's bytes ended mid-record", what);
	return sbx_err_set(err, EPROTO, "%s: %s", what, ssl_reason(why, sizeof why));
}

int gw_tls_handshake(struct gw_tls *t, struct sbx_err *err)
{
	if (t->established)
		return 1;
	int rc = SSL_do_handshake(t->ssl);
	if (rc != 1) {
		int e = SSL_get_error(t->ssl, rc);
		if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
			return 0;
		if (t->offered) {   /* the next connection shows certificates */
			int i = session_slot(SSL_get_SSL_CTX(t->ssl), t->name, 0);
			if (i >= 0) {
				SSL_SESSION_free(sessions[i].s);
				memset(&sessions[i], 0, sizeof sessions[i]);
			}
		}
		return failed(t, rc, "TLS handshake", err);
	}
	if (t->name[0] && !gw_tls_peer_names(t, t->name))
		return sbx_err_set(err, EPROTO, "runner certificate does not name \"%s\"", t->name);
	t->established = 1;
	t->resumed = SSL_session_reused(t->ssl) == 1;
	return 1;
}

long gw_tls_read(struct gw_tls *t, void *buf, size_t n, struct sbx_err *err)
{
	int rc = SSL_read(t->ssl, buf, n > (1u << 30) ? 1 << 30 : (int)n);

	if (rc > 0)
		return rc;
	switch (SSL_get_error(t->ssl, rc)) {
	case SSL_ERROR_WANT_READ:
	case SSL_ERROR_WANT_WRITE:
		trim(t, 1);
		SSL_free_buffers(t->ssl);   /* nothing half-read: the record buffers go */
		return 0;
	case SSL_ERROR_ZERO_RETURN:
		return -2;
	default:
		return failed(t, rc, "TLS", err);
	}
}

int gw_tls_has_input(const struct gw_tls *t)
{
	return SSL_pending(t->ssl) > 0 || BIO_ctrl_pending(t->rbio) > 0;
}

int gw_tls_write(struct gw_tls *t, const void *p, size_t n, struct sbx_err *err)
{
	while (n) {   /* a memory BIO takes everything: no WANT_WRITE */
		int k = SSL_write(t->ssl, p, n > (1u << 30) ? 1 << 30 : (int)n);
		if (k <= 0)
			return failed(t, k, "TLS", err);
		p = (const char *)p + k;
		n -= (size_t)k;
	}
	return 0;
}

size_t gw_tls_out_len(const struct gw_tls *t)
{
	return t->wbio ? BIO_ctrl_pending(t->wbio) : 0;
}

size_t gw_tls_take_out(struct gw_tls *t, void *buf, size_t n)
{
	int k = BIO_read(t->wbio, buf, n > (1u << 30) ? 1 << 30 : (int)n);
	if (k > 0 && !BIO_ctrl_pending(t->wbio))
		trim(t, 0);
	return k > 0 ? (size_t)k : 0;
}

void gw_tls_shutdown(struct gw_tls *t)
{
	if (t->ssl && t->established && !(SSL_get_shutdown(t->ssl) & SSL_SENT_SHUTDOWN))
		SSL_shutdown(t->ssl);
	ERR_clear_error();
}

int gw_tls_peer_names(const struct gw_tls *t, const char *name)
{
	X509 *peer = t->ssl ? SSL_get0_peer_certificate(t->ssl) : NULL;

	return peer && name && *name &&
	       X509_check_host(peer, name, strlen(name), X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS,
			       NULL) == 1;
}

void gw_tls_free(struct gw_tls *t)
{
	if (t->ssl) {
		SSL_free(t->ssl);   /* and its BIOs */
	} else {
		BIO_free(t->rbio);
		BIO_free(t->wbio);
	}
	t->ssl = NULL;
	t->rbio = t->wbio = NULL;
	t->established = 0;
}
