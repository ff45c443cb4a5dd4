/* TCP forward: the connection becomes a byte splice to 127.0.0.1:port in
 * the sandbox, after either "CONNECT <port>\n" (answered "OK <port>\n" once
 * the local connect succeeded; closed if nothing listens) or a forward
 * request (answered with a JSON frame). Each direction has a bounded
 * buffer; reading stops while it is full. Half-closes are propagated
 * (the relay itself is lib/sbx_splice.c). */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent.h"
#include "sbx_json.h"
#include "sbx_frame.h"
#include "sbx_log.h"

#define FWD_BUF (256u * 1024)

static uint32_t epoll_of(const struct sbx_splice *s, enum sbx_splice_side side)
{
	unsigned w = sbx_splice_events(s, side);

	return (w & SBX_SPLICE_IN ? EPOLLIN | EPOLLRDHUP : 0) | (w & SBX_SPLICE_OUT ? EPOLLOUT : 0);
}

static void fwd_update(struct ag_conn *c)
{
	if (c->dead)
		return;
	if (c->connecting) {
		ag_ev_set(&c->ev, 0);
		ag_ev_set(&c->peer, EPOLLOUT);
		return;
	}
	ag_ev_set(&c->ev, epoll_of(&c->fwd, SBX_SPLICE_A));
	ag_ev_set(&c->peer, epoll_of(&c->fwd, SBX_SPLICE_B));
}

void ag_fwd_close(struct ag_conn *c)
{
	if (c->peer.fd < 0)
		return;
	ag_ev_del(&c->peer);
	close(c->peer.fd);
	c->peer.fd = -1;
}

void ag_fwd_start(struct ag_conn *c, int port, int handshake)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	c->deadline = ag_deadline_in(AG_HANDSHAKE_MS);   /* for the connect */
	c->handshake_port = handshake ? port : 0;
	if (fd < 0 || (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 &&
		       errno != EINPROGRESS)) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		if (handshake)
			ag_conn_close(c);
		else
			ag_conn_fail_errno(c, e, "connect to 127.0.0.1");
		return;
	}
	/* Bytes the client sent after its request are for the peer. */
	if (c->in.len && sbx_buf_append(&c->up, sbx_buf_head(&c->in), c->in.len) < 0) {
		close(fd);
		ag_conn_close(c);
		return;
	}
	sbx_buf_reset(&c->in);
	/* anything queued (an "OK 1024" cannot be: it is port 1024 only) */
	if (c->out.len) {
		sbx_buf_append(&c->down, sbx_buf_head(&c->out), c->out.len);
		sbx_buf_reset(&c->out);
	}
	ag_ev_set(&c->ev, 0);
	sbx_splice_init(&c->fwd, &c->down, &c->up, FWD_BUF);
	c->fwd.eof[SBX_SPLICE_A] = c->rd_closed;   /* a client that half-closed already */
	c->peer.fd = fd;
	c->connecting = 1;
	c->state = AG_ST_FORWARD;
	fwd_update(c);
}

static void connected(struct ag_conn *c)
{
	int err = 0;
	socklen_t l = sizeof(err);

	if (getsockopt(c->peer.fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0)
		err = errno;
	if (err == EINPROGRESS)
		return;
	c->connecting = 0;
	c->deadline = 0;
	if (err) {
		sbx_debug("forward: connect: %s", strerror(err));
		ag_fwd_close(c);
		if (c->handshake_port) {
			ag_conn_close(c);
		} else {
			c->state = AG_ST_REQUEST;
			ag_conn_fail_errno(c, err, "connect to 127.0.0.1");
		}
		return;
	}
	if (c->handshake_port) {
		char ok[32];
		int n = snprintf(ok, sizeof(ok), "OK %d\n", c->handshake_port);

		sbx_buf_append(&c->down, ok, (size_t)n);
	} else {
		cJSON *o = ag_ok();
		char *t = o ? sbx_json_print(o) : NULL;

		cJSON_Delete(o);
		if (t) {
			sbx_frame_append(&c->down, SBX_FRAME_JSON, t, strlen(t));
			cJSON_free(t);
		}
	}
}

void ag_fwd_event(struct ag_conn *c, int from_peer, uint32_t events)
{
	if (c->dead)
		return;
	if (from_peer && c->connecting) {
		connected(c);
		if (c->dead || c->state != AG_ST_FORWARD)
			return;
	}
	if (!c->connecting) {
		long rc = 0;

		/* a read error closes both directions at once */
		if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
			rc = sbx_splice_read(&c->fwd, from_peer ? SBX_SPLICE_B : SBX_SPLICE_A,
					     from_peer ? c->peer.fd : c->ev.fd);
		if (rc == -1 || (rc = sbx_splice_step(&c->fwd, c->ev.fd, c->peer.fd)) <= 0) {
			ag_conn_close(c);
			return;
		}
	}
	fwd_update(c);
}
