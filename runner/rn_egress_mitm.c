/* The egress proxy's decrypting side (docs/security.md "Credential
 * brokering"): a connection to a name with rules (rn_rules.h). On 443 the
 * sandbox's TLS ends here with a leaf from the runner's CA
 * (rn_egress_ca.c) and ALPN http/1.1 only; port 80 is read as it comes.
 * Each HTTP/1.1 request (keep-alive, chunked bodies, a bounded head) is
 * matched against the rules: a `response` rule answers it here, a
 * `transform` sets its headers on the way out, a `forwardURL` sends it to
 * another HTTPS origin, and any other request goes on unchanged. The
 * server is reached only when a request needs it, over TLS verified
 * against the host's trust (a bad certificate is refused and logged).
 *
 * Each such connection runs in a thread of its own with blocking reads
 * under a timeout: TLS on both sides and HTTP framing make a state
 * machine on the runner's loop large, and these connections are few
 * (EG_MITM_MAX per sandbox); after a 101 it relays the two decrypted
 * streams without blocking (rn_egress_relay.c), and on port 80 bodies
 * go from socket to socket with splice(2). The thread owns its sockets
 * and its copy of the rules; the loop reaches it only under eg_mx, to
 * close its sockets (a policy update that refuses the name, the
 * sandbox's end) or to clear its egress pointer. The injected values go to the server only: they
 * are never logged, and the log names the rule, not its headers. */
#include "rn_egress_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "rn_egress_bio.h"
#include "rn_egress_ca.h"
#include "rn_egress_relay.h"
#include "sbx_http1.h"
#include "sbx_log.h"

#define IO_BUF (SBX_H1_HEAD_MAX + 32768)
#define TLS_RECORD_MAX 16384    /* the most plaintext one record holds */
#define IO_TIMEOUT_S 60         /* a side silent this long ends the connection */
#define CONNECT_TIMEOUT_MS 10000
#define OUT_HEAD_MAX (SBX_H1_HEAD_MAX + 2 * 8192 * 4)
#define SPLICE_PIPE (64 * 1024)

pthread_mutex_t eg_mx = PTHREAD_MUTEX_INITIALIZER;

struct io {
	int fd;
	SSL *ssl;
	const unsigned char *pre;       /* bytes read before the thread (the peek) */
	size_t pre_len;
	char *buf;
	size_t off, len;                /* unread bytes: buf[off, off+len) */
	unsigned long long *count;      /* bytes read, for the log */
	unsigned long long *sent;       /* bytes written, likewise */
	int *pipe;                      /* the thread's pipe for splice(2) between plain
					 * sockets ({-1,-1} until first used), or NULL */
};

struct eg_mitm {
	struct rn_egress *e;            /* NULL once the sandbox's egress is gone */
	int in_fd, out_fd, fwd_fd;      /* -1 when closed; changed under eg_mx */
	int port;
	char name[SBX_PEEK_NAME_MAX];
	char pattern[64];
	struct rn_rules *rules;
	struct rn_cidr cidrs[RN_POLICY_MAX_CIDRS];
	int n_cidrs;
	struct sockaddr_in up;
	unsigned char *pre;
	size_t pre_len;
	unsigned long long bytes_out, bytes_in, requests, by_rule;
	char why[128];                  /* why it ended early, for the log */
	int refused;                    /* the upstream's certificate was refused */
	struct eg_mitm *next;
};

/* ---- reading and writing either side ---- */

static long io_raw_read(struct io *io, char *p, size_t n)
{
	if (io->pre_len) {
		size_t k = n < io->pre_len ? n : io->pre_len;
		memcpy(p, io->pre, k);
		io->pre += k;
		io->pre_len -= k;
		return (long)k;
	}
	if (io->ssl) {
		int r = SSL_read(io->ssl, p, (int)(n > 1 << 30 ? 1 << 30 : n));
		return r > 0 ? r : (SSL_get_error(io->ssl, r) == SSL_ERROR_ZERO_RETURN ? 0 : -1);
	}
	for (;;) {
		ssize_t r = recv(io->fd, p, n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		return r;
	}
}

/* More bytes into the buffer: >0, 0 at the end, -1 on an error or a
 * full buffer. */
static long io_fill(struct io *io)
{
	long r;

	if (io->off && io->len)
		memmove(io->buf, io->buf + io->off, io->len);
	io->off = 0;
	if (io->len >= IO_BUF)
		return -1;
	r = io_raw_read(io, io->buf + io->len, IO_BUF - io->len);
	/* then the records already here as well (SSL_read gives one at a
	 * time), so that one write carries them on: a partial one in the
	 * buffer is on its way, and an error or the end shows again on the
	 * next read */
	for (long k = r; k > 0;) {
		io->len += (size_t)k;
		if (io->count)
			*io->count += (unsigned long long)k;
		if (!io->ssl || IO_BUF - io->len < TLS_RECORD_MAX ||
		    !(SSL_pending(io->ssl) > 0 || SSL_has_pending(io->ssl)))
			break;
		k = io_raw_read(io, io->buf + io->len, IO_BUF - io->len);
	}
	return r;
}

static void io_take(struct io *io, size_t n)
{
	io->off += n;
	io->len -= n;
	if (!io->len)
		io->off = 0;
}

static int io_write_through(struct io *io, const char *c, size_t n)
{
	while (n) {
		long w;
		if (io->ssl) {
			int r = SSL_write(io->ssl, c, (int)(n > 1 << 30 ? 1 << 30 : n));
			w = r > 0 ? r : -1;
		} else {
			w = send(io->fd, c, n, MSG_NOSIGNAL);
			if (w < 0 && errno == EINTR)
				continue;
		}
		if (w <= 0)
			return -1;
		if (io->sent)
			*io->sent += (unsigned long long)w;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* n bytes to io; over TLS, the records they make leave in one send */
static int io_write(struct io *io, const void *p, size_t n)
{
	BIO *wb;
	int rc;

	if (!io->ssl)
		return io_write_through(io, p, n);
	wb = SSL_get_wbio(io->ssl);
	eg_bio_gather(wb);
	rc = io_write_through(io, p, n);
	return eg_bio_send(wb) < 0 ? -1 : rc;
}

/* A parsed head at the start of io's buffer: its length, 0 at a clean end
 * before any byte, -1 malformed or cut, -2 a read error. */
static long io_head(struct io *io, int response, struct sbx_h1_head *h)
{
	for (;;) {
		long n = response ? sbx_h1_response(io->buf + io->off, io->len, h)
				  : sbx_h1_request(io->buf + io->off, io->len, h);
		long r;
		if (n != SBX_H1_MORE)
			return n < 0 ? -1 : n;
		r = io_fill(io);
		if (r == 0)
			return io->len ? -1 : 0;
		if (r < 0)
			return io->len >= IO_BUF ? -1 : -2;
	}
}

/* Between two plain sockets (port 80) a body goes through the kernel:
 * src's socket -> the thread's pipe -> dst's socket, never copied into
 * the runner (after what src's buffer already holds). */
static int can_splice(const struct io *src, const struct io *dst)
{
	if (!dst || src->ssl || dst->ssl || src->pre_len || !src->pipe || src->pipe != dst->pipe)
		return 0;
	if (src->pipe[0] < 0) {
		if (pipe2(src->pipe, O_CLOEXEC) < 0) {
			src->pipe[0] = src->pipe[1] = -1;
			return 0;
		}
		fcntl(src->pipe[1], F_SETPIPE_SZ, SPLICE_PIPE);
	}
	return 1;
}

/* Up to n bytes (n 0: until src ends) from src's socket to dst's through
 * the pipe. 0 when n bytes moved (or src ended, with n 0), -1 else. */
static int splice_n(struct io *src, struct io *dst, unsigned long long n)
{
	int until_close = n == 0;

	while (until_close || n) {
		size_t want = until_close || n > SPLICE_PIPE ? SPLICE_PIPE : (size_t)n;
		ssize_t k = splice(src->fd, NULL, src->pipe[1], NULL, want, SPLICE_F_MOVE);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k == 0 && until_close ? 0 : -1;
		if (src->count)
			*src->count += (unsigned long long)k;
		if (!until_close)
			n -= (unsigned long long)k;
		while (k) {
			ssize_t w = splice(src->pipe[0], NULL, dst->fd, NULL, (size_t)k, SPLICE_F_MOVE);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return -1;
			if (dst->sent)
				*dst->sent += (unsigned long long)w;
			k -= w;
		}
	}
	return 0;
}

/* n bytes of the body from src to dst (dst NULL: dropped). */
static int relay_n(struct io *src, struct io *dst, unsigned long long n)
{
	if (n > src->len && can_splice(src, dst)) {
		size_t k = src->len;
		if (k && io_write(dst, src->buf + src->off, k) < 0)
			return -1;
		io_take(src, k);
		return splice_n(src, dst, n - k);
	}
	while (n) {
		if (!src->len && io_fill(src) <= 0)
			return -1;
		size_t k = src->len < n ? src->len : (size_t)n;
		if (dst && io_write(dst, src->buf + src->off, k) < 0)
			return -1;
		io_take(src, k);
		n -= k;
	}
	return 0;
}

/* A chunked body as it came, through the last chunk and the trailers. */
static int relay_chunked(struct io *src, struct io *dst)
{
	for (;;) {
		unsigned long long size;
		long n = sbx_h1_chunk_line(src->buf + src->off, src->len, &size);
		if (n == SBX_H1_BAD)
			return -1;
		if (n == SBX_H1_MORE) {
			if (io_fill(src) <= 0)
				return -1;
			continue;
		}
		if (dst && io_write(dst, src->buf + src->off, (size_t)n) < 0)
			return -1;
		io_take(src, (size_t)n);
		if (size == 0)
			break;
		if (relay_n(src, dst, size) < 0)
			return -1;
		while (src->len < 2)
			if (io_fill(src) <= 0)
				return -1;
		if (memcmp(src->buf + src->off, "\r\n", 2) != 0)
			return -1;
		if (relay_n(src, dst, 2) < 0)
			return -1;
	}
	/* trailer fields, then the empty line */
	for (;;) {
		char *eol;
		while (!(eol = memchr(src->buf + src->off, '\n', src->len))) {
			if (src->len > 8192 || io_fill(src) <= 0)
				return -1;
		}
		size_t k = (size_t)(eol - (src->buf + src->off)) + 1;
		if (k < 2 || src->buf[src->off + k - 2] != '\r')
			return -1;
		if (dst && io_write(dst, src->buf + src->off, k) < 0)
			return -1;
		io_take(src, k);
		if (k == 2)
			return 0;
	}
}

static int relay_until_close(struct io *src, struct io *dst)
{
	if (can_splice(src, dst)) {
		if (src->len && io_write(dst, src->buf + src->off, src->len) < 0)
			return -1;
		io_take(src, src->len);
		return splice_n(src, dst, 0);
	}
	for (;;) {
		if (src->len) {
			if (io_write(dst, src->buf + src->off, src->len) < 0)
				return -1;
			io_take(src, src->len);
		}
		long r = io_fill(src);
		if (r == 0)
			return 0;
		if (r < 0)
			return -1;
	}
}

static int relay_body(struct io *src, struct io *dst, const struct sbx_h1_head *h)
{
	switch (h->body) {
	case SBX_H1_LENGTH:
		return relay_n(src, dst, h->length);
	case SBX_H1_CHUNKED:
		return relay_chunked(src, dst);
	case SBX_H1_UNTIL_CLOSE:
		return relay_until_close(src, dst);
	default:
		return 0;
	}
}

/* ---- the connection ---- */

static void set_timeouts(int fd)
{
	struct timeval tv = { IO_TIMEOUT_S, 0 };
	int one = 1;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void mitm_log(struct eg_mitm *m, int allowed, const char *rule,
		     unsigned long long out, unsigned long long in)
{
	pthread_mutex_lock(&eg_mx);
	if (m->e)
		eg_log_add_locked(m->e, m->name, m->port, allowed, rule, out, in);
	pthread_mutex_unlock(&eg_mx);
}

static int simple_response(struct io *sb, int status, const char *reason, const char *msg,
			   int close_it)
{
	char head[512];
	int n = snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\n"
			 "Content-Length: %zu\r\n%s\r\n%s", status, reason, strlen(msg),
			 close_it ? "Connection: close\r\n" : "", msg);

	return io_write(sb, head, (size_t)n);
}

/* A blocking connect to a (host byte order checks done by the caller),
 * bounded by CONNECT_TIMEOUT_MS. The fd, or -1. */
static int connect_to(const struct sockaddr_in *a)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct pollfd p;
	int soerr = 0;
	socklen_t sl = sizeof(soerr);

	if (fd < 0)
		return -1;
	if (connect(fd, (const struct sockaddr *)a, sizeof(*a)) < 0 && errno != EINPROGRESS)
		goto fail;
	p.fd = fd;
	p.events = POLLOUT;
	if (poll(&p, 1, CONNECT_TIMEOUT_MS) != 1 ||
	    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr)
		goto fail;
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
		goto fail;
	set_timeouts(fd);
	return fd;
fail:
	close(fd);
	return -1;
}

/* ---- rules applied to one request ---- */

static const char *reason_of(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 301: return "Moved Permanently";
	case 302: return "Found";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 421: return "Misdirected Request";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	default: return "Status";
	}
}

static int rule_response(struct io *sb, const struct rn_rule *r, int close_it)
{
	size_t cap = 1024 + (r->body ? strlen(r->body) : 0), n;
	char *out;
	int rc;

	for (int i = 0; i < r->n_set; i++)
		cap += strlen(r->set[i].name) + strlen(r->set[i].value) + 4;
	if (r->content_type)
		cap += strlen(r->content_type);
	out = malloc(cap);
	if (!out)
		return -1;
	n = (size_t)snprintf(out, cap, "HTTP/1.1 %d %s\r\n", r->status, reason_of(r->status));
	for (int i = 0; i < r->n_set; i++)
		n += (size_t)snprintf(out + n, cap - n, "%s: %s\r\n", r->set[i].name, r->set[i].value);
	if (r->content_type)
		n += (size_t)snprintf(out + n, cap - n, "Content-Type: %s\r\n", r->content_type);
	if (r->status != 204 && r->status != 304)
		n += (size_t)snprintf(out + n, cap - n, "Content-Length: %zu\r\n",
				      r->body ? strlen(r->body) : 0);
	n += (size_t)snprintf(out + n, cap - n, "%s\r\n%s", close_it ? "Connection: close\r\n" : "",
			      r->body ? r->body : "");
	rc = io_write(sb, out, n);
	free(out);
	return rc;
}

/* The request head as it goes out: the transform's headers replace the
 * sandbox's of the same names; a forwarded request goes to the forward
 * origin's path prefix and Host, and says where it was going. */
static char *out_head(const char *p, const struct sbx_h1_head *h, const struct rn_rule *r,
		      const char *fwd_host, int fwd_port, const char *fwd_path,
		      const char *orig_host, size_t *outlen)
{
	size_t cap = (size_t)h->target.len + 512 + (fwd_path ? strlen(fwd_path) : 0), n;
	char *out;

	for (int i = 0; i < h->n_fields; i++)
		cap += h->name[i].len + h->value[i].len + 4;
	for (int i = 0; r && r->kind == RN_RULE_TRANSFORM && i < r->n_set; i++)
		cap += strlen(r->set[i].name) + strlen(r->set[i].value) + 4;
	cap += 2 * SBX_PEEK_NAME_MAX;
	out = malloc(cap);
	if (!out)
		return NULL;
	n = (size_t)snprintf(out, cap, "%.*s %s%.*s HTTP/1.1\r\n", (int)h->method.len,
			     p + h->method.off, fwd_path ? fwd_path : "", (int)h->target.len,
			     p + h->target.off);
	for (int i = 0; i < h->n_fields; i++) {
		int drop = 0;
		if (fwd_host && sbx_h1_is(p, h->name[i], "host"))
			drop = 1;
		for (int k = 0; r && r->kind == RN_RULE_TRANSFORM && k < r->n_set && !drop; k++)
			drop = sbx_h1_is(p, h->name[i], r->set[k].name);
		if (drop)
			continue;
		n += (size_t)snprintf(out + n, cap - n, "%.*s: %.*s\r\n", (int)h->name[i].len,
				      p + h->name[i].off, (int)h->value[i].len, p + h->value[i].off);
	}
	for (int k = 0; r && r->kind == RN_RULE_TRANSFORM && k < r->n_set; k++)
		n += (size_t)snprintf(out + n, cap - n, "%s: %s\r\n", r->set[k].name,
				      r->set[k].value);
	if (fwd_host) {
		if (fwd_port == 443)
			n += (size_t)snprintf(out + n, cap - n, "Host: %s\r\n", fwd_host);
		else
			n += (size_t)snprintf(out + n, cap - n, "Host: %s:%d\r\n", fwd_host, fwd_port);
		n += (size_t)snprintf(out + n, cap - n, "X-Forwarded-Host: %s\r\n", orig_host);
	}
	n += (size_t)snprintf(out + n, cap - n, "\r\n");
	*outlen = n;
	return out;
}

/* The request as the rules see it, in scratch: method, path, query, and
 * the header names lower-cased. */
struct view_store {
	char text[SBX_H1_HEAD_MAX + 64];
	const char *names[SBX_H1_FIELDS_MAX], *values[SBX_H1_FIELDS_MAX];
};

static void make_view(const char *p, const struct sbx_h1_head *h, struct view_store *vs,
		      struct rn_req_view *v)
{
	char *t = vs->text;
	const char *target = p + h->target.off, *q;
	size_t tl = h->target.len, pl;

	memset(v, 0, sizeof(*v));
	memcpy(t, p + h->method.off, h->method.len);
	t[h->method.len] = '\0';
	v->method = t;
	t += h->method.len + 1;
	q = memchr(target, '?', tl);
	pl = q ? (size_t)(q - target) : tl;
	memcpy(t, target, pl);
	t[pl] = '\0';
	v->path = t;
	t += pl + 1;
	if (q) {
		memcpy(t, q + 1, tl - pl - 1);
		t[tl - pl - 1] = '\0';
		v->query = t;
		t += tl - pl;
	} else {
		v->query = "";
	}
	for (int i = 0; i < h->n_fields; i++) {
		for (unsigned k = 0; k < h->name[i].len; k++) {
			char c = p[h->name[i].off + k];
			t[k] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
		}
		t[h->name[i].len] = '\0';
		vs->names[i] = t;
		t += h->name[i].len + 1;
		memcpy(t, p + h->value[i].off, h->value[i].len);
		t[h->value[i].len] = '\0';
		vs->values[i] = t;
		t += h->value[i].len + 1;
	}
	v->n_headers = h->n_fields;
	v->hnames = vs->names;
	v->hvalues = vs->values;
}

/* ---- the server side ---- */

struct upstream {
	int fd;
	SSL *ssl;
	struct io io;
};

/* Close u; *slot is m's record of its socket (out_fd or fwd_fd), which
 * the loop may shut down meanwhile: changed under eg_mx. */
static void up_close(struct upstream *u, int *slot)
{
	if (u->ssl) {
		SSL_free(u->ssl);
		u->ssl = NULL;
	}
	pthread_mutex_lock(&eg_mx);
	if (*slot >= 0)
		close(*slot);
	*slot = -1;
	pthread_mutex_unlock(&eg_mx);
	u->fd = -1;
	u->io.len = u->io.off = 0;
}

/* Connect u to a, over TLS verified as name when tls. 0, or -1 with
 * m->why set (refused: the certificate). */
static int up_open(struct eg_mitm *m, struct upstream *u, int *slot,
		   const struct sockaddr_in *a, const char *name, int tls)
{
	struct sbx_err err = { 0, "" };
	int fd = connect_to(a);
	BIO *b;

	if (fd < 0) {
		snprintf(m->why, sizeof(m->why), "connect to %s failed", name);
		return -1;
	}
	pthread_mutex_lock(&eg_mx);
	*slot = fd;
	if (!m->e) {
		shutdown(fd, SHUT_RDWR);
	}
	pthread_mutex_unlock(&eg_mx);
	u->fd = fd;
	u->io.fd = fd;
	u->io.ssl = NULL;
	u->io.len = u->io.off = 0;
	if (!tls)
		return 0;
	u->ssl = rn_egress_ca_client(name, &err);
	if (!u->ssl || !(b = eg_bio_new(fd, NULL, 0))) {
		snprintf(m->why, sizeof(m->why), "%.100s", u->ssl ? "out of memory" : err.msg);
		return -1;
	}
	SSL_set_bio(u->ssl, b, b);
	if (SSL_connect(u->ssl) != 1) {
		long v = SSL_get_verify_result(u->ssl);
		if (v != X509_V_OK) {
			snprintf(m->why, sizeof(m->why), "upstream certificate refused: %s",
				 X509_verify_cert_error_string(v));
			m->refused = 1;
		} else {
			snprintf(m->why, sizeof(m->why), "upstream TLS failed");
		}
		ERR_clear_error();
		return -1;
	}
	u->io.ssl = u->ssl;
	return 0;
}

/* The forward origin's address: an IPv4 literal or a name the host's
 * resolver answers; never an address the sandbox may not reach. */
static int forward_addr(struct eg_mitm *m, const char *host, int port, struct sockaddr_in *a)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res, *it;
	const char *why = NULL;

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)port);
	if (getaddrinfo(host, NULL, &hints, &res) != 0) {
		snprintf(m->why, sizeof(m->why), "forwardURL: %.60s does not resolve", host);
		return -1;
	}
	for (it = res; it; it = it->ai_next) {
		uint32_t ip = ntohl(((struct sockaddr_in *)it->ai_addr)->sin_addr.s_addr);
		struct rn_policy p = { 0 };
		p.n_cidrs = m->n_cidrs;
		memcpy(p.cidrs, m->cidrs, sizeof(p.cidrs));
		why = rn_policy_addr_denied(&p, ip);
		if (!why) {
			a->sin_addr.s_addr = htonl(ip);
			freeaddrinfo(res);
			return 0;
		}
	}
	freeaddrinfo(res);
	snprintf(m->why, sizeof(m->why), "forwardURL: %.60s is %s", host, why);
	return -1;
}

/* ---- one request ---- */

enum { REQ_NEXT = 0, REQ_END = 1, REQ_UPGRADED = 2 };

/* The response to the request just sent on u, relayed to the sandbox.
 * REQ_NEXT when the connection may carry another request, REQ_UPGRADED
 * after a 101. */
static int relay_response(struct eg_mitm *m, struct io *sb, struct upstream *u, int head_req)
{
	struct sbx_h1_head rh;

	for (;;) {
		long rl = io_head(&u->io, 1, &rh);
		if (rl <= 0) {
			snprintf(m->why, sizeof(m->why), "no response from the server");
			simple_response(sb, 502, "Bad Gateway", "egress: no response from the server\n", 1);
			return REQ_END;
		}
		if (io_write(sb, u->io.buf + u->io.off, (size_t)rl) < 0)
			return REQ_END;
		io_take(&u->io, (size_t)rl);
		if (rh.status == 101)
			return REQ_UPGRADED;    /* its bytes follow: the caller relays them */
		if (rh.status >= 100 && rh.status < 200)
			continue;               /* 100 Continue and the like: the final one follows */
		break;
	}
	if (!head_req && rh.status != 204 && rh.status != 304 &&
	    relay_body(&u->io, sb, &rh) < 0)
		return REQ_END;
	return rh.close || rh.body == SBX_H1_UNTIL_CLOSE ? REQ_END : REQ_NEXT;
}

/* After a 101 on u: the decrypted streams relayed both ways until both
 * close (rn_egress_relay.c); what either side sent past the HTTP goes
 * first. Always REQ_END. */
static int relay_upgraded(struct eg_mitm *m, struct io *sb, struct upstream *u)
{
	struct eg_relay_end a = { m->in_fd, sb->ssl, sb->buf + sb->off, sb->len, &m->bytes_out,
				  &m->bytes_in };
	struct eg_relay_end b = { u->fd, u->ssl, u->io.buf + u->io.off, u->io.len, NULL, NULL };

	if (sb->pre_len) {      /* the peek held more than one request: not relayed */
		snprintf(m->why, sizeof(m->why), "upgraded (101) with requests pipelined after it");
		return REQ_END;
	}
	snprintf(m->why, sizeof(m->why), "upgraded (101)%s",
		 eg_relay_upgraded(&a, &b, IO_TIMEOUT_S) < 0 ? ", relay ended by an error or idle" : "");
	io_take(sb, sb->len);
	io_take(&u->io, u->io.len);
	return REQ_END;
}

static int one_request(struct eg_mitm *m, struct io *sb, struct upstream *up,
		       struct view_store *vs)
{
	struct sbx_h1_head h;
	struct rn_req_view v;
	const struct rn_rule *r;
	char host[SBX_PEEK_NAME_MAX];
	long hl = io_head(sb, 0, &h);
	const char *p;
	size_t outlen;
	char *out;
	int rc, head_req;

	if (hl == 0 || hl == -2)
		return REQ_END;
	if (hl < 0) {
		snprintf(m->why, sizeof(m->why), "malformed request");
		simple_response(sb, 400, "Bad Request", "egress: malformed request\n", 1);
		return REQ_END;
	}
	p = sb->buf + sb->off;
	m->requests++;
	/* the name the connection was allowed for, and no other */
	if (sbx_host_peek((const unsigned char *)p, (size_t)hl, host) != SBX_PEEK_NAME ||
	    strcmp(host, m->name) != 0) {
		snprintf(m->why, sizeof(m->why), "Host is not %.60s", m->name);
		simple_response(sb, 421, "Misdirected Request", "egress: the Host is not the name "
				"this connection is for\n", 1);
		return REQ_END;
	}
	make_view(p, &h, vs, &v);
	head_req = strcmp(v.method, "HEAD") == 0;
	r = rn_rules_pick(m->rules, &v);
	if (r)
		m->by_rule++;
	if (r && r->kind == RN_RULE_RESPONSE) {
		io_take(sb, (size_t)hl);
		if (relay_body(sb, NULL, &h) < 0 || rule_response(sb, r, h.close) < 0)
			return REQ_END;
		return h.close ? REQ_END : REQ_NEXT;
	}
	if (r && r->kind == RN_RULE_FORWARD) {
		char fhost[256], fpath[1024];
		int fport;
		struct sockaddr_in fa;
		struct upstream fw = { -1, NULL, { 0 } };
		if (rn_forward_url_split(r->forward_url, fhost, sizeof(fhost), &fport, fpath,
					 sizeof(fpath)) < 0 || forward_addr(m, fhost, fport, &fa) < 0) {
			simple_response(sb, 502, "Bad Gateway", "egress: forwardURL unreachable\n", 1);
			return REQ_END;
		}
		fw.io.buf = malloc(IO_BUF);
		if (!fw.io.buf) {
			simple_response(sb, 502, "Bad Gateway", "egress: out of memory\n", 1);
			return REQ_END;
		}
		if (up_open(m, &fw, &m->fwd_fd, &fa, fhost, 1) < 0) {
			up_close(&fw, &m->fwd_fd);
			free(fw.io.buf);
			simple_response(sb, 502, "Bad Gateway", "egress: forwardURL unreachable\n", 1);
			return REQ_END;
		}
		out = out_head(p, &h, r, fhost, fport, fpath, m->name, &outlen);
		io_take(sb, (size_t)hl);
		rc = !out || io_write(&fw.io, out, outlen) < 0 || relay_body(sb, &fw.io, &h) < 0
		     ? REQ_END : relay_response(m, sb, &fw, head_req);
		free(out);
		if (rc == REQ_UPGRADED)
			rc = relay_upgraded(m, sb, &fw);
		up_close(&fw, &m->fwd_fd);
		free(fw.io.buf);
		return rc == REQ_END || h.close ? REQ_END : REQ_NEXT;
	}
	if (up->fd < 0 && up_open(m, up, &m->out_fd, &m->up, m->name, m->port == 443) < 0) {
		simple_response(sb, 502, "Bad Gateway", m->refused ?
				"egress: the server's certificate was refused\n" :
				"egress: cannot reach the server\n", 1);
		return REQ_END;
	}
	out = out_head(p, &h, r, NULL, 0, NULL, m->name, &outlen);
	io_take(sb, (size_t)hl);
	rc = !out || io_write(&up->io, out, outlen) < 0 || relay_body(sb, &up->io, &h) < 0
	     ? REQ_END : relay_response(m, sb, up, head_req);
	free(out);
	if (rc == REQ_UPGRADED)
		rc = relay_upgraded(m, sb, up);
	if (rc == REQ_END)
		up_close(up, &m->out_fd);
	return rc == REQ_END || h.close ? REQ_END : REQ_NEXT;
}

/* ---- the thread ---- */

static struct eg_mitm *mitms;   /* every running one, under eg_mx */

static void mitm_end(struct eg_mitm *m)
{
	struct eg_mitm **pp;
	char rule[256];

	if (m->refused) {
		mitm_log(m, 0, m->why, m->bytes_out, m->bytes_in);
	} else {
		/* and why it ended early (the sandbox's TLS, a malformed request) */
		snprintf(rule, sizeof(rule), "%.60s; decrypted, %llu/%llu by rule%s%.60s",
			 m->pattern, m->by_rule, m->requests, m->why[0] ? "; " : "", m->why);
		mitm_log(m, 1, rule, m->bytes_out, m->bytes_in);
	}
	pthread_mutex_lock(&eg_mx);
	for (pp = &mitms; *pp && *pp != m; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = m->next;
	if (m->in_fd >= 0)
		close(m->in_fd);
	if (m->out_fd >= 0)
		close(m->out_fd);
	if (m->fwd_fd >= 0)
		close(m->fwd_fd);
	pthread_mutex_unlock(&eg_mx);
	rn_rules_free(m->rules);
	free(m->pre);
	free(m);
}

static void *mitm_main(void *arg)
{
	struct eg_mitm *m = arg;
	int pipefd[2] = { -1, -1 };
	struct io sb = { .fd = m->in_fd, .count = &m->bytes_out, .sent = &m->bytes_in,
			 .pipe = m->port == 80 ? pipefd : NULL };
	struct upstream up = { -1, NULL, { .fd = -1, .count = NULL, .pipe = sb.pipe } };
	struct view_store *vs = malloc(sizeof(*vs));
	SSL *ssl = NULL;

	sb.buf = malloc(IO_BUF);
	up.io.buf = malloc(IO_BUF);
	if (!vs || !sb.buf || !up.io.buf)
		goto out;
	set_timeouts(m->in_fd);
	if (m->port == 443) {
		struct sbx_err err = { 0, "" };
		BIO *b;
		ssl = rn_egress_ca_server(m->name, &err);
		if (!ssl || !(b = eg_bio_new(m->in_fd, m->pre, m->pre_len))) {
			snprintf(m->why, sizeof(m->why), "%.100s", ssl ? "out of memory" : err.msg);
			goto out;
		}
		SSL_set_bio(ssl, b, b);
		if (SSL_accept(ssl) != 1) {
			ERR_clear_error();
			snprintf(m->why, sizeof(m->why), "the sandbox's TLS failed");
			goto out;
		}
		sb.ssl = ssl;
	} else {
		sb.pre = m->pre;
		sb.pre_len = m->pre_len;
	}
	while (one_request(m, &sb, &up, vs) == REQ_NEXT)
		;
out:
	if (up.fd >= 0)
		up_close(&up, &m->out_fd);
	if (ssl) {
		SSL_shutdown(ssl);
		SSL_free(ssl);
	}
	for (int i = 0; i < 2; i++)
		if (pipefd[i] >= 0)
			close(pipefd[i]);
	free(sb.buf);
	free(up.io.buf);
	free(vs);
	mitm_end(m);
	return NULL;
}

int eg_mitm_start(struct rn_egress *e, int in_fd, const struct sockaddr_in *up, int port,
		  const char *name, const char *pattern, struct rn_rules *rules,
		  const unsigned char *pre, size_t pre_len, struct sbx_err *err)
{
	struct eg_mitm *m;
	pthread_attr_t at;
	pthread_t t;
	int n = 0, rc;

	pthread_mutex_lock(&eg_mx);
	for (struct eg_mitm *x = mitms; x; x = x->next)
		n += x->e == e;
	pthread_mutex_unlock(&eg_mx);
	if (n >= EG_MITM_MAX)
		return sbx_err_set(err, EAGAIN, "too many decrypted connections");
	m = calloc(1, sizeof(*m));
	if (!m || !(m->pre = malloc(pre_len ? pre_len : 1))) {
		free(m);
		return sbx_err_set(err, ENOMEM, "out of memory");
	}
	memcpy(m->pre, pre, pre_len);
	m->pre_len = pre_len;
	m->e = e;
	m->in_fd = in_fd;
	m->out_fd = m->fwd_fd = -1;
	m->port = port;
	m->up = *up;
	m->rules = rules;
	snprintf(m->name, sizeof(m->name), "%s", name);
	snprintf(m->pattern, sizeof(m->pattern), "%s", pattern);
	if (eg_mode(e) == RN_NET_POLICY && e->sb->spec.policy) {
		m->n_cidrs = e->sb->spec.policy->n_cidrs;
		memcpy(m->cidrs, e->sb->spec.policy->cidrs, sizeof(m->cidrs));
	}
	/* blocking from here on: the thread reads with timeouts */
	fcntl(in_fd, F_SETFL, fcntl(in_fd, F_GETFL) & ~O_NONBLOCK);
	pthread_mutex_lock(&eg_mx);
	m->next = mitms;
	mitms = m;
	pthread_mutex_unlock(&eg_mx);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 1 << 20);
	rc = pthread_create(&t, &at, mitm_main, m);
	pthread_attr_destroy(&at);
	if (rc != 0) {
		pthread_mutex_lock(&eg_mx);
		for (struct eg_mitm **pp = &mitms; *pp; pp = &(*pp)->next)
			if (*pp == m) {
				*pp = m->next;
				break;
			}
		pthread_mutex_unlock(&eg_mx);
		m->rules = NULL;        /* the caller's still */
		free(m->pre);
		free(m);
		return sbx_err_set(err, rc, "thread: %s", strerror(rc));
	}
	return 0;
}

/* Under eg_mx: wake m's thread by shutting its sockets down. */
static void mitm_stop_locked(struct eg_mitm *m)
{
	if (m->in_fd >= 0)
		shutdown(m->in_fd, SHUT_RDWR);
	if (m->out_fd >= 0)
		shutdown(m->out_fd, SHUT_RDWR);
	if (m->fwd_fd >= 0)
		shutdown(m->fwd_fd, SHUT_RDWR);
}

void eg_mitm_detach_all(struct rn_egress *e)
{
	pthread_mutex_lock(&eg_mx);
	for (struct eg_mitm *m = mitms; m; m = m->next)
		if (m->e == e) {
			m->e = NULL;
			mitm_stop_locked(m);
		}
	pthread_mutex_unlock(&eg_mx);
}

void eg_mitm_recheck(struct rn_egress *e)
{
	pthread_mutex_lock(&eg_mx);
	for (struct eg_mitm *m = mitms; m; m = m->next)
		if (m->e == e && !eg_allowed(e, m->name)) {
			eg_log_add_locked(e, m->name, m->port, 0, "policy update", m->bytes_out,
					  m->bytes_in);
			mitm_stop_locked(m);
		}
	pthread_mutex_unlock(&eg_mx);
}
