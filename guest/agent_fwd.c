/* TCP forward: the connection becomes a byte splice to 127.0.0.1:port in
 * the sandbox, after either "CONNECT <port>\n" (answered "OK <port>\n" once
 * the local connect succeeded; closed if nothing listens) or a forward
 * request (answered with a JSON frame). Each direction has a bounded
 * buffer; reading stops while it is full. Half-closes are propagated. */
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

static void fwd_update(struct ag_conn *c)
{
	uint32_t cm = 0, pm = 0;

	if (c->dead)
		return;
	if (c->connecting) {
		pm = EPOLLOUT;
	} else {
		if (!c->rd_closed && c->up.len < FWD_BUF)
			cm |= EPOLLIN | EPOLLRDHUP;
		if (c->down.len)
			cm |= EPOLLOUT;
		if (!c->peer_rd_closed && c->down.len < FWD_BUF)
			pm |= EPOLLIN | EPOLLRDHUP;
		if (c->up.len)
			pm |= EPOLLOUT;
	}
	ag_ev_set(&c->ev, cm);
	ag_ev_set(&c->peer, pm);
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

	c->deadline = ag_now_ms() + AG_HANDSHAKE_MS;   /* for the connect */
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

/* Move bytes from fd into b. Returns -1 on error, 0 on EOF, 1 otherwise. */
static int pull(int fd, struct sbx_buf *b)
{
	unsigned char *p = sbx_buf_reserve(b, 65536);
	ssize_t n;

	if (!p)
		return -1;
	n = recv(fd, p, 65536, 0);
	if (n < 0)
		return (errno == EAGAIN || errno == EINTR) ? 1 : -1;
	if (n == 0)
		return 0;
	sbx_buf_commit(b, (size_t)n);
	return 1;
}

static int push(int fd, struct sbx_buf *b)
{
	ssize_t n;

	if (!b->len)
		return 1;
	n = send(fd, sbx_buf_head(b), b->len, MSG_NOSIGNAL);
	if (n < 0)
		return (errno == EAGAIN || errno == EINTR) ? 1 : -1;
	sbx_buf_consume(b, (size_t)n);
	return 1;
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
		int rc = 1;

		if (!from_peer && (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) &&
		    !c->rd_closed && c->up.len < FWD_BUF) {
			rc = pull(c->ev.fd, &c->up);
			if (rc == 0)
				c->rd_closed = 1;
		}
		if (rc >= 0 && from_peer && (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) &&
		    !c->peer_rd_closed && c->down.len < FWD_BUF) {
			rc = pull(c->peer.fd, &c->down);
			if (rc == 0)
				c->peer_rd_closed = 1;
		}
		if (rc < 0 || push(c->peer.fd, &c->up) < 0 || push(c->ev.fd, &c->down) < 0) {
			ag_conn_close(c);
			return;
		}
		if (c->rd_closed && !c->up.len && !c->peer_wr_shut) {
			shutdown(c->peer.fd, SHUT_WR);
			c->peer_wr_shut = 1;
		}
		if (c->peer_rd_closed && !c->down.len && !c->wr_shut) {
			shutdown(c->ev.fd, SHUT_WR);
			c->wr_shut = 1;
		}
		if (c->wr_shut && c->peer_wr_shut) {
			ag_conn_close(c);
			return;
		}
	}
	fwd_update(c);
}
