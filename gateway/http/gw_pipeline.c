/* Requests that follow one another on an API connection (gw_pipeline.h).
 *
 * lws 4.1.6's HTTP/1 server reads ahead: what a client sends behind a
 * request (a pipelined request) lands in the connection's buffer list,
 * and lws parses it from there once the previous transaction completed.
 * Two of its paths break on such input:
 * - while a request is being answered, the bytes behind it are handed back
 *   to the parser on every turn of the event loop and consumed by nobody:
 *   for a request with a body, each turn repeats BODY_COMPLETION; for one
 *   without, the loop spins with nothing to wait for;
 * - a request with a body that lws parses out of that buffer goes through
 *   lws_http_action's loop over the buffer list, which reads the request's
 *   own head again as its body and then, with nothing consumed, loops for
 *   ever inside one callback (the event loop, signals included, stops).
 * So once a request is all in, the connection is held (lws reads nothing
 * more) while its response has nothing to write, and a request with a
 * body that lws took from its read-ahead is refused before lws reaches
 * that loop, with the connection closed. Requests without a body are
 * served in order. lws 4.1.6 gives a connection whose reading is stopped
 * no WRITEABLE callback either, so the hold is lifted whenever the
 * response has something to write, and put back when it waits again.
 * To tell read-ahead from a fresh read, the bytes lws has taken from the
 * connection are counted when lws starts it and whenever a transaction
 * ends (lws binds the connection's protocol again then, whoever ended
 * it): a request parsed while that count stands still came from lws's
 * own buffer, because lws reads the socket only once its buffer is empty. */
#include <errno.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <openssl/bio.h>
#include <openssl/ssl.h>
#include "gw_pipeline.h"

/* Our own reason bit in lws's rx flow bitmap (bit 0 is the plain on/off
 * the handlers use for back-pressure), so neither undoes the other. */
#define PIPE_RXFLOW_BIT (1 << 1)

/* tcpi_state values (the kernel's net/tcp_states.h; <linux/tcp.h>, which
 * has tcpi_bytes_received, does not export them) */
enum { STATE_CLOSE = 7, STATE_CLOSE_WAIT = 8 };

/* The bytes lws has taken from the connection: over TLS those OpenSSL's
 * socket BIO read, over TCP those the kernel received less those still
 * queued (read twice until no segment arrived in between). -1 unknown. */
static int taken(struct lws *wsi, uint64_t *out)
{
	if (lws_is_ssl(wsi)) {
		SSL *ssl = lws_get_ssl(wsi);
		BIO *rb = ssl ? SSL_get_rbio(ssl) : NULL;
		if (!rb)
			return -1;
		*out = (uint64_t)BIO_number_read(rb);
		return 0;
	}
	int fd = (int)lws_get_socket_fd(wsi);
	for (int tries = 0; fd >= 0 && tries < 4; tries++) {
		struct tcp_info a, b;
		socklen_t la = sizeof a, lb = sizeof b;
		int queued = 0;
		if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &a, &la) ||
		    ioctl(fd, SIOCINQ, &queued) ||
		    getsockopt(fd, IPPROTO_TCP, TCP_INFO, &b, &lb))
			return -1;
		if (la < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof a.tcpi_bytes_received)
			return -1;   /* a kernel older than 4.1 */
		if (a.tcpi_bytes_received == b.tcpi_bytes_received) {
			*out = b.tcpi_bytes_received - (uint64_t)queued;
			return 0;
		}
	}
	return -1;
}

struct gw_pipe *gw_pipe_begin(struct lws *wsi)
{
	struct gw_pipe *p = lws_get_opaque_user_data(wsi);
	if (!p && (p = calloc(1, sizeof *p)))
		lws_set_opaque_user_data(wsi, p);
	return p;
}

void gw_pipe_free(struct lws *wsi)
{
	free(lws_get_opaque_user_data(wsi));
	lws_set_opaque_user_data(wsi, NULL);
}

void gw_pipe_mark(struct lws *wsi)
{
	struct gw_pipe *p = gw_pipe_begin(wsi);
	if (!p)
		return;
	p->prev = p->cur;
	p->prev_ok = p->cur_ok;
	p->cur_ok = !taken(wsi, &p->cur);
	p->binds++;
}

int gw_pipe_read_ahead(const struct gw_pipe *p, struct lws *wsi)
{
	uint64_t now;

	/* the last bind was this request's own; the one before it ended
	 * the previous transaction (or started the connection) */
	if (p->binds < 2)
		return 0;   /* nothing came before on this connection */
	if (!p->prev_ok || taken(wsi, &now))
		return 1;   /* unknown: the safe answer */
	return now == p->prev;
}

static void hold(struct gw_pipe *p, struct lws *wsi, int on)
{
	if (p->held == on)
		return;
	p->held = on;
	lws_rx_flow_control(wsi, (on ? LWS_RXFLOW_REASON_APPLIES_DISABLE :
				  LWS_RXFLOW_REASON_APPLIES_ENABLE | LWS_RXFLOW_REASON_FLAG_PROCESS_NOW) |
			    PIPE_RXFLOW_BIT);
}

void gw_pipe_all_in(struct lws *wsi)
{
	struct gw_pipe *p = lws_get_opaque_user_data(wsi);
	if (!p)
		return;
	p->in_body = 0;
	p->all_in = 1;
	if (!p->want)   /* an answer given at once is written first */
		hold(p, wsi, 1);
}

void gw_pipe_want_write(struct lws *wsi)
{
	struct gw_pipe *p = lws_get_opaque_user_data(wsi);
	if (p) {
		p->want = 1;
		hold(p, wsi, 0);
	}
	lws_callback_on_writable(wsi);
}

void gw_pipe_writeable(struct lws *wsi)
{
	struct gw_pipe *p = lws_get_opaque_user_data(wsi);
	if (p)
		p->want = 0;
}

void gw_pipe_idle(struct lws *wsi)
{
	struct gw_pipe *p = lws_get_opaque_user_data(wsi);
	if (!p || !p->all_in || p->want)
		return;
	if (lws_partial_buffered(wsi)) {
		/* lws drains what the kernel did not take only while it may
		 * poll for writing: come back once that is done */
		gw_pipe_want_write(wsi);
		return;
	}
	hold(p, wsi, 1);
}

int gw_pipe_complete(struct lws *wsi)
{
	struct gw_pipe *p = lws_get_opaque_user_data(wsi);

	/* answered before lws read the whole body: lws would discard the
	 * rest and then parse what follows unseen by us; close instead. With
	 * output still buffered lws defers the completion, and would read on
	 * before it (the writer waits for that: gw_resp.c); never guess */
	if (!p || p->in_body || lws_partial_buffered(wsi) || lws_http_transaction_completed(wsi))
		return -1;
	p->all_in = p->want = p->held = 0;
	/* the handlers' own pause ends with their transaction too */
	lws_rx_flow_control(wsi, LWS_RXFLOW_REASON_APPLIES_ENABLE | PIPE_RXFLOW_BIT |
			    LWS_RXFLOW_REASON_USER_BOOL | LWS_RXFLOW_REASON_FLAG_PROCESS_NOW);
	return 0;
}

int gw_pipe_peer_gone(struct lws *wsi)
{
	struct gw_pipe *p = lws_get_opaque_user_data(wsi);
	struct tcp_info ti;
	socklen_t len = sizeof ti;
	int fd = (int)lws_get_socket_fd(wsi);

	if (!p || !p->held || fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		return 0;
	/* CLOSE_WAIT: the peer's FIN arrived; CLOSE: reset */
	return ti.tcpi_state == STATE_CLOSE_WAIT || ti.tcpi_state == STATE_CLOSE;
}
