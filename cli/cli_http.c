#include "cli_http.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#define HEAD_MAX 16384

enum body_mode { BODY_LENGTH, BODY_CHUNKED, BODY_CLOSE };

struct cli_http {
	int fd;
	SSL_CTX *ctx;
	SSL *ssl;
	unsigned char in[65536];    /* bytes read, not yet handed out */
	size_t in_off, in_len;
	enum body_mode mode;
	unsigned long long left;    /* LENGTH: body bytes to come; CHUNKED: of this chunk */
	int chunk_started, done;
};

int cli_url_parse(const char *s, struct cli_url *u, struct sbx_err *err)
{
	const char *p, *slash, *colon;
	size_t hl;

	memset(u, 0, sizeof(*u));
	if (!strncmp(s, "http://", 7)) {
		p = s + 7;
	} else if (!strncmp(s, "https://", 8)) {
		p = s + 8;
		u->tls = 1;
	} else {
		return sbx_err_set(err, EINVAL, "URL %s: not http:// or https://", s);
	}
	slash = strchr(p, '/');
	if (!slash)
		slash = p + strlen(p);
	colon = memchr(p, ':', (size_t)(slash - p));
	if (*p == '[') { /* [v6]:port */
		const char *rb = memchr(p, ']', (size_t)(slash - p));

		if (!rb)
			return sbx_err_set(err, EINVAL, "URL %s: bad IPv6 address", s);
		colon = rb[1] == ':' ? rb + 1 : NULL;
		p++;
		hl = (size_t)(rb - p);
	} else {
		hl = (size_t)((colon ? colon : slash) - p);
	}
	if (!hl || hl >= sizeof(u->host))
		return sbx_err_set(err, EINVAL, "URL %s: bad host", s);
	memcpy(u->host, p, hl);
	if (colon) {
		size_t pl = (size_t)(slash - colon - 1);

		if (!pl || pl > 5 || strspn(colon + 1, "0123456789") < pl)
			return sbx_err_set(err, EINVAL, "URL %s: bad port", s);
		memcpy(u->port, colon + 1, pl);
		if (atoi(u->port) < 1 || atoi(u->port) > 65535)
			return sbx_err_set(err, EINVAL, "URL %s: bad port", s);
	} else {
		strcpy(u->port, u->tls ? "443" : "80");
	}
	if (strlen(slash) >= sizeof(u->prefix))
		return sbx_err_set(err, EINVAL, "URL %s: path too long", s);
	strcpy(u->prefix, slash);
	hl = strlen(u->prefix);
	while (hl && u->prefix[hl - 1] == '/')
		u->prefix[--hl] = '\0';
	return 0;
}

int cli_http_unreachable(const struct sbx_err *err)
{
	return err->code == ECONNREFUSED || err->code == EHOSTUNREACH ||
	       err->code == ENETUNREACH || err->code == ETIMEDOUT ||
	       err->code == EADDRNOTAVAIL || err->code == ENOENT;
}

static int tcp_connect(const struct cli_url *u, struct sbx_err *err)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	int fd = -1, rc, saved = ECONNREFUSED;

	rc = getaddrinfo(u->host, u->port, &hints, &res);
	if (rc)
		return sbx_err_set(err, ENOENT, "cannot resolve %s: %s", u->host,
				   gai_strerror(rc));
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			saved = errno;
			continue;
		}
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		saved = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		errno = saved;
		return sbx_err_sys(err, "connect to %s:%s", u->host, u->port);
	}
	return fd;
}

static int tls_start(struct cli_http *h, const struct cli_url *u, struct sbx_err *err)
{
	h->ctx = SSL_CTX_new(TLS_client_method());
	if (!h->ctx)
		return sbx_err_set(err, ENOMEM, "TLS: no context");
	SSL_CTX_set_default_verify_paths(h->ctx);
	SSL_CTX_set_verify(h->ctx, SSL_VERIFY_PEER, NULL);
	h->ssl = SSL_new(h->ctx);
	if (!h->ssl || !SSL_set_fd(h->ssl, h->fd) ||
	    !SSL_set_tlsext_host_name(h->ssl, u->host) || !SSL_set1_host(h->ssl, u->host))
		return sbx_err_set(err, ENOMEM, "TLS: cannot set up the connection");
	if (SSL_connect(h->ssl) != 1) {
		char why[256];

		ERR_error_string_n(ERR_get_error(), why, sizeof(why));
		return sbx_err_set(err, EPROTO, "TLS handshake with %s failed: %s", u->host, why);
	}
	return 0;
}

static int send_all(struct cli_http *h, const void *p, size_t n, struct sbx_err *err)
{
	const char *c = p;

	while (n) {
		ssize_t w;

		if (h->ssl) {
			int k = SSL_write(h->ssl, c, n > 65536 ? 65536 : (int)n);

			if (k <= 0)
				return sbx_err_set(err, EPIPE, "TLS write failed");
			w = k;
		} else {
			w = send(h->fd, c, n, MSG_NOSIGNAL);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return sbx_err_sys(err, "send to the gateway");
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Fill the input buffer with more bytes; 0 at the peer's close. */
static ssize_t fill(struct cli_http *h, struct sbx_err *err)
{
	ssize_t r;

	if (h->in_off && h->in_len)
		memmove(h->in, h->in + h->in_off, h->in_len);
	h->in_off = 0;
	if (h->in_len == sizeof(h->in))
		return sbx_err_set(err, EPROTO, "response line too long");
	for (;;) {
		if (h->ssl) {
			int k = SSL_read(h->ssl, h->in + h->in_len, (int)(sizeof(h->in) - h->in_len));

			if (k <= 0) {
				int e = SSL_get_error(h->ssl, k);

				if (e == SSL_ERROR_ZERO_RETURN || e == SSL_ERROR_SYSCALL)
					return 0;
				return sbx_err_set(err, EPROTO, "TLS read failed");
			}
			r = k;
		} else {
			r = recv(h->fd, h->in + h->in_len, sizeof(h->in) - h->in_len, 0);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return sbx_err_sys(err, "read from the gateway");
		}
		h->in_len += (size_t)r;
		return r;
	}
}

/* The next CRLF-terminated line of the input (CRLF cut off), or NULL. */
static char *read_line(struct cli_http *h, struct sbx_err *err)
{
	for (;;) {
		unsigned char *s = h->in + h->in_off;
		unsigned char *nl = memchr(s, '\n', h->in_len);
		ssize_t r;

		if (nl) {
			size_t n = (size_t)(nl - s) + 1;

			*nl = '\0';
			if (nl > s && nl[-1] == '\r')
				nl[-1] = '\0';
			h->in_off += n;
			h->in_len -= n;
			return (char *)s;
		}
		r = fill(h, err);
		if (r < 0)
			return NULL;
		if (r == 0) {
			sbx_err_set(err, EPROTO, "the gateway closed the connection mid-response");
			return NULL;
		}
	}
}

static int read_head(struct cli_http *h, int *status, struct sbx_err *err)
{
	char *line;
	int have_len = 0;
	size_t total = 0;

	line = read_line(h, err);
	if (!line)
		return -1;
	if (sscanf(line, "HTTP/1.%*d %d", status) != 1)
		return sbx_err_set(err, EPROTO, "not an HTTP response: %.60s", line);
	h->mode = BODY_CLOSE;
	for (;;) {
		line = read_line(h, err);
		if (!line)
			return -1;
		total += strlen(line);
		if (total > HEAD_MAX)
			return sbx_err_set(err, EPROTO, "response head too large");
		if (!*line)
			break;
		if (!strncasecmp(line, "Content-Length:", 15)) {
			h->left = strtoull(line + 15, NULL, 10);
			have_len = 1;
		} else if (!strncasecmp(line, "Transfer-Encoding:", 18) &&
			   strcasestr(line + 18, "chunked")) {
			h->mode = BODY_CHUNKED;
		}
	}
	if (h->mode != BODY_CHUNKED && have_len)
		h->mode = BODY_LENGTH;
	if (*status == 204 || *status == 304)
		h->done = 1;
	return 0;
}

struct cli_http *cli_http_request(const struct cli_url *u, const char *key,
				  const char *method, const char *path,
				  const struct cli_body *body, int *status,
				  struct sbx_err *err)
{
	struct cli_http *h = calloc(1, sizeof(*h));
	char head[4096];
	int n;

	if (!h) {
		sbx_err_set(err, ENOMEM, "out of memory");
		return NULL;
	}
	h->fd = tcp_connect(u, err);
	if (h->fd < 0)
		goto fail;
	if (u->tls && tls_start(h, u, err))
		goto fail;
	n = snprintf(head, sizeof(head),
		     "%s %s%s HTTP/1.1\r\nHost: %s:%s\r\nUser-Agent: sbx\r\nConnection: close\r\n"
		     "%s%s%s",
		     method, u->prefix, path, u->host, u->port,
		     key && *key ? "Authorization: Bearer " : "", key && *key ? key : "",
		     key && *key ? "\r\n" : "");
	if (n < 0 || (size_t)n >= sizeof(head) - 200) {
		sbx_err_set(err, E2BIG, "request path too long");
		goto fail;
	}
	if (body) {
		n += snprintf(head + n, sizeof(head) - (size_t)n,
			      "Content-Length: %zu\r\nContent-Type: %s\r\n", body->len,
			      body->type ? body->type : "application/octet-stream");
	}
	n += snprintf(head + n, sizeof(head) - (size_t)n, "\r\n");
	if (send_all(h, head, (size_t)n, err))
		goto fail;
	if (body && body->fd < 0 && send_all(h, body->data, body->len, err))
		goto fail;
	if (body && body->fd >= 0) {
		size_t left = body->len;

		while (left) {
			ssize_t r = read(body->fd, h->in, left < sizeof(h->in) ? left : sizeof(h->in));

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				sbx_err_set(err, EIO, "reading the body: %s",
					    r ? strerror(errno) : "it ended early");
				goto fail;
			}
			if (send_all(h, h->in, (size_t)r, err)) {
				/* the gateway may have answered early (413, 404): show that */
				break;
			}
			left -= (size_t)r;
		}
	}
	if (read_head(h, status, err))
		goto fail;
	return h;
fail:
	cli_http_close(h);
	return NULL;
}

ssize_t cli_http_read(struct cli_http *h, void *buf, size_t n, struct sbx_err *err)
{
	size_t k;

	while (!h->done) {
		if (h->mode == BODY_CHUNKED && !h->left) {
			char *line;

			if (h->chunk_started) { /* the CRLF after a chunk's data */
				line = read_line(h, err);
				if (!line)
					return -1;
			}
			line = read_line(h, err);
			if (!line)
				return -1;
			h->left = strtoull(line, NULL, 16);
			h->chunk_started = 1;
			if (!h->left) {
				h->done = 1;
				break;
			}
		}
		if (h->mode == BODY_LENGTH && !h->left) {
			h->done = 1;
			break;
		}
		if (!h->in_len) {
			ssize_t r = fill(h, err);

			if (r < 0)
				return -1;
			if (r == 0) {
				if (h->mode == BODY_CLOSE) {
					h->done = 1;
					break;
				}
				return sbx_err_set(err, EPROTO, "the gateway closed the connection mid-body");
			}
		}
		k = h->in_len < n ? h->in_len : n;
		if (h->mode != BODY_CLOSE && k > h->left)
			k = (size_t)h->left;
		memcpy(buf, h->in + h->in_off, k);
		h->in_off += k;
		h->in_len -= k;
		if (h->mode != BODY_CLOSE)
			h->left -= k;
		return (ssize_t)k;
	}
	return 0;
}

char *cli_http_read_all(struct cli_http *h, size_t cap, size_t *len, struct sbx_err *err)
{
	size_t n = 0, alloc = 4096;
	char *s = malloc(alloc);

	if (!s) {
		sbx_err_set(err, ENOMEM, "out of memory");
		return NULL;
	}
	for (;;) {
		ssize_t r;

		if (alloc - n < 1025) {
			char *t;

			if (alloc >= cap + 1025) {
				free(s);
				sbx_err_set(err, EFBIG, "response over %zu bytes", cap);
				return NULL;
			}
			t = realloc(s, alloc * 2);
			if (!t) {
				free(s);
				sbx_err_set(err, ENOMEM, "out of memory");
				return NULL;
			}
			s = t;
			alloc *= 2;
		}
		r = cli_http_read(h, s + n, alloc - n - 1, err);
		if (r < 0) {
			free(s);
			return NULL;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	s[n] = '\0';
	if (len)
		*len = n;
	return s;
}

void cli_http_close(struct cli_http *h)
{
	if (!h)
		return;
	if (h->ssl) {
		SSL_shutdown(h->ssl);
		SSL_free(h->ssl);
	}
	if (h->ctx)
		SSL_CTX_free(h->ctx);
	if (h->fd > 0)
		close(h->fd);
	free(h);
}
