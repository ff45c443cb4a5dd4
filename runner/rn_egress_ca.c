#include "rn_egress_ca.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include "rn_egress_trust.h"
#include "sbx_fs.h"
#include "sbx_log.h"

#define LEAF_CACHE 256
#define LEAF_DAYS 30
#define CA_DAYS 3650

struct leaf {
	char name[256];
	X509 *cert;
	time_t not_after;
};

static pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;
static EVP_PKEY *ca_key, *leaf_key;     /* one key for every leaf */
static X509 *ca_cert;
static char *ca_pem;
static SSL_CTX *server_ctx, *client_ctx;
static struct leaf cache[LEAF_CACHE];
static unsigned next_slot;

const char *rn_egress_ca_pem(void)
{
	return ca_pem;
}

static int ssl_err(struct sbx_err *err, const char *what)
{
	char buf[160] = "";
	unsigned long e = ERR_get_error();

	if (e)
		ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	return sbx_err_set(err, EPROTO, "%s: %s", what, buf[0] ? buf : "failed");
}

static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ex;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	ex = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!ex)
		return -1;
	X509_add_ext(cert, ex, -1);
	X509_EXTENSION_free(ex);
	return 0;
}

static int random_serial(X509 *cert)
{
	unsigned char b[16];
	BIGNUM *bn;
	int rc;

	if (RAND_bytes(b, sizeof(b)) != 1)
		return -1;
	b[0] &= 0x7f;
	bn = BN_bin2bn(b, sizeof(b), NULL);
	rc = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert)) ? 0 : -1;
	BN_free(bn);
	return rc;
}

/* A certificate for key with subject cn, signed by (issuer, ikey), or
 * self-signed when issuer is NULL. */
static X509 *make_cert(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *ikey,
		       int days, const char *san)
{
	X509 *c = X509_new();
	X509_NAME *nm;

	if (!c || X509_set_version(c, 2) != 1 || random_serial(c) < 0)
		goto fail;
	X509_gmtime_adj(X509_getm_notBefore(c), -3600);
	X509_gmtime_adj(X509_getm_notAfter(c), (long)days * 86400);
	X509_set_pubkey(c, key);
	nm = X509_get_subject_name(c);
	X509_NAME_add_entry_by_txt(nm, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1, 0);
	if (!issuer) {
		X509_set_issuer_name(c, nm);
		if (add_ext(c, c, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") < 0 ||
		    add_ext(c, c, NID_key_usage, "critical,keyCertSign,cRLSign") < 0 ||
		    add_ext(c, c, NID_subject_key_identifier, "hash") < 0)
			goto fail;
	} else {
		X509_set_issuer_name(c, X509_get_subject_name(issuer));
		if (add_ext(c, issuer, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
		    add_ext(c, issuer, NID_key_usage, "critical,digitalSignature") < 0 ||
		    add_ext(c, issuer, NID_ext_key_usage, "serverAuth") < 0 ||
		    add_ext(c, issuer, NID_subject_alt_name, san) < 0 ||
		    add_ext(c, issuer, NID_subject_key_identifier, "hash") < 0 ||
		    add_ext(c, issuer, NID_authority_key_identifier, "keyid:always") < 0)
			goto fail;
	}
	if (X509_sign(c, issuer ? ikey : key, EVP_sha256()) <= 0)
		goto fail;
	return c;
fail:
	X509_free(c);
	return NULL;
}

static int load_ca(const char *key_path, const char *cert_path)
{
	FILE *kf = fopen(key_path, "re"), *cf = fopen(cert_path, "re");
	int ok = 0;

	if (kf && cf) {
		ca_key = PEM_read_PrivateKey(kf, NULL, NULL, NULL);
		ca_cert = PEM_read_X509(cf, NULL, NULL, NULL);
		ok = ca_key && ca_cert && X509_check_private_key(ca_cert, ca_key) == 1 &&
		     X509_cmp_current_time(X509_get0_notAfter(ca_cert)) > 0;
	}
	if (kf)
		fclose(kf);
	if (cf)
		fclose(cf);
	if (!ok) {
		EVP_PKEY_free(ca_key);
		X509_free(ca_cert);
		ca_key = NULL;
		ca_cert = NULL;
		ERR_clear_error();
	}
	return ok ? 0 : -1;
}

static int write_pem(const char *path, mode_t mode, EVP_PKEY *key, X509 *cert,
		     struct sbx_err *err)
{
	char tmp[PATH_MAX];
	int fd, ok;
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		if (fd >= 0)
			close(fd);
		return sbx_err_sys(err, "write %s", tmp);
	}
	ok = key ? PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL)
		 : PEM_write_X509(f, cert);
	if (fclose(f) != 0 || !ok || rename(tmp, path) < 0) {
		unlink(tmp);
		return sbx_err_sys(err, "write %s", path);
	}
	return 0;
}

static int make_ca(const char *dir, const char *key_path, const char *cert_path,
		   struct sbx_err *err)
{
	(void)dir;
	ca_key = EVP_EC_gen("P-256");
	if (!ca_key)
		return ssl_err(err, "egress CA key");
	ca_cert = make_cert(ca_key, "sandbox runner egress CA", NULL, NULL, CA_DAYS, NULL);
	if (!ca_cert)
		return ssl_err(err, "egress CA certificate");
	if (write_pem(key_path, 0600, ca_key, NULL, err) < 0 ||
	    write_pem(cert_path, 0644, NULL, ca_cert, err) < 0)
		return -1;
	return 0;
}

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned inlen, void *arg)
{
	static const unsigned char h11[] = "\x08http/1.1";

	(void)ssl;
	(void)arg;
	/* http/1.1 or no ALPN at all: h2 is never offered back */
	if (SSL_select_next_proto((unsigned char **)out, outlen, h11, sizeof(h11) - 1, in,
				  inlen) == OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_OK;
	return SSL_TLSEXT_ERR_NOACK;
}

static int make_ctxs(struct sbx_err *err)
{
	const char *trust = getenv("SANDBOX_EGRESS_TRUST_FILE");
	static const unsigned char h11[] = "\x08http/1.1";

	server_ctx = SSL_CTX_new(TLS_server_method());
	client_ctx = SSL_CTX_new(TLS_client_method());
	if (!server_ctx || !client_ctx)
		return ssl_err(err, "egress TLS context");
	SSL_CTX_set_min_proto_version(server_ctx, TLS1_2_VERSION);
	SSL_CTX_set_min_proto_version(client_ctx, TLS1_2_VERSION);
	/* a decrypted body crosses both: one recv for several records,
	 * instead of one for each record's header and one for its body */
	SSL_CTX_set_read_ahead(server_ctx, 1);
	SSL_CTX_set_read_ahead(client_ctx, 1);
	SSL_CTX_set_default_read_buffer_len(server_ctx, 64 * 1024);
	SSL_CTX_set_default_read_buffer_len(client_ctx, 64 * 1024);
	SSL_CTX_set_alpn_select_cb(server_ctx, alpn_select, NULL);
	SSL_CTX_set_session_cache_mode(server_ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_verify(client_ctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_alpn_protos(client_ctx, h11, sizeof(h11) - 1);
	if (trust && *trust) {
		if (SSL_CTX_load_verify_locations(client_ctx, trust, NULL) != 1)
			return ssl_err(err, "SANDBOX_EGRESS_TRUST_FILE");
	} else if (SSL_CTX_set_default_verify_paths(client_ctx) != 1) {
		return ssl_err(err, "the host's trust store");
	}
	return 0;
}

int rn_egress_ca_init(const struct runner *r, struct sbx_err *err)
{
	char dir[PATH_MAX + 16], key_path[PATH_MAX + 32], cert_path[PATH_MAX + 32],
	     pub[PATH_MAX + 32];
	BIO *b;
	BUF_MEM *mem;

	snprintf(dir, sizeof(dir), "%s/egress-ca", r->state_dir);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return sbx_err_sys(err, "mkdir %s", dir);
	chmod(dir, 0700);
	snprintf(key_path, sizeof(key_path), "%s/ca.key", dir);
	snprintf(cert_path, sizeof(cert_path), "%s/ca.pem", dir);
	if (load_ca(key_path, cert_path) < 0 && make_ca(dir, key_path, cert_path, err) < 0)
		return -1;
	chmod(key_path, 0600);
	leaf_key = EVP_EC_gen("P-256");
	if (!leaf_key)
		return ssl_err(err, "egress leaf key");
	b = BIO_new(BIO_s_mem());
	if (!b || PEM_write_bio_X509(b, ca_cert) != 1) {
		BIO_free(b);
		return ssl_err(err, "egress CA PEM");
	}
	BIO_get_mem_ptr(b, &mem);
	ca_pem = strndup(mem->data, mem->length);
	BIO_free(b);
	if (!ca_pem)
		return sbx_err_set(err, ENOMEM, "out of memory");
	if (make_ctxs(err) < 0)
		return -1;
	rn_egress_trust_set(ca_pem);
	/* the runtime dir exists once a driver prepared it */
	snprintf(pub, sizeof(pub), "%s/egress-ca.pem", r->runtime_dir);
	if (access(r->runtime_dir, F_OK) == 0 &&
	    sbx_write_file(pub, ca_pem, O_CREAT | O_TRUNC | O_NOFOLLOW, 0644) < 0)
		return sbx_err_sys(err, "write %s", pub);
	return 0;
}

/* The cached leaf of name, minted when missing or near its end. Under mx. */
static X509 *leaf_for(const char *name)
{
	time_t now = time(NULL);
	char san[300];
	struct in_addr a;
	X509 *c;

	for (int i = 0; i < LEAF_CACHE; i++)
		if (cache[i].cert && strcmp(cache[i].name, name) == 0 &&
		    cache[i].not_after > now + 86400)
			return cache[i].cert;
	snprintf(san, sizeof(san), "%s:%s", inet_pton(AF_INET, name, &a) == 1 ? "IP" : "DNS", name);
	c = make_cert(leaf_key, name, ca_cert, ca_key, LEAF_DAYS, san);
	if (!c)
		return NULL;
	struct leaf *l = &cache[next_slot++ % LEAF_CACHE];
	X509_free(l->cert);     /* SSL objects using it hold their own reference */
	snprintf(l->name, sizeof(l->name), "%s", name);
	l->cert = c;
	l->not_after = now + (time_t)LEAF_DAYS * 86400 - 3600;
	return c;
}

SSL *rn_egress_ca_server(const char *name, struct sbx_err *err)
{
	SSL *s;
	X509 *c;
	int ok;

	if (!server_ctx) {
		sbx_err_set(err, ENOTSUP, "no egress CA");
		return NULL;
	}
	s = SSL_new(server_ctx);
	if (!s) {
		ssl_err(err, "SSL_new");
		return NULL;
	}
	pthread_mutex_lock(&mx);
	c = leaf_for(name);
	ok = c && SSL_use_certificate(s, c) == 1 && SSL_use_PrivateKey(s, leaf_key) == 1 &&
	     SSL_add1_chain_cert(s, ca_cert) == 1;
	pthread_mutex_unlock(&mx);
	if (!ok) {
		ssl_err(err, "egress leaf certificate");
		SSL_free(s);
		return NULL;
	}
	return s;
}

SSL *rn_egress_ca_client(const char *name, struct sbx_err *err)
{
	SSL *s;
	struct in_addr a;
	int ip = inet_pton(AF_INET, name, &a) == 1;

	if (!client_ctx) {
		sbx_err_set(err, ENOTSUP, "no egress CA");
		return NULL;
	}
	s = SSL_new(client_ctx);
	if (!s || (!ip && SSL_set_tlsext_host_name(s, name) != 1) ||
	    (!ip && SSL_set1_host(s, name) != 1) ||
	    (ip && X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(s), name) != 1)) {
		ssl_err(err, "upstream TLS");
		SSL_free(s);
		return NULL;
	}
	return s;
}
