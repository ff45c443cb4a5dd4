/* Mutual TLS on the runner's TCP listener, in the runner's one epoll loop.
 *
 * A connection is first a TLS handshake (non-blocking SSL_do_handshake,
 * resumed on whatever OpenSSL waits for). The peer must send a certificate
 * chaining to --client-ca with the TLS client purpose; until the handshake
 * completed nothing it sent reaches the control protocol, and the
 * handshake counts against the request deadline. Then the connection is
 * relayed: decrypted bytes go to a socketpair whose other end rn_conn
 * serves like any UNIX client (remote), and what rn_conn writes there is
 * encrypted back. The relay has its own bounded buffers per direction and
 * reads a side only while the buffer toward the other has room, so a
 * slow reader holds back its peer (the same flow control as the splice
 * behind it). Half-closes travel both ways: close_notify from the peer
 * becomes shutdown(SHUT_WR) of the pair; EOF from rn_conn becomes our
 * close_notify. */
#include "rn_tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "rn_addr.h"
#include "rn_conn.h"
#include "sbx_buf.h"
#include "sbx_log.h"
#include "sbx_splice.h"

#define RN_TLS_TICKET_S 600   /* a session ticket's lifetime */
#define TLS_BUF (64u * 1024)            /* relay buffer per direction */
#define TLS_MAX_CONNS RN_MAX_CONNS      /* handshakes and relays together */
/* Handshakes in progress (peers not yet known to hold a certificate): at
 * most this many at once, and a quarter of them from any one address, so
 * a host that opens connections and stalls them cannot crowd the
 * gateways out (each ends at the request deadline anyway). */
#define TLS_MAX_HANDSHAKES 1024
#define TLS_MAX_HANDSHAKES_PER_ADDR (TLS_MAX_HANDSHAKES / 4)
#define TLS_LINGER_MS RN_REQ_TIMEOUT_MS /* flushing to a peer after rn_conn closed */
#define REFUSED_LOG_EVERY_MS 1000

enum tstate { T_HANDSHAKE, T_RELAY, T_DEAD };

struct tls_conn {
	struct rn_ev net;               /* the TCP connection */
	struct rn_ev pair;              /* our end of the socketpair to rn_conn */
	struct runner *r;
	SSL *ssl;
	enum tstate state;
	int64_t accepted;               /* monotonic ms */
	int64_t deadline;               /* 0 = none */
	char peer[INET6_ADDRSTRLEN + 16];   /* address:port, for the log */
	char addr[INET6_ADDRSTRLEN];        /* the address alone */
	struct sbx_buf to_pair;         /* decrypted, toward rn_conn */
	struct sbx_buf to_net;          /* from rn_conn, to encrypt */
	uint32_t rd_want, wr_want;      /* what SSL_read / SSL_write wait for on net */
	int net_eof;                    /* nothing more comes from the peer */
	int pair_eof;                   /* nothing more comes from rn_conn */
	int pair_shut;                  /* we shut the write side toward rn_conn */
	int notify_sent;                /* our close_notify went out */
	int net_out, pair_out;          /* left epoll after a hang-up */
	struct tls_conn *next;
};

/* One listener per process: its context, address and connections. */
static SSL_CTX *ctx;
static struct sockaddr_storage listen_ss;
static socklen_t listen_len;
static char listen_txt[96];
static struct tls_conn *tconns;
static int n_tconns;
/* refused peers: one log line a second at most, with the count of the
 * quiet ones since the last line */
static int64_t refused_logged_at;
static long refused_quiet;

int rn_tls_wanted(const struct rn_tls_opts *o)
{
	return o->listen || o->cert || o->key || o->client_ca;
}

/* The newest OpenSSL error's reason ("unknown" if the queue is empty). */
static const char *ssl_reason(void)
{
	unsigned long e = ERR_peek_last_error();
	const char *s = e ? ERR_reason_error_string(e) : NULL;

	return s ? s : "unknown error";
}

static int readable(const char *flag, const char *path, struct sbx_err *err)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return sbx_err_sys(err, "%s %s: cannot read", flag, path);
	fclose(f);
	return 0;
}

int rn_tls_setup(const struct runner *r, const struct rn_tls_opts *o, struct sbx_err *err)
{
	char missing[80] = "";
	struct sbx_err aerr = { 0, "" };
	STACK_OF(X509_NAME) *names;
	X509 *own;

	if (!o->listen)
		strcat(missing, " --listen-tls");
	if (!o->cert)
		strcat(missing, " --cert");
	if (!o->key)
		strcat(missing, " --key");
	if (!o->client_ca)
		strcat(missing, " --client-ca");
	if (missing[0])
		return sbx_err_set(err, EINVAL, "--listen-tls, --cert, --key and --client-ca "
				   "go together: missing%s", missing);
	if (rn_addr_parse(o->listen, &listen_ss, &listen_len, &aerr) < 0)
		return sbx_err_set(err, EINVAL, "--listen-tls %s", aerr.msg);
	snprintf(listen_txt, sizeof(listen_txt), "%s", o->listen);
	if (readable("--cert", o->cert, err) < 0 || readable("--key", o->key, err) < 0 ||
	    readable("--client-ca", o->client_ca, err) < 0)
		return -1;
	ERR_clear_error();
	ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx)
		return sbx_err_set(err, ENOMEM, "TLS context: %s", ssl_reason());
	SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
	if (SSL_CTX_use_certificate_chain_file(ctx, o->cert) != 1) {
		sbx_err_set(err, EINVAL, "--cert %s: not a PEM certificate (chain) OpenSSL "
			    "can load: %s", o->cert, ssl_reason());
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, o->key, SSL_FILETYPE_PEM) != 1) {
		/* OpenSSL compares the key with the certificate as it loads it */
		if (ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH)
			sbx_err_set(err, EINVAL, "--key %s does not match the certificate %s",
				    o->key, o->cert);
		else
			sbx_err_set(err, EINVAL, "--key %s: not a PEM private key OpenSSL can "
				    "load: %s", o->key, ssl_reason());
		goto fail;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		sbx_err_set(err, EINVAL, "--key %s does not match the certificate %s",
			    o->key, o->cert);
		goto fail;
	}
	/* a gateway checks that the runner it reached carries the name it
	 * reports; a certificate that does not would be refused by every
	 * gateway, so say it here, at start */
	own = SSL_CTX_get0_certificate(ctx);
	if (!own || X509_check_host(own, r->name, 0, X509_CHECK_FLAG_NEVER_CHECK_SUBJECT |
				    X509_CHECK_FLAG_NO_WILDCARDS, NULL) != 1) {
		sbx_err_set(err, EINVAL, "certificate %s does not name runner %s (it needs "
			    "subjectAltName DNS:%s)", o->cert, r->name, r->name);
		goto fail;
	}
	if (SSL_CTX_load_verify_locations(ctx, o->client_ca, NULL) != 1) {
		sbx_err_set(err, EINVAL, "--client-ca %s: %s", o->client_ca, ssl_reason());
		goto fail;
	}
	names = SSL_load_client_CA_file(o->client_ca);
	if (!names) {
		sbx_err_set(err, EINVAL, "--client-ca %s: no certificate in it", o->client_ca);
		goto fail;
	}
	SSL_CTX_set_client_CA_list(ctx, names);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	SSL_CTX_set_purpose(ctx, X509_PURPOSE_SSL_CLIENT);
	/* resumption by stateless tickets (their key lives and dies with
	 * this process; no session is stored here): a gateway's next control
	 * connection skips both certificates and their signatures, about 3 ms
	 * of a full handshake (docs/runner.md). A ticket lasts 10 minutes,
	 * so a peer shows its certificate again at least that often. */
	SSL_CTX_set_num_tickets(ctx, 1);
	SSL_CTX_set_timeout(ctx, RN_TLS_TICKET_S);
	/* with client certificates OpenSSL resumes only sessions of a named
	 * context (else the handshake ends in an internal error) */
	SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"sandbox-runner", 14);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	/* a TCP FIN without close_notify is an EOF, as on the UNIX socket:
	 * the streams carry their own framing */
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
			 SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
	return 0;
fail:
	SSL_CTX_free(ctx);
	ctx = NULL;
	return -1;
}

int rn_tls_listen(struct sbx_err *err)
{
	int one = 1, fd = socket(listen_ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
				 SOCK_CLOEXEC, 0);

	if (fd < 0)
		return sbx_err_sys(err, "--listen-tls %s: socket", listen_txt);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&listen_ss, listen_len) < 0 ||
	    listen(fd, SOMAXCONN) < 0) {
		sbx_err_sys(err, "--listen-tls %s", listen_txt);
		close(fd);
		return -1;
	}
	return fd;
}

static void tconn_close(struct tls_conn *c)
{
	if (c->state == T_DEAD)
		return;
	if (c->net.fd >= 0) {
		char junk[4096];

		if (!c->net_out)
			rn_loop_del(&c->net);
		/* a close with unread bytes queued resets the connection, and a
		 * reset can destroy the reply the peer has not read yet: take
		 * what little is queued first (a peer's close_notify, say) */
		for (int i = 0; i < 16 && recv(c->net.fd, junk, sizeof(junk), MSG_DONTWAIT) > 0; i++)
			;
		close(c->net.fd);
		c->net.fd = -1;
	}
	if (c->pair.fd >= 0) {
		if (!c->pair_out)
			rn_loop_del(&c->pair);
		close(c->pair.fd);
		c->pair.fd = -1;
	}
	c->state = T_DEAD;
}

static void log_refused(const char *peer, const char *why)
{
	int64_t now = rn_now_mono();

	if (refused_logged_at && now - refused_logged_at < REFUSED_LOG_EVERY_MS) {
		refused_quiet++;
		return;
	}
	if (refused_quiet)
		sbx_warn("tls: refused %s: %s (and %ld more refused since the last line)",
			 peer, why, refused_quiet);
	else
		sbx_warn("tls: refused %s: %s", peer, why);
	refused_logged_at = now;
	refused_quiet = 0;
}

/* The handshake failed: say why once (rate-limited) and close. */
static void refuse(struct tls_conn *c, int ssl_err)
{
	char why[300];
	long v = SSL_get_verify_result(c->ssl);

	if (ssl_err == SSL_ERROR_SYSCALL && !ERR_peek_last_error())
		snprintf(why, sizeof(why), "%s during the handshake",
			 errno ? strerror(errno) : "connection closed");
	else if (!ERR_peek_last_error())
		/* a TCP health check or a port scan: it left without a word */
		snprintf(why, sizeof(why), "closed before completing a handshake (TLS error %d)",
			 ssl_err);
	else if (v != X509_V_OK)
		snprintf(why, sizeof(why), "%s (%s)", ssl_reason(),
			 X509_verify_cert_error_string(v));
	else
		snprintf(why, sizeof(why), "%s", ssl_reason());
	ERR_clear_error();
	log_refused(c->peer, why);
	tconn_close(c);
}

/* Keep epoll in line with what each side waits for. A side that hung up
 * left epoll (its HUP is level-triggered); it is read by pump alone. */
static void tconn_events(struct tls_conn *c)
{
	uint32_t ne = 0, pe = 0;

	if (!c->net_eof && c->to_pair.len < TLS_BUF)
		ne |= c->rd_want ? c->rd_want : EPOLLIN;
	if (c->to_net.len || (c->pair_eof && !c->notify_sent))
		ne |= c->wr_want ? c->wr_want : EPOLLOUT;
	if (!c->pair_eof && c->to_net.len < TLS_BUF)
		pe |= EPOLLIN;
	if (c->to_pair.len)
		pe |= EPOLLOUT;
	if (!c->net_out)
		rn_loop_mod(&c->net, ne);
	if (!c->pair_out)
		rn_loop_mod(&c->pair, pe);
}

/* rn_conn closed its end: nothing more can reach it, so nothing more is
 * read from the peer; what rn_conn wrote still goes out (within the
 * linger deadline). */
static void pair_gone(struct tls_conn *c)
{
	sbx_buf_reset(&c->to_pair);
	c->pair_shut = 1;
	c->net_eof = 1;
	if (!c->deadline)
		c->deadline = rn_now_mono() + TLS_LINGER_MS;
}

/* Move bytes every way they can go until nothing moves; then the
 * connection ends (both directions closed) or waits on epoll. SSL may
 * hold decrypted bytes that epoll cannot see, so reads are tried, not
 * waited for, whenever there is room. 0, or -1 when c was closed. */
static int pump(struct tls_conn *c)
{
	int moved;

	do {
		moved = 0;
		/* peer -> rn_conn */
		if (!c->net_eof && c->to_pair.len < TLS_BUF) {
			size_t room = TLS_BUF - c->to_pair.len;
			unsigned char *p = sbx_buf_reserve(&c->to_pair, room);
			int n, e;

			if (!p)
				goto fail;
			ERR_clear_error();
			n = SSL_read(c->ssl, p, (int)room);
			if (n > 0) {
				sbx_buf_commit(&c->to_pair, (size_t)n);
				c->rd_want = EPOLLIN;
				moved = 1;
			} else if ((e = SSL_get_error(c->ssl, n)) == SSL_ERROR_WANT_READ) {
				c->rd_want = EPOLLIN;
			} else if (e == SSL_ERROR_WANT_WRITE) {
				c->rd_want = EPOLLOUT;
			} else if (e == SSL_ERROR_ZERO_RETURN) {
				c->net_eof = 1;
				moved = 1;
			} else {
				sbx_debug("tls: %s: read: %s (ssl error %d, %s)", c->peer, ssl_reason(),
					  e, strerror(errno));
				goto fail;
			}
		}
		if (c->to_pair.len && !c->pair_shut) {
			size_t before = c->to_pair.len;
			if (sbx_send_buf(c->pair.fd, &c->to_pair) < 0)
				pair_gone(c);
			moved |= c->to_pair.len != before;
		}
		if (c->net_eof && !c->to_pair.len && !c->pair_shut) {
			shutdown(c->pair.fd, SHUT_WR);
			c->pair_shut = 1;
		}
		/* rn_conn -> peer */
		if (!c->pair_eof && c->to_net.len < TLS_BUF) {
			size_t room = TLS_BUF - c->to_net.len;
			unsigned char *p = sbx_buf_reserve(&c->to_net, room);
			ssize_t n;

			if (!p)
				goto fail;
			n = recv(c->pair.fd, p, room, MSG_DONTWAIT);
			if (n > 0) {
				sbx_buf_commit(&c->to_net, (size_t)n);
				moved = 1;
			} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
				c->pair_eof = 1;
				moved = 1;
			}
		}
		if (c->to_net.len) {
			int n, e;

			ERR_clear_error();
			n = SSL_write(c->ssl, sbx_buf_head(&c->to_net), (int)c->to_net.len);
			if (n > 0) {
				sbx_buf_consume(&c->to_net, (size_t)n);
				c->wr_want = 0;
				moved = 1;
			} else if ((e = SSL_get_error(c->ssl, n)) == SSL_ERROR_WANT_READ) {
				c->wr_want = EPOLLIN;
			} else if (e == SSL_ERROR_WANT_WRITE) {
				c->wr_want = EPOLLOUT;
			} else {
				sbx_debug("tls: %s: write: %s (ssl error %d, %s)", c->peer,
					  ssl_reason(), e, strerror(errno));
				goto fail;
			}
		}
		if (c->pair_eof && !c->to_net.len && !c->notify_sent) {
			int n;

			ERR_clear_error();
			n = SSL_shutdown(c->ssl);
			if (n >= 0) {
				c->notify_sent = 1;
				moved = 1;
			} else if (SSL_get_error(c->ssl, n) == SSL_ERROR_WANT_WRITE) {
				c->wr_want = EPOLLOUT;
			} else if (SSL_get_error(c->ssl, n) == SSL_ERROR_WANT_READ) {
				c->wr_want = EPOLLIN;
			} else {
				goto fail;
			}
		}
	} while (moved);
	/* the peer left entirely: what is still for it cannot arrive */
	if (c->notify_sent && c->pair_shut) {
		tconn_close(c);
		return -1;
	}
	if (c->net_out && c->pair_shut) {
		tconn_close(c);
		return -1;
	}
	tconn_events(c);
	return 0;
fail:
	ERR_clear_error();
	tconn_close(c);
	return -1;
}

static void on_pair(struct rn_ev *ev, uint32_t events)
{
	struct tls_conn *c = ev->owner;

	if (c->state != T_RELAY)
		return;
	if (events & (EPOLLHUP | EPOLLERR)) {
		/* rn_conn closed its end: take what it left, then stop
		 * writing to it */
		rn_loop_del(&c->pair);
		c->pair_out = 1;
		if (pump(c) < 0)
			return;
		pair_gone(c);
	}
	pump(c);
}

static void start_relay(struct tls_conn *c)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0) {
		sbx_warn("tls: %s: socketpair: %s", c->peer, strerror(errno));
		tconn_close(c);
		return;
	}
	/* the request deadline started at accept: the handshake counts */
	if (rn_conn_adopt(c->r, sv[1], 1, c->accepted + RN_REQ_TIMEOUT_MS) < 0) {
		close(sv[0]);
		tconn_close(c);
		return;
	}
	c->pair.fd = sv[0];
	c->pair.cb = on_pair;
	c->pair.owner = c;
	if (rn_loop_add(&c->pair, EPOLLIN) < 0) {
		tconn_close(c);
		return;
	}
	c->state = T_RELAY;
	c->deadline = 0;
	c->rd_want = EPOLLIN;
	/* ACK the peer's last handshake flight now: we send nothing after it
	 * (no session tickets), and a client with Nagle on would hold its
	 * request back for our delayed ACK (about 40 ms on every request) */
	setsockopt(c->net.fd, IPPROTO_TCP, TCP_QUICKACK, &(int){ 1 }, sizeof(int));
	sbx_debug("tls: %s: handshake done (%s)", c->peer, SSL_get_version(c->ssl));
	pump(c);
}

static void on_net(struct rn_ev *ev, uint32_t events)
{
	struct tls_conn *c = ev->owner;
	int rc, e;

	if (c->state == T_RELAY) {
		if (events & (EPOLLHUP | EPOLLERR)) {
			/* level-triggered: out of epoll; pump reads what is
			 * left and ends the connection once it is delivered */
			rn_loop_del(&c->net);
			c->net_out = 1;
		}
		pump(c);
		return;
	}
	if (c->state != T_HANDSHAKE)
		return;
	ERR_clear_error();
	errno = 0;
	rc = SSL_do_handshake(c->ssl);
	if (rc == 1) {
		start_relay(c);
		return;
	}
	e = SSL_get_error(c->ssl, rc);
	if (e == SSL_ERROR_WANT_READ)
		rn_loop_mod(&c->net, EPOLLIN);
	else if (e == SSL_ERROR_WANT_WRITE)
		rn_loop_mod(&c->net, EPOLLOUT);
	else
		refuse(c, e);
}

/* The peer's address (a) and address:port (peer), "?" if unknown. */
static void peer_name(int fd, char a[INET6_ADDRSTRLEN], char *peer, size_t n)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	snprintf(a, INET6_ADDRSTRLEN, "?");
	snprintf(peer, n, "?");
	if (getpeername(fd, (struct sockaddr *)&ss, &len) < 0)
		return;
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &s6->sin6_addr, a, INET6_ADDRSTRLEN);
		snprintf(peer, n, "[%s]:%u", a, ntohs(s6->sin6_port));
	} else if (ss.ss_family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		inet_ntop(AF_INET, &s4->sin_addr, a, INET6_ADDRSTRLEN);
		snprintf(peer, n, "%s:%u", a, ntohs(s4->sin_port));
	}
}

/* Room for one more handshake from addr; NULL, or why not. A walk of the
 * connections (at most TLS_MAX_CONNS), once per accept. */
static const char *handshake_room(const char *addr)
{
	int all = 0, same = 0;

	for (const struct tls_conn *c = tconns; c; c = c->next) {
		if (c->state != T_HANDSHAKE)
			continue;
		all++;
		same += !strcmp(c->addr, addr);
	}
	if (same >= TLS_MAX_HANDSHAKES_PER_ADDR)
		return "too many TLS handshakes in progress from this address";
	if (all >= TLS_MAX_HANDSHAKES)
		return "too many TLS handshakes in progress";
	return NULL;
}

int rn_tls_accept(struct runner *r, int listen_fd)
{
	for (int i = 0; i < 64; i++) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		char addr[INET6_ADDRSTRLEN], peer[sizeof(((struct tls_conn *)0)->peer)];
		const char *full;
		struct tls_conn *c;

		if (fd < 0)
			return errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			       errno == ENOMEM ? -1 : 0;
		peer_name(fd, addr, peer, sizeof(peer));
		full = handshake_room(addr);
		if (full) {
			log_refused(peer, full);
			close(fd);
			continue;
		}
		if (n_tconns >= TLS_MAX_CONNS || !(c = calloc(1, sizeof(*c)))) {
			close(fd);
			continue;
		}
		/* every write is a whole TLS record the peer waits for (a reply,
		 * then close_notify): Nagle would hold the second one back for
		 * the peer's delayed ACK, some 40 ms a request */
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
		c->r = r;
		c->net.fd = fd;
		c->net.cb = on_net;
		c->net.owner = c;
		c->pair.fd = -1;
		c->accepted = rn_now_mono();
		c->deadline = c->accepted + RN_REQ_TIMEOUT_MS;
		memcpy(c->addr, addr, sizeof(c->addr));
		memcpy(c->peer, peer, sizeof(c->peer));
		sbx_buf_init(&c->to_pair, TLS_BUF);
		sbx_buf_init(&c->to_net, TLS_BUF);
		c->ssl = SSL_new(ctx);
		if (!c->ssl || SSL_set_fd(c->ssl, fd) != 1 || rn_loop_add(&c->net, EPOLLIN) < 0) {
			ERR_clear_error();
			SSL_free(c->ssl);
			close(fd);
			free(c);
			continue;
		}
		SSL_set_accept_state(c->ssl);
		c->state = T_HANDSHAKE;
		c->next = tconns;
		tconns = c;
		n_tconns++;
	}
	return 0;
}

int rn_tls_sweep(void)
{
	int64_t now = rn_now_mono(), next = -1;
	struct tls_conn **pp = &tconns;

	while (*pp) {
		struct tls_conn *c = *pp;
		if (c->state != T_DEAD && c->deadline && now >= c->deadline) {
			if (c->state == T_HANDSHAKE)
				log_refused(c->peer, "no complete TLS handshake within the "
					    "request deadline");
			tconn_close(c);
		}
		if (c->state == T_DEAD) {
			*pp = c->next;
			SSL_free(c->ssl);
			sbx_buf_free(&c->to_pair);
			sbx_buf_free(&c->to_net);
			free(c);
			n_tconns--;
			continue;
		}
		if (c->deadline && (next < 0 || c->deadline - now < next))
			next = c->deadline - now;
		pp = &c->next;
	}
	return (int)next;
}

void rn_tls_close_all(void)
{
	for (struct tls_conn *c = tconns; c; c = c->next)
		tconn_close(c);
	rn_tls_sweep();
	SSL_CTX_free(ctx);
	ctx = NULL;
}
