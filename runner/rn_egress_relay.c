/* The decrypted connection after a 101 (rn_egress_mitm.c): a WebSocket or
 * any other upgraded protocol is no HTTP the rules can read, so from here
 * the two decrypted streams are relayed as they are, both ways at once,
 * until both ends closed. Non-blocking with poll, not the blocking reads
 * of the request path: both peers may send at any time, and a blocking
 * write toward one whose reader is busy writing would hold the other
 * direction (each waiting on the other). One buffer per direction bounds
 * memory: a side is read only while the buffer toward the other side is
 * empty. */
#include "rn_egress_relay.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <openssl/err.h>

#define RELAY_BUF (64 * 1024)

struct dir {
	struct eg_relay_end *src, *dst;
	char buf[RELAY_BUF];
	size_t off, len;
	int eof;                /* src ended and dst was told (or is to be) */
	int shut;               /* dst's write side was closed */
	short want_src, want_dst;       /* poll events each side waits for */
};

/* What an SSL call's error asks to wait for: POLLIN, POLLOUT, or -1 for
 * the end of the stream (0 for a clean close_notify). */
static int ssl_wait(SSL *ssl, int r)
{
	switch (SSL_get_error(ssl, r)) {
	case SSL_ERROR_WANT_READ:
		return POLLIN;
	case SSL_ERROR_WANT_WRITE:
		return POLLOUT;
	case SSL_ERROR_ZERO_RETURN:
		return 0;
	default:
		ERR_clear_error();
		return -1;
	}
}

/* Read into d's empty buffer: 1 progress, 0 waits (d->want_src set), -1
 * the end of src (clean or not: the other way may go on). */
static int dir_read(struct dir *d)
{
	long n;

	d->want_src = 0;
	if (d->src->ssl) {
		size_t got = 0;
		int r = SSL_read_ex(d->src->ssl, d->buf, sizeof(d->buf), &got);
		if (r == 1) {
			n = (long)got;
		} else {
			int w = ssl_wait(d->src->ssl, r);
			if (w > 0) {
				d->want_src = (short)w;
				return 0;
			}
			return -1;
		}
	} else {
		n = recv(d->src->fd, d->buf, sizeof(d->buf), MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			d->want_src = POLLIN;
			return 0;
		}
		if (n <= 0)
			return -1;
	}
	d->off = 0;
	d->len = (size_t)n;
	if (d->src->read)
		*d->src->read += (unsigned long long)n;
	return 1;
}

/* Write d's buffer: 1 progress, 0 waits (d->want_dst set), -1 an error. */
static int dir_write(struct dir *d)
{
	long n;

	d->want_dst = 0;
	if (d->dst->ssl) {
		size_t put = 0;
		int r = SSL_write_ex(d->dst->ssl, d->buf + d->off, d->len, &put);
		if (r != 1) {
			int w = ssl_wait(d->dst->ssl, r);
			if (w > 0) {
				d->want_dst = (short)w;
				return 0;
			}
			return -1;
		}
		n = (long)put;
	} else {
		n = send(d->dst->fd, d->buf + d->off, d->len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			d->want_dst = POLLOUT;
			return 0;
		}
		if (n <= 0)
			return -1;
	}
	d->off += (size_t)n;
	d->len -= (size_t)n;
	if (d->dst->written)
		*d->dst->written += (unsigned long long)n;
	return 1;
}

/* src's end reached dst: close_notify (TLS) and the TCP write side. */
static void dir_shut(struct dir *d)
{
	if (d->dst->ssl) {
		SSL_shutdown(d->dst->ssl);
		ERR_clear_error();
	}
	shutdown(d->dst->fd, SHUT_WR);
	d->shut = 1;
}

/* Everything d can do now: 1 if anything moved, 0 if it waits, -1 on an
 * error that ends the relay. */
static int dir_step(struct dir *d)
{
	int moved = 0;

	for (;;) {
		int r;
		if (d->len) {
			r = dir_write(d);
			if (r < 0)
				return -1;
			if (r == 0)
				return moved;
			moved = 1;
			continue;
		}
		if (d->eof) {
			if (!d->shut)
				dir_shut(d), moved = 1;
			return moved;
		}
		r = dir_read(d);
		if (r < 0) {
			d->eof = 1;
			moved = 1;
			continue;
		}
		if (r == 0)
			return moved;
		moved = 1;
	}
}

static void set_nonblocking(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static int relay(struct dir *ab, struct dir *ba, struct eg_relay_end *a, struct eg_relay_end *b,
		 int idle_s);

int eg_relay_upgraded(struct eg_relay_end *a, struct eg_relay_end *b, int idle_s)
{
	struct dir *dirs = malloc(2 * sizeof(*dirs));
	int rc;

	if (!dirs)
		return -1;
	rc = relay(&dirs[0], &dirs[1], a, b, idle_s);
	free(dirs);
	return rc;
}

static int relay(struct dir *ab, struct dir *ba, struct eg_relay_end *a, struct eg_relay_end *b,
		 int idle_s)
{
	*ab = (struct dir){ .src = a, .dst = b };
	*ba = (struct dir){ .src = b, .dst = a };
	/* what each side sent after the 101's head (or after its request)
	 * goes first */
	if (a->pre_len > sizeof(ab->buf) || b->pre_len > sizeof(ba->buf))
		return -1;
	memcpy(ab->buf, a->pre, a->pre_len);
	ab->len = a->pre_len;
	memcpy(ba->buf, b->pre, b->pre_len);
	ba->len = b->pre_len;
	set_nonblocking(a->fd);
	set_nonblocking(b->fd);
	for (;;) {
		struct pollfd p[2] = { { a->fd, 0, 0 }, { b->fd, 0, 0 } };
		int ra = dir_step(ab), rb = dir_step(ba);
		if (ra < 0 || rb < 0)
			return -1;
		if (ab->shut && ba->shut)
			return 0;
		if (ra > 0 || rb > 0)
			continue;
		p[0].events = (short)(ab->want_src | ba->want_dst);
		p[1].events = (short)(ba->want_src | ab->want_dst);
		/* a side nothing waits on is left out: its hang-up alone
		 * would wake poll for ever */
		for (int i = 0; i < 2; i++)
			if (!p[i].events)
				p[i].fd = -1;
		int n = poll(p, 2, idle_s * 1000);
		if (n == 0)
			return -1;      /* both silent for idle_s */
		if (n < 0 && errno != EINTR)
			return -1;
	}
}
