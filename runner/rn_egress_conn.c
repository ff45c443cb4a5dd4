/* The egress proxy: a sandbox's TCP 80 and 443, redirected to its
 * gateway address under an allow-list (rn_egress_fw.c). Each connection
 * is read until its HTTP Host or TLS SNI names where it goes (lib/
 * sbx_sni.c); the name is matched against the policy, resolved by the
 * runner itself (rn_resolve.c), and the connection goes to that answer,
 * never to the address the sandbox chose, so an allowed name sent to
 * another server reaches the allowed name's server or nothing. The
 * answer's addresses the sandbox may never reach (always-denied,
 * deny_cidrs) are skipped: a name that resolves only to those is
 * refused (DNS rebinding). Then the bytes are spliced in the kernel
 * (lib/sbx_ksplice.c: socket -> pipe -> socket, never copied into the
 * runner), the first ones included, and counted for the egress log. A
 * refusal is fast: a 403 page on port 80, a reset on 443. */
#include "rn_egress_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rn_resolve.h"
#include "sbx_ksplice.h"
#include "sbx_log.h"

#define PEEK_MAX SBX_HOST_HEAD_MAX      /* bytes read before the name must show */
#define PEEK_MS 10000
#define CONNECT_MS 10000
#define DRAIN_MS 2000
#define SPLICE_PIPE (64 * 1024)      /* bytes queued per direction at most: the
					 * kernel's default pipe, and what the userland
					 * relay held (256 connections a sandbox) */
/* A direction that has moved BULK_AFTER bytes gets a pipe of BULK_PIPE:
 * a 64 KiB pipe costs two splices and a loop pass per 64 KiB, about a
 * quarter of the runner's CPU per MB of a large download. The growth of all the
 * runner's connections together stays within BULK_BUDGET, so a stalled
 * connection that grew pins at most BULK_PIPE and all of them at most
 * the budget more than the 64 KiB pipes. */
#define BULK_AFTER (4u << 20)
#define BULK_PIPE (1024 * 1024)      /* the kernel's pipe-max-size default */
#define BULK_BUDGET (16u << 20)

enum eg_state { EG_PEEK, EG_RESOLVE, EG_CONNECT, EG_SPLICE, EG_DRAIN };

struct eg_conn {
	struct rn_egress *e;
	struct rn_ev in, out;           /* the sandbox's side (A), the server's (B) */
	int port;                       /* 80 or 443 */
	enum eg_state st;
	struct sbx_buf to_up;           /* the peeked bytes */
	struct sbx_ksplice sp;
	char name[SBX_PEEK_NAME_MAX];
	char rule[64];
	struct rn_lookup *lookup;
	struct rn_rules *rules;         /* the name's, when it is decrypted */
	unsigned long long bytes_out, bytes_in;
	int64_t deadline;
	int logged;
	int parked[2];                  /* hung up, out of epoll until there is room */
	size_t bulk;                    /* bytes of bulk_used this connection's pipes took */
	struct eg_conn *next;
};

/* Bytes the grown pipes of all connections hold over SPLICE_PIPE each
 * (the runner's loop is the only user). */
static size_t bulk_used;

/* Connections closed during this loop pass: an epoll batch may still
 * hold their events (rn_loop.h), so their memory waits for eg_conn_reap. */
static struct eg_conn *dead;

void eg_conn_reap(void)
{
	while (dead) {
		struct eg_conn *c = dead;
		dead = c->next;
		free(c);
	}
}

static void conn_free(struct eg_conn *c)
{
	struct eg_conn **pp;

	for (pp = &c->e->conns; *pp && *pp != c; pp = &(*pp)->next)
		;
	if (*pp) {
		*pp = c->next;
		c->e->n_conns--;
	}
	if (c->lookup)
		rn_resolve_cancel(c->lookup);
	c->lookup = NULL;
	if (c->in.fd >= 0) {
		rn_loop_del(&c->in);
		close(c->in.fd);
		c->in.fd = -1;
	}
	if (c->out.fd >= 0) {
		rn_loop_del(&c->out);
		close(c->out.fd);
		c->out.fd = -1;
	}
	sbx_buf_free(&c->to_up);
	sbx_ksplice_free(&c->sp);
	bulk_used -= c->bulk;
	c->bulk = 0;
	rn_rules_free(c->rules);
	c->rules = NULL;
	c->next = dead;
	dead = c;
}

/* The end of an allowed connection: its log entry with the bytes. */
static void conn_done(struct eg_conn *c)
{
	if (!c->logged)
		eg_log_add(c->e, c->name, c->port, 1, c->rule, c->bytes_out, c->bytes_in);
	conn_free(c);
}

/* A reset for the sandbox: close with SO_LINGER 0. */
static void reset_close(struct eg_conn *c)
{
	struct linger lg = { 1, 0 };

	if (c->in.fd >= 0)
		setsockopt(c->in.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	conn_free(c);
}

static void deny(struct eg_conn *c, const char *why)
{
	char page[512];
	int n;

	eg_log_add(c->e, c->name[0] ? c->name : "", c->port, 0, why, 0, 0);
	c->logged = 1;
	if (c->port != 80) {
		reset_close(c);
		return;
	}
	n = snprintf(page, sizeof(page), "egress denied: %s (%s)\n",
		     c->name[0] ? c->name : "(no name)", why);
	char head[256];
	int hn = snprintf(head, sizeof(head), "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
			  "Content-Length: %d\r\nConnection: close\r\n\r\n", n);
	/* a fresh socket's send buffer takes this much at once */
	if (send(c->in.fd, head, (size_t)hn, MSG_NOSIGNAL) != hn ||
	    send(c->in.fd, page, (size_t)n, MSG_NOSIGNAL) != n) {
		reset_close(c);
		return;
	}
	shutdown(c->in.fd, SHUT_WR);
	/* read what the client still sends until it closes: closing with
	 * unread bytes would reset the connection and lose the page */
	if (c->lookup) {
		rn_resolve_cancel(c->lookup);
		c->lookup = NULL;
	}
	if (c->out.fd >= 0) {
		rn_loop_del(&c->out);
		close(c->out.fd);
		c->out.fd = -1;
	}
	c->st = EG_DRAIN;
	c->deadline = rn_now_mono() + DRAIN_MS;
	rn_loop_mod(&c->in, EPOLLIN);
}

static uint32_t splice_events(const struct sbx_ksplice *sp, enum sbx_splice_side side)
{
	unsigned w = sbx_ksplice_events(sp, side);

	return (w & SBX_SPLICE_IN ? EPOLLIN : 0) | (w & SBX_SPLICE_OUT ? EPOLLOUT : 0);
}

static struct rn_ev *ev_of(struct eg_conn *c, enum sbx_splice_side side)
{
	return side == SBX_SPLICE_A ? &c->in : &c->out;
}

/* Each side's events; a parked side (HUP is reported whatever one asks
 * for) comes back only once there is room to read what it left. */
static void splice_update(struct eg_conn *c)
{
	if (sbx_ksplice_step(&c->sp, c->in.fd, c->out.fd) <= 0) {
		conn_done(c);
		return;
	}
	for (int side = SBX_SPLICE_A; side <= SBX_SPLICE_B; side++) {
		uint32_t ev = splice_events(&c->sp, (enum sbx_splice_side)side);
		if (c->sp.gone[side])
			continue;
		if (!c->parked[side]) {
			rn_loop_mod(ev_of(c, (enum sbx_splice_side)side), ev);
		} else if (ev & EPOLLIN) {
			c->parked[side] = 0;
			rn_loop_add(ev_of(c, (enum sbx_splice_side)side), ev);
		}
	}
}

/* n bytes read from side: counted, and the pipe they go through grown
 * once the direction moves bulk and the budget has room. */
static void moved(struct eg_conn *c, enum sbx_splice_side side, long n)
{
	enum sbx_splice_side to = side == SBX_SPLICE_A ? SBX_SPLICE_B : SBX_SPLICE_A;
	unsigned long long *count = side == SBX_SPLICE_A ? &c->bytes_out : &c->bytes_in;
	size_t more = BULK_PIPE - SPLICE_PIPE;

	*count += (unsigned long long)n;
	if (*count < BULK_AFTER || c->sp.cap[to] >= BULK_PIPE || bulk_used + more > BULK_BUDGET)
		return;
	if (sbx_ksplice_grow(&c->sp, to, BULK_PIPE) == 0) {
		bulk_used += more;
		c->bulk += more;
	}
}

static void splice_side(struct eg_conn *c, enum sbx_splice_side side, int fd, uint32_t events)
{
	if (events & EPOLLHUP) {
		/* the peer closed both ways: read what it sent as room allows,
		 * then out of epoll (HUP would wake the loop for ever) */
		long n;
		while ((n = sbx_ksplice_read(&c->sp, side, fd)) > 0)
			moved(c, side, n);
		rn_loop_del(ev_of(c, side));
		if (c->sp.eof[side])
			sbx_ksplice_gone(&c->sp, side);  /* nothing can be written to it */
		else
			c->parked[side] = 1;
		splice_update(c);
		return;
	}
	if (events & (EPOLLIN | EPOLLERR)) {
		long n = sbx_ksplice_read(&c->sp, side, fd);
		if (n > 0) {
			moved(c, side, n);
		} else if (n == -1) {
			conn_done(c);
			return;
		}
	}
	if (events & EPOLLOUT && sbx_ksplice_flush(&c->sp, side, fd) < 0) {
		conn_done(c);
		return;
	}
	splice_update(c);
}

static void on_out(struct rn_ev *ev, uint32_t events)
{
	struct eg_conn *c = ev->owner;
	int soerr = 0;
	socklen_t sl = sizeof(soerr);

	if (c->st == EG_SPLICE) {
		splice_side(c, SBX_SPLICE_B, ev->fd, events);
		return;
	}
	if (c->st != EG_CONNECT)
		return;
	if (getsockopt(ev->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr) {
		snprintf(c->rule + strlen(c->rule), sizeof(c->rule) - strlen(c->rule),
			 "; connect failed");
		eg_log_add(c->e, c->name, c->port, 1, c->rule, 0, 0);
		c->logged = 1;
		reset_close(c);
		return;
	}
	/* A: the sandbox, B: the server; the peeked bytes go first */
	if (sbx_ksplice_init(&c->sp, SPLICE_PIPE) < 0 ||
	    sbx_ksplice_queue(&c->sp, SBX_SPLICE_B, sbx_buf_head(&c->to_up), c->to_up.len) < 0) {
		snprintf(c->rule + strlen(c->rule), sizeof(c->rule) - strlen(c->rule),
			 "; no pipe: %s", strerror(errno));
		eg_log_add(c->e, c->name, c->port, 1, c->rule, 0, 0);
		c->logged = 1;
		reset_close(c);
		return;
	}
	c->st = EG_SPLICE;
	c->deadline = 0;
	c->bytes_out = c->to_up.len;
	sbx_buf_free(&c->to_up);
	splice_update(c);
}

static void hand_over(struct eg_conn *c, const struct sockaddr_in *to);

static void resolved(void *ctx, int rcode, const uint32_t *addrs, int n, uint32_t ttl)
{
	struct eg_conn *c = ctx;
	struct rn_egress *e = c->e;
	const char *why = NULL;
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((uint16_t)c->port) };
	int pick = -1;

	(void)ttl;
	c->lookup = NULL;
	if (rcode != 0 || n == 0) {
		deny(c, rcode < 0 ? "DNS failed" : "no such name");
		return;
	}
	for (int i = 0; i < n && pick < 0; i++) {
		const char *w = rn_policy_addr_denied(eg_mode(e) == RN_NET_POLICY ?
						      e->sb->spec.policy : NULL, ntohl(addrs[i]));
		if (w)
			why = w;
		else
			pick = i;
	}
	if (pick < 0) {
		deny(c, why);
		return;
	}
	to.sin_addr.s_addr = addrs[pick];
	if (c->rules) {
		hand_over(c, &to);
		return;
	}
	c->out.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	c->out.owner = c;
	c->out.cb = on_out;
	if (c->out.fd < 0 || (connect(c->out.fd, (struct sockaddr *)&to, sizeof(to)) < 0 &&
			      errno != EINPROGRESS) ||
	    rn_loop_add(&c->out, EPOLLOUT) < 0) {
		if (c->out.fd >= 0)
			close(c->out.fd);
		c->out.fd = -1;
		eg_log_add(e, c->name, c->port, 1, "connect failed", 0, 0);
		c->logged = 1;
		reset_close(c);
		return;
	}
	c->st = EG_CONNECT;
	c->deadline = rn_now_mono() + CONNECT_MS;
	rn_loop_mod(&c->in, 0);
}

/* A name with rules: its connection goes to a decrypting thread
 * (rn_egress_mitm.c) with the bytes read so far. */
static void hand_over(struct eg_conn *c, const struct sockaddr_in *to)
{
	struct sbx_err err = { 0, "" };
	int fd = c->in.fd;

	rn_loop_del(&c->in);
	if (eg_mitm_start(c->e, fd, to, c->port, c->name, c->rule, c->rules,
			  sbx_buf_head(&c->to_up), c->to_up.len, &err) < 0) {
		rn_loop_add(&c->in, 0);
		deny(c, err.msg);
		return;
	}
	c->rules = NULL;        /* the thread's now, with the socket */
	c->in.fd = -1;
	c->logged = 1;
	conn_free(c);
}

/* The first bytes: enough of them to name the destination? */
static void peek(struct eg_conn *c)
{
	struct sbx_err err = { 0, "" };
	const char *rule;
	int rc = c->port == 80 ? sbx_host_peek(sbx_buf_head(&c->to_up), c->to_up.len, c->name)
			       : sbx_sni_peek(sbx_buf_head(&c->to_up), c->to_up.len, c->name);

	if (rc == SBX_PEEK_MORE) {
		if (c->to_up.len >= PEEK_MAX)
			deny(c, "no name in the first bytes");
		return;
	}
	if (rc != SBX_PEEK_NAME) {
		c->name[0] = '\0';
		deny(c, rc == SBX_PEEK_ECH ? "encrypted client hello" :
			rc == SBX_PEEK_NONAME ? (c->port == 80 ? "no Host" : "no SNI") :
			c->port == 80 ? "not HTTP/1" : "not a TLS ClientHello");
		return;
	}
	rule = eg_allowed(c->e, c->name);
	if (!rule) {
		deny(c, "not allowed");
		return;
	}
	snprintf(c->rule, sizeof(c->rule), "%s", rule);
	if (eg_mode(c->e) == RN_NET_POLICY) {
		const struct rn_rules *rs = rn_policy_rules(c->e->sb->spec.policy, c->name);
		if (rs && !(c->rules = rn_rules_dup(rs))) {
			deny(c, "out of memory");
			return;
		}
	}
	c->lookup = rn_resolve_a(c->name, resolved, c, &err);
	if (!c->lookup) {
		deny(c, "DNS failed");
		return;
	}
	c->st = EG_RESOLVE;
	rn_loop_mod(&c->in, 0);     /* nothing more is read until it is spliced */
}

static void on_in(struct rn_ev *ev, uint32_t events)
{
	struct eg_conn *c = ev->owner;

	switch (c->st) {
	case EG_PEEK: {
		unsigned char *p = sbx_buf_reserve(&c->to_up, 4096);
		ssize_t n;
		if (!p) {
			reset_close(c);
			return;
		}
		n = recv(ev->fd, p, 4096, 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			conn_free(c);
			return;
		}
		sbx_buf_commit(&c->to_up, (size_t)n);
		peek(c);
		return;
	}
	case EG_DRAIN: {
		char junk[4096];
		ssize_t n = recv(ev->fd, junk, sizeof(junk), 0);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) ||
		    (events & (EPOLLHUP | EPOLLERR)))
			conn_free(c);
		return;
	}
	case EG_SPLICE:
		splice_side(c, SBX_SPLICE_A, ev->fd, events);
		return;
	default:
		if (events & (EPOLLHUP | EPOLLERR))
			conn_free(c);
		return;
	}
}

/* The sandbox's leg is a veth on this host, with no bottleneck queue for
 * a congestion control to find. BBR (a common host default) paces every
 * burst with a high-resolution timer when the qdisc is not fq: on that leg
 * the timers were the largest share of the runner's CPU and cost a third
 * of the spliced throughput (bench/egress.sh). Cubic does not pace; reno, which every
 * kernel has, where cubic is not built. The server's leg keeps the host's
 * choice: it crosses the real network. */
static void local_leg_unpaced(int fd)
{
	static const char *const cc[] = { "cubic", "reno" };
	static int warned;

	for (size_t i = 0; i < sizeof(cc) / sizeof(cc[0]); i++)
		if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc[i], (socklen_t)strlen(cc[i])) == 0)
			return;
	if (!warned++)
		sbx_warn("the sandbox's leg keeps the host's congestion control: %s",
			 strerror(errno));
}

void eg_conn_on_accept(struct rn_ev *ev, uint32_t events)
{
	struct rn_egress *e = ev->owner;
	int port = ev == &e->l80 ? 80 : 443;

	(void)events;
	for (int i = 0; i < 16; i++) {
		int fd = accept4(ev->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct eg_conn *c;
		if (fd < 0)
			return;
		if (e->n_conns >= EG_MAX_CONNS || !(c = calloc(1, sizeof(*c)))) {
			struct linger lg = { 1, 0 };
			setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
			close(fd);
			eg_log_add(e, "", port, 0, "too many connections", 0, 0);
			continue;
		}
		local_leg_unpaced(fd);
		c->e = e;
		c->port = port;
		c->in.fd = fd;
		c->in.owner = c;
		c->in.cb = on_in;
		c->out.fd = -1;
		sbx_buf_init(&c->to_up, PEEK_MAX + 4096);   /* the last 4 KiB read may pass it */
		c->sp = (struct sbx_ksplice){ .pipe = { { -1, -1 }, { -1, -1 } } };
		c->st = EG_PEEK;
		c->deadline = rn_now_mono() + PEEK_MS;
		if (rn_loop_add(&c->in, EPOLLIN) < 0) {
			close(fd);
			sbx_buf_free(&c->to_up);
			free(c);
			continue;
		}
		c->next = e->conns;
		e->conns = c;
		e->n_conns++;
	}
}

int eg_conn_sweep(struct rn_egress *e, int64_t now)
{
	int next = -1;

	for (struct eg_conn *c = e->conns, *nx; c; c = nx) {
		nx = c->next;
		if (!c->deadline)
			continue;
		if (now >= c->deadline) {
			if (c->st == EG_PEEK)
				deny(c, "no name in time");
			else if (c->st == EG_CONNECT) {
				eg_log_add(e, c->name, c->port, 1, "connect timed out", 0, 0);
				c->logged = 1;
				reset_close(c);
			} else
				conn_free(c);
			nx = e->conns;      /* restart: the list changed */
			continue;
		}
		if (next < 0 || c->deadline - now < next)
			next = (int)(c->deadline - now);
	}
	return next;
}

void eg_conn_close_all(struct rn_egress *e)
{
	while (e->conns)
		conn_done(e->conns);
}

void eg_conn_recheck(struct rn_egress *e)
{
	for (struct eg_conn *c = e->conns, *nx; c; c = nx) {
		nx = c->next;
		if (c->st == EG_PEEK || c->st == EG_DRAIN || eg_allowed(e, c->name))
			continue;
		eg_log_add(e, c->name, c->port, 0, "policy update", c->bytes_out, c->bytes_in);
		c->logged = 1;
		reset_close(c);
	}
}
