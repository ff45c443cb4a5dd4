#include "vs_dev.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sbx_hs.h"
#include "sbx_log.h"
#include "vs_pkt.h"

enum vs_state { C_LINE, C_CONNECTING, C_OPEN };

/* control packets owed to the guest, sent when it gives a buffer */
#define P_REQUEST        1u
#define P_CREDIT_UPDATE  2u
#define P_CREDIT_REQUEST 4u
#define P_SHUTDOWN       8u

struct vs_conn {
	enum vs_ev_kind kind;         /* VS_EV_CLIENT: first, epoll's tag */
	int fd;
	enum vs_state st;
	uint32_t host_port, guest_port;
	unsigned pend;
	uint32_t armed;               /* the epoll interest now */
	/* guest -> host: bytes received, not yet written to the client */
	uint8_t *buf;
	uint32_t b_head, b_len;
	uint32_t fwd_cnt, fwd_told;   /* written to the client; last said */
	int guest_done_send, guest_done_rcv;
	/* host -> guest */
	uint32_t peer_alloc, peer_fwd, tx_cnt;
	int host_eof;
	int asked_credit;             /* a credit request is out */
	int relayed;                  /* the guest answers the CONNECT line */
};

static enum vs_ev_kind kick_tag[VU_NQ] = { VS_EV_KICK_RX, VS_EV_KICK_TX };

static void watch_kick(void *owner, int q, int old_fd, int new_fd)
{
	struct vs_dev *d = owner;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &kick_tag[q] };

	if (old_fd >= 0)
		epoll_ctl(d->epfd, EPOLL_CTL_DEL, old_fd, NULL);
	if (new_fd >= 0 && epoll_ctl(d->epfd, EPOLL_CTL_ADD, new_fd, &ev) < 0)
		sbx_err_log("watch kick fd of ring %d: %s", q, strerror(errno));
}

static void rings_stopped(void *owner)
{
	vs_dev_close_all(owner);
}

void vs_dev_init(struct vs_dev *d, int epfd, uint64_t guest_cid)
{
	memset(d, 0, sizeof *d);
	vu_dev_init(&d->vu, guest_cid);
	d->vu.watch_kick = watch_kick;
	d->vu.rings_stopped = rings_stopped;
	d->vu.owner = d;
	d->epfd = epfd;
	d->next_port = 1u << 30;
}

/* Credit the guest gives us now; a guest whose counters say it forwarded
 * more than was sent gives none. */
static uint32_t peer_credit(const struct vs_conn *c)
{
	uint32_t in_flight = c->tx_cnt - c->peer_fwd;

	return in_flight > c->peer_alloc ? 0 : c->peer_alloc - in_flight;
}

static void arm(struct vs_dev *d, struct vs_conn *c)
{
	uint32_t want = 0;
	struct epoll_event ev;

	if (c->st == C_LINE)
		want |= EPOLLIN;
	else if (c->st == C_OPEN && !c->host_eof && !c->guest_done_rcv &&
	         !d->rx_starved && peer_credit(c) > 0)
		want |= EPOLLIN;
	if (c->b_len)
		want |= EPOLLOUT;
	if (want == c->armed)
		return;
	ev.events = want;
	ev.data.ptr = c;
	if (epoll_ctl(d->epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
		c->armed = want;
}

static void conn_free(struct vs_dev *d, struct vs_conn *c)
{
	for (unsigned i = 0; i < d->nconns; i++) {
		if (d->conns[i] == c) {
			d->conns[i] = d->conns[--d->nconns];
			break;
		}
	}
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->buf);
	free(c);
}

static struct vs_conn *conn_find(struct vs_dev *d, uint32_t host_port, uint32_t guest_port)
{
	for (unsigned i = 0; i < d->nconns; i++) {
		struct vs_conn *c = d->conns[i];
		if (c->st != C_LINE && c->host_port == host_port && c->guest_port == guest_port)
			return c;
	}
	return NULL;
}

static void hdr_for(const struct vs_dev *d, struct vs_conn *c, uint16_t op,
                    struct vs_hdr *h)
{
	memset(h, 0, sizeof *h);
	h->src_cid = VS_HOST_CID;
	h->dst_cid = d->vu.guest_cid;
	h->src_port = c->host_port;
	h->dst_port = c->guest_port;
	h->type = VS_TYPE_STREAM;
	h->op = op;
	h->buf_alloc = VS_BUF_ALLOC;
	h->fwd_cnt = c->fwd_cnt;
	c->fwd_told = c->fwd_cnt;
}

/* Put one header-only packet in the next receive buffer. Returns 1 when
 * sent, 0 when the guest has no buffer (or the ring is not usable). */
static int put_packet(struct vs_dev *d, const struct vs_hdr *h)
{
	struct vu_chain ch;
	uint8_t b[VS_HDR_LEN];
	int rc;

	if (!vu_dev_ring_live(&d->vu, VU_RX))
		return 0;
	rc = vu_ring_pop(&d->vu.ring[VU_RX], &d->vu.mem, &ch);
	if (rc <= 0) {
		if (rc == 0)
			d->rx_starved = 1;
		return 0;
	}
	if (ch.in_len < VS_HDR_LEN) {
		/* a buffer too small for a header: returned empty */
		vu_ring_push(&d->vu.ring[VU_RX], ch.head, 0);
		d->rx_used = 1;
		return 0;
	}
	vs_hdr_encode(h, b);
	vu_chain_write(&ch, 0, b, VS_HDR_LEN);
	vu_ring_push(&d->vu.ring[VU_RX], ch.head, VS_HDR_LEN);
	d->rx_used = 1;
	return 1;
}

static void queue_rst(struct vs_dev *d, uint32_t host_port, uint32_t guest_port)
{
	struct vs_hdr h = { .src_cid = VS_HOST_CID, .dst_cid = d->vu.guest_cid,
	                    .src_port = host_port, .dst_port = guest_port,
	                    .type = VS_TYPE_STREAM, .op = VS_OP_RST };

	if (!d->rst_len && put_packet(d, &h))
		return;
	if (d->rst_len == VS_RST_QUEUE) {
		d->dropped++;   /* a guest that makes resets faster than it reads them */
		return;
	}
	d->rst[(d->rst_head + d->rst_len++) % VS_RST_QUEUE] =
		(struct vs_rst){ host_port, guest_port };
}

/* End a connection; the guest is told when it knows of it. */
static void conn_reset(struct vs_dev *d, struct vs_conn *c, int tell_guest)
{
	if (tell_guest && c->st != C_LINE && !(c->st == C_CONNECTING && (c->pend & P_REQUEST)))
		queue_rst(d, c->host_port, c->guest_port);
	conn_free(d, c);
}

static int send_ctl(struct vs_dev *d, struct vs_conn *c, uint16_t op, uint32_t flags)
{
	struct vs_hdr h;

	hdr_for(d, c, op, &h);
	h.flags = flags;
	if (op == VS_OP_REQUEST || op == VS_OP_SHUTDOWN || op == VS_OP_CREDIT_REQUEST)
		h.buf_alloc = VS_BUF_ALLOC;
	return put_packet(d, &h);
}

static const struct { unsigned bit; uint16_t op; } pend_ops[] = {
	{ P_REQUEST, VS_OP_REQUEST }, { P_CREDIT_UPDATE, VS_OP_CREDIT_UPDATE },
	{ P_CREDIT_REQUEST, VS_OP_CREDIT_REQUEST }, { P_SHUTDOWN, VS_OP_SHUTDOWN },
};

/* Send what is owed, in order; stops when the guest has no buffer. */
static int flush_conn(struct vs_dev *d, struct vs_conn *c)
{
	for (unsigned k = 0; k < sizeof pend_ops / sizeof pend_ops[0]; k++) {
		if (!(c->pend & pend_ops[k].bit))
			continue;
		if (!send_ctl(d, c, pend_ops[k].op, pend_ops[k].op == VS_OP_SHUTDOWN ? VS_SHUTDOWN_SEND : 0))
			return 0;
		c->pend &= ~pend_ops[k].bit;
	}
	return 1;
}

static void owe(struct vs_dev *d, struct vs_conn *c, unsigned bit)
{
	c->pend |= bit;
	flush_conn(d, c);
}

static void flush_all(struct vs_dev *d)
{
	while (d->rst_len) {
		struct vs_rst *r = &d->rst[d->rst_head];
		struct vs_hdr h = { .src_cid = VS_HOST_CID, .dst_cid = d->vu.guest_cid,
		                    .src_port = r->host_port, .dst_port = r->guest_port,
		                    .type = VS_TYPE_STREAM, .op = VS_OP_RST };
		if (!put_packet(d, &h))
			return;
		d->rst_head = (d->rst_head + 1) % VS_RST_QUEUE;
		d->rst_len--;
	}
	for (unsigned i = 0; i < d->nconns; i++)
		if (d->conns[i]->pend && !flush_conn(d, d->conns[i]))
			return;
}

static void signal_guest(struct vs_dev *d)
{
	if (d->rx_used)
		vu_dev_call(&d->vu, VU_RX);
	if (d->tx_used)
		vu_dev_call(&d->vu, VU_TX);
	d->rx_used = d->tx_used = 0;
}

static void rearm_all(struct vs_dev *d)
{
	for (unsigned i = 0; i < d->nconns; i++)
		arm(d, d->conns[i]);
}

/* Both directions finished: the connection ends. */
static int maybe_done(struct vs_dev *d, struct vs_conn *c)
{
	if (c->st == C_OPEN && c->guest_done_send && !c->b_len &&
	    (c->host_eof || c->guest_done_rcv)) {
		conn_reset(d, c, 1);
		return 1;
	}
	return 0;
}

/* Write what the guest sent to the client. Returns -1 when c is gone. */
static int drain_to_host(struct vs_dev *d, struct vs_conn *c)
{
	while (c->b_len) {
		uint32_t run = VS_BUF_ALLOC - c->b_head;
		ssize_t n;
		if (run > c->b_len)
			run = c->b_len;
		n = send(c->fd, c->buf + c->b_head, run, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (n <= 0) {
			conn_reset(d, c, 1);   /* the client went away */
			return -1;
		}
		c->b_head = (c->b_head + (uint32_t)n) % VS_BUF_ALLOC;
		c->b_len -= (uint32_t)n;
		c->fwd_cnt += (uint32_t)n;
	}
	/* the guest thinks we hold (received - told); once that passes half
	 * the window, say what was forwarded so it never stalls on old news */
	if (c->fwd_cnt != c->fwd_told &&
	    (c->fwd_cnt + c->b_len) - c->fwd_told >= VS_BUF_ALLOC / 2)
		owe(d, c, P_CREDIT_UPDATE);
	if (!c->b_len && c->guest_done_send && !c->host_eof && !c->guest_done_rcv)
		shutdown(c->fd, SHUT_WR);
	if (maybe_done(d, c))
		return -1;
	arm(d, c);
	return 0;
}

static void answer_ok(struct vs_dev *d, struct vs_conn *c)
{
	char line[SBX_HS_MAX];
	int n = snprintf(line, sizeof line, "OK %u\n", c->guest_port);

	/* a fresh socket's buffer takes a line; if not, the client is broken */
	if (send(c->fd, line, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) != n) {
		conn_reset(d, c, 1);
		return;
	}
	c->st = C_OPEN;
	arm(d, c);
}

static void take_rw(struct vs_dev *d, struct vs_conn *c, const struct vu_chain *ch,
                    uint32_t len)
{
	uint32_t tail, first;

	if (!len)
		return;
	if (c->guest_done_send || len > VS_BUF_ALLOC - c->b_len) {
		sbx_warn("guest port %u: %u bytes past its credit or after shutdown: reset",
		         c->guest_port, len);
		conn_reset(d, c, 1);
		return;
	}
	if (!c->buf && !(c->buf = malloc(VS_BUF_ALLOC))) {
		conn_reset(d, c, 1);
		return;
	}
	tail = (c->b_head + c->b_len) % VS_BUF_ALLOC;
	first = VS_BUF_ALLOC - tail < len ? VS_BUF_ALLOC - tail : len;
	vu_chain_read(ch, VS_HDR_LEN, c->buf + tail, first);
	vu_chain_read(ch, VS_HDR_LEN + first, c->buf, len - first);
	c->b_len += len;
	drain_to_host(d, c);
}

/* One packet the guest sent, checked by vs_pkt_check. */
static void on_packet(struct vs_dev *d, const struct vs_hdr *h, const struct vu_chain *ch)
{
	struct vs_conn *c = conn_find(d, h->dst_port, h->src_port);

	if (!c) {
		/* the guest connecting to the host: no host service listens */
		queue_rst(d, h->dst_port, h->src_port);
		return;
	}
	c->peer_alloc = h->buf_alloc;
	c->peer_fwd = h->fwd_cnt;
	if (peer_credit(c))
		c->asked_credit = 0;
	if (c->st == C_CONNECTING) {
		if (h->op == VS_OP_RESPONSE && c->relayed) {
			c->st = C_OPEN;
			arm(d, c);
		} else if (h->op == VS_OP_RESPONSE) {
			answer_ok(d, c);
		}
		else
			conn_reset(d, c, 1);
		return;
	}
	switch (h->op) {
	case VS_OP_RW:
		take_rw(d, c, ch, h->len);
		return;
	case VS_OP_CREDIT_UPDATE:
		break;
	case VS_OP_CREDIT_REQUEST:
		owe(d, c, P_CREDIT_UPDATE);
		break;
	case VS_OP_SHUTDOWN:
		if (h->flags & VS_SHUTDOWN_SEND)
			c->guest_done_send = 1;
		if (h->flags & VS_SHUTDOWN_RCV)
			c->guest_done_rcv = 1;
		if (drain_to_host(d, c) < 0)
			return;
		break;
	default:   /* REQUEST or RESPONSE on an open connection */
		conn_reset(d, c, 1);
		return;
	}
	arm(d, c);
}

static void on_rst(struct vs_dev *d, const struct vs_hdr *h)
{
	struct vs_conn *c;

	if (h->src_cid == d->vu.guest_cid && h->dst_cid == VS_HOST_CID &&
	    (c = conn_find(d, h->dst_port, h->src_port)))
		conn_reset(d, c, 0);
}

static void tx_pump(struct vs_dev *d)
{
	struct vu_ring *r = &d->vu.ring[VU_TX];
	struct vu_chain ch;
	int rc;

	while (vu_dev_ring_live(&d->vu, VU_TX) &&
	       (rc = vu_ring_pop(r, &d->vu.mem, &ch)) > 0) {
		uint8_t b[VS_HDR_LEN];
		struct vs_hdr h;

		if (vu_chain_read(&ch, 0, b, VS_HDR_LEN) == VS_HDR_LEN) {
			vs_hdr_decode(b, &h);
			switch (vs_pkt_check(&h, ch.out_len - VS_HDR_LEN, d->vu.guest_cid)) {
			case VS_ACCEPT:
				on_packet(d, &h, &ch);
				break;
			case VS_RESET:
				{
					struct vs_conn *c = conn_find(d, h.dst_port, h.src_port);
					if (c)
						conn_reset(d, c, 1);
					else
						queue_rst(d, h.dst_port, h.src_port);
				}
				break;
			case VS_DROP:
				if (h.op == VS_OP_RST)
					on_rst(d, &h);
				else
					d->dropped++;
				break;
			}
		} else {
			d->dropped++;
		}
		vu_ring_push(r, ch.head, 0);
		d->tx_used = 1;
	}
	if (r->broken) {
		sbx_err_log("transmit ring: %s: every connection ends", r->why);
		vs_dev_close_all(d);
	}
}

/* Read from a client into the guest's buffers while credit and buffers
 * last. */
static void host_to_guest(struct vs_dev *d, struct vs_conn *c)
{
	struct vu_ring *r = &d->vu.ring[VU_RX];

	while (c->st == C_OPEN && !c->host_eof && vu_dev_ring_live(&d->vu, VU_RX)) {
		uint32_t credit = peer_credit(c), room;
		struct vu_chain ch;
		struct iovec iov[VU_CHAIN_MAX + 1];
		struct vs_hdr h;
		uint8_t b[VS_HDR_LEN];
		unsigned n = 0;
		uint64_t skip = VS_HDR_LEN, left;
		ssize_t got;
		int rc;

		if (!credit) {
			if (!c->asked_credit) {
				c->asked_credit = 1;
				owe(d, c, P_CREDIT_REQUEST);
			}
			break;
		}
		rc = vu_ring_pop(r, &d->vu.mem, &ch);
		if (rc <= 0) {
			if (rc == 0)
				d->rx_starved = 1;
			break;
		}
		if (ch.in_len <= VS_HDR_LEN) {
			vu_ring_push(r, ch.head, 0);
			d->rx_used = 1;
			continue;
		}
		room = ch.in_len - VS_HDR_LEN > VS_MAX_PAYLOAD ? VS_MAX_PAYLOAD
		                                               : (uint32_t)(ch.in_len - VS_HDR_LEN);
		left = room < credit ? room : credit;
		for (unsigned k = 0; k < ch.n_in && left; k++) {
			size_t l = ch.in[k].iov_len;
			if (skip >= l) {
				skip -= l;
				continue;
			}
			iov[n].iov_base = (uint8_t *)ch.in[k].iov_base + skip;
			iov[n].iov_len = l - skip > left ? left : l - skip;
			left -= iov[n].iov_len;
			skip = 0;
			n++;
		}
		got = readv(c->fd, iov, (int)n);
		if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
			vu_ring_unpop(r);
			break;
		}
		if (got < 0) {
			vu_ring_unpop(r);
			conn_reset(d, c, 1);
			return;
		}
		if (got == 0) {
			vu_ring_unpop(r);
			c->host_eof = 1;
			owe(d, c, P_SHUTDOWN);
			if (maybe_done(d, c))
				return;
			break;
		}
		hdr_for(d, c, VS_OP_RW, &h);
		h.len = (uint32_t)got;
		vs_hdr_encode(&h, b);
		vu_chain_write(&ch, 0, b, VS_HDR_LEN);
		vu_ring_push(r, ch.head, VS_HDR_LEN + (uint32_t)got);
		d->rx_used = 1;
		c->tx_cnt += (uint32_t)got;
	}
	arm(d, c);
}

static void read_line(struct vs_dev *d, struct vs_conn *c)
{
	char line[SBX_HS_MAX];
	ssize_t n = recv(c->fd, line, sizeof line, MSG_PEEK | MSG_DONTWAIT);
	long used;
	int port = 0;

	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0) {
		conn_free(d, c);
		return;
	}
	used = sbx_hs_parse_connect(line, (size_t)n, &port);
	if (used == 0)
		return;
	if (used < 0) {
		conn_free(d, c);   /* not a CONNECT line: nothing to tell the guest */
		return;
	}
	if (d->relay_port && (uint32_t)port != d->relay_port) {
		/* the line stays in the socket: the guest reads and answers it */
		c->relayed = 1;
		port = (int)d->relay_port;
	} else if (recv(c->fd, line, (size_t)used, MSG_DONTWAIT) != used) {
		conn_free(d, c);
		return;
	}
	c->guest_port = (uint32_t)port;
	do {
		c->host_port = d->next_port++;
	} while (conn_find(d, c->host_port, c->guest_port));
	c->st = C_CONNECTING;
	c->peer_alloc = 0;
	owe(d, c, P_REQUEST);
	arm(d, c);
}

void vs_dev_client(struct vs_dev *d, int fd)
{
	struct vs_conn *c;
	struct epoll_event ev = { .events = EPOLLIN };

	if (d->nconns == VS_MAX_CONNS || !(c = calloc(1, sizeof *c))) {
		sbx_warn("hybrid socket: %u connections: one more refused", d->nconns);
		close(fd);
		return;
	}
	c->kind = VS_EV_CLIENT;
	c->fd = fd;
	c->st = C_LINE;
	c->armed = ev.events;
	ev.data.ptr = c;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		close(fd);
		free(c);
		return;
	}
	d->conns[d->nconns++] = c;
}

void vs_dev_client_event(struct vs_dev *d, void *ptr, uint32_t events)
{
	struct vs_conn *c = ptr;

	if (events & (EPOLLHUP | EPOLLERR)) {
		conn_reset(d, c, 1);
	} else if (c->st == C_LINE) {
		read_line(d, c);
	} else {
		if ((events & EPOLLOUT) && drain_to_host(d, c) < 0)
			goto out;
		if (events & EPOLLIN)
			host_to_guest(d, c);
	}
out:
	signal_guest(d);
}

void vs_dev_kick(struct vs_dev *d, int q)
{
	uint64_t v;

	if (read(d->vu.kick[q], &v, sizeof v) < 0 && errno != EAGAIN)
		sbx_warn("kick fd of ring %d: %s", q, strerror(errno));
	if (q == VU_TX) {
		tx_pump(d);
	} else {
		d->rx_starved = 0;
		if (d->vu.ring[VU_RX].broken) {
			sbx_err_log("receive ring: %s: every connection ends", d->vu.ring[VU_RX].why);
			vs_dev_close_all(d);
		}
	}
	flush_all(d);
	rearm_all(d);
	signal_guest(d);
}

void vs_dev_close_all(struct vs_dev *d)
{
	while (d->nconns)
		conn_free(d, d->conns[0]);
	d->rst_len = 0;
}
