#include "rn_conn.h"

#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rn_sandbox.h"
#include "sbx_buf.h"
#include "sbx_dial.h"
#include "sbx_frame.h"
#include "sbx_json.h"
#include "sbx_log.h"
#include "sbx_net.h"
#include "sbx_splice.h"

enum cstate { C_REQ, C_WAIT, C_REPLY, C_HANDSHAKE, C_SPLICE, C_DEAD };

struct rn_conn {
	struct rn_ev ev;          /* the client */
	struct rn_ev peer;        /* the agent socket (connect) */
	struct runner *r;
	enum cstate state;
	struct sbx_buf in;        /* request bytes, then client -> agent */
	struct sbx_buf out;       /* reply bytes, then agent -> client */
	struct sbx_buf hs;        /* the guest's "OK <n>\n" line */
	int64_t deadline;         /* 0 = none */
	struct rn_sandbox *wait_sb;
	enum rn_wait wait_kind;
	const void *park;         /* parked on this (rn_conn_park), NULL none */
	cJSON *park_req;          /* the request to resume, owned */
	int port;
	char sid[RN_ID_MAX];      /* the sandbox a splice goes to ("" none) */
	char owner[sizeof(((struct rn_spec *)0)->owner)];   /* its owner tag */
	struct sbx_splice sp;     /* A: the client, B: the agent (in, out) */
	int p_parked;             /* peer hung up, out of epoll until room */
	int remote;               /* came over TLS: no fd passing, no drain */
	int keep;                 /* this request asked to keep the connection */
	int served;               /* requests read on this connection */
	int idle;                 /* kept, waiting for the next request's first bytes */
	int want_fd;              /* a connect waiting for its sandbox: "fd" asked */
	int resumed;              /* a connect that resumed its sandbox: the ok says so */
	struct rn_conn *next;
};

/* All connections; one list because there are few and sweeps are cheap. */
static struct rn_conn *conns;
static int n_conns;

static void conn_close(struct rn_conn *c)
{
	if (c->state == C_DEAD)
		return;
	rn_loop_del(&c->ev);
	close(c->ev.fd);
	c->ev.fd = -1;
	if (c->peer.fd >= 0) {
		rn_loop_del(&c->peer);
		close(c->peer.fd);
		c->peer.fd = -1;
	}
	c->state = C_DEAD;
	c->wait_sb = NULL;
	c->park = NULL;
	cJSON_Delete(c->park_req);
	c->park_req = NULL;
}

static void splice_update(struct rn_conn *c);
static void handle_frame(struct rn_conn *c);

/* The reply went out: close, or (kept) wait for the next request, which
 * may have come already behind this one. */
static void reply_sent(struct rn_conn *c)
{
	if (!c->keep || c->served >= RN_KEEP_REQUESTS) {
		conn_close(c);
		return;
	}
	c->keep = c->want_fd = c->resumed = 0;
	c->idle = 1;
	c->state = C_REQ;
	c->deadline = rn_now_mono() + RN_KEEP_IDLE_MS;
	rn_loop_mod(&c->ev, EPOLLIN | EPOLLRDHUP);
	if (c->in.len) {
		c->idle = 0;
		c->deadline = rn_now_mono() + RN_REQ_TIMEOUT_MS;
		handle_frame(c);
	}
}

/* Read into b up to its cap. Returns bytes read, 0 on EOF, -1 error,
 * -2 would block. */
static ssize_t fill(int fd, struct sbx_buf *b, size_t room)
{
	unsigned char *p;
	ssize_t n;

	if (room > 65536)
		room = 65536;
	p = sbx_buf_reserve(b, room);
	if (!p)
		return -1;
	n = recv(fd, p, room, MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? -2 : -1;
	sbx_buf_commit(b, (size_t)n);
	return n;
}

static void send_json(struct rn_conn *c, cJSON *o)
{
	char *txt = sbx_json_print(o);

	cJSON_Delete(o);
	sbx_buf_reset(&c->out);
	if (!txt || sbx_frame_append(&c->out, SBX_FRAME_JSON, txt, strlen(txt)) < 0) {
		cJSON_free(txt);
		conn_close(c);
		return;
	}
	cJSON_free(txt);
	if (c->state == C_HANDSHAKE) {
		/* the ok precedes the stream; flushed by the splice */
		return;
	}
	c->state = C_REPLY;
	c->deadline = rn_now_mono() + RN_REQ_TIMEOUT_MS;
	if (sbx_send_buf(c->ev.fd, &c->out) < 0) {
		conn_close(c);
		return;
	}
	if (!c->out.len) {
		reply_sent(c);
		return;
	}
	rn_loop_mod(&c->ev, EPOLLOUT);
}

void rn_conn_reply_ok(struct rn_conn *c, const char *key, cJSON *obj)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddBoolToObject(o, "ok", 1);
	if (c->resumed)
		cJSON_AddBoolToObject(o, "resumed", 1);
	if (key && obj)
		cJSON_AddItemToObject(o, key, obj);
	else if (obj)
		cJSON_Delete(obj);
	send_json(c, o);
}

void rn_conn_reply_fd(struct rn_conn *c, int fd)
{
	unsigned char frame[64];
	const char *ok = c->resumed ? "{\"ok\":true,\"resumed\":true}" : "{\"ok\":true}";
	size_t len = strlen(ok), n = SBX_FRAME_HDR + len;

	sbx_frame_header(frame, SBX_FRAME_JSON, (uint32_t)len);
	memcpy(frame + SBX_FRAME_HDR, ok, len);
	/* the reply is the first and only write on this connection: an empty
	 * socket buffer takes these few bytes at once */
	if (sbx_send_fd(c->ev.fd, frame, n, fd, MSG_DONTWAIT) != (ssize_t)n)
		sbx_warn("connect: passing the socket failed: %s", strerror(errno));
	close(fd);
	conn_close(c);
}

void rn_conn_reply_obj(struct rn_conn *c, cJSON *obj)
{
	send_json(c, obj);
}

void rn_conn_reply_err(struct rn_conn *c, const char *code, const char *msg)
{
	cJSON *o = cJSON_CreateObject(), *e;

	cJSON_AddBoolToObject(o, "ok", 0);
	e = cJSON_AddObjectToObject(o, "error");
	cJSON_AddStringToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", msg);
	if (c->state == C_HANDSHAKE)
		c->state = C_WAIT;      /* plain reply, then close */
	send_json(c, o);
}

static void handle_frame(struct rn_conn *c)
{
	struct sbx_frame f;
	struct sbx_err err = { 0, "" };
	long n = sbx_frame_decode(sbx_buf_head(&c->in), c->in.len, RN_REQ_MAX, &f, &err);
	cJSON *req;

	if (n == 0)
		return;
	if (n < 0) {
		rn_conn_reply_err(c, "bad_request", err.msg);
		return;
	}
	if (f.type != SBX_FRAME_JSON) {
		rn_conn_reply_err(c, "bad_request", "expected a JSON frame (type 3)");
		return;
	}
	req = sbx_json_parse_object(f.payload, f.len, &err);
	if (!req) {
		rn_conn_reply_err(c, "bad_request", err.msg);
		return;
	}
	/* Anything after the request frame is ignored (or, for connect,
	 * forwarded; or, kept, the next request: keep it). */
	sbx_buf_consume(&c->in, (size_t)n);
	c->served++;
	c->keep = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(req, "keep"));
	c->state = C_WAIT;
	rn_api_handle(c->r, c, req);
	cJSON_Delete(req);
}

static void on_client(struct rn_ev *ev, uint32_t events)
{
	struct rn_conn *c = ev->owner;
	ssize_t n;

	switch (c->state) {
	case C_REQ:
		n = fill(c->ev.fd, &c->in, RN_REQ_MAX + SBX_FRAME_HDR - c->in.len);
		if (n == -2)
			return;
		if (n <= 0) {
			conn_close(c);
			return;
		}
		if (c->idle) {   /* a kept connection's next request: its own deadline */
			c->idle = 0;
			c->deadline = rn_now_mono() + RN_REQ_TIMEOUT_MS;
		}
		handle_frame(c);
		if (c->state == C_REQ && c->in.len >= RN_REQ_MAX + SBX_FRAME_HDR)
			rn_conn_reply_err(c, "bad_request", "request too large");
		return;
	case C_WAIT:
	case C_HANDSHAKE:
		/* only full hang-ups (HUP/ERR are always reported): a client
		 * that half-closes after its request still gets the reply */
		if (events & (EPOLLHUP | EPOLLERR))
			conn_close(c);
		return;
	case C_REPLY:
		if (sbx_send_buf(c->ev.fd, &c->out) < 0)
			conn_close(c);
		else if (!c->out.len)
			reply_sent(c);
		return;
	case C_SPLICE:
		if (events & EPOLLIN)
			sbx_splice_read(&c->sp, SBX_SPLICE_A, c->ev.fd);
		if (events & EPOLLOUT && sbx_splice_flush(&c->sp, SBX_SPLICE_A, c->ev.fd) < 0) {
			conn_close(c);
			return;
		}
		/* HUP: the client closed both directions; nothing more can
		 * reach it, and HUP is level-triggered */
		if (events & (EPOLLERR | EPOLLHUP)) {
			sbx_splice_flush(&c->sp, SBX_SPLICE_B, c->peer.fd);
			conn_close(c);
			return;
		}
		splice_update(c);
		return;
	case C_DEAD:
		return;
	}
}

static void handshake_line(struct rn_conn *c)
{
	long linelen = sbx_dial_parse_ok(sbx_buf_head(&c->hs), c->hs.len, c->port);

	if (linelen == 0)
		return;
	if (linelen < 0) {
		rn_conn_reply_err(c, "conflict", "the guest refused the connection "
				  "(nothing listens on that port?)");
		return;
	}
	sbx_buf_consume(&c->hs, (size_t)linelen);
	/* Bytes after OK belong to the stream, behind our ok reply. */
	c->state = C_HANDSHAKE;
	rn_conn_reply_ok(c, NULL, NULL);
	if (c->state == C_DEAD)
		return;
	if (c->hs.len && sbx_buf_append(&c->out, sbx_buf_head(&c->hs), c->hs.len) < 0) {
		conn_close(c);
		return;
	}
	sbx_buf_free(&c->hs);
	c->state = C_SPLICE;
	c->deadline = 0;
	splice_update(c);
}

static void on_peer(struct rn_ev *ev, uint32_t events)
{
	struct rn_conn *c = ev->owner;
	ssize_t n;

	if (c->state == C_HANDSHAKE) {
		n = fill(c->peer.fd, &c->hs, 64 - c->hs.len);
		if (n == -2)
			return;
		if (n <= 0) {
			rn_conn_reply_err(c, "conflict", "the guest closed the connection "
					  "(nothing listens on that port?)");
			return;
		}
		handshake_line(c);
		return;
	}
	if (c->state != C_SPLICE)
		return;
	if (events & EPOLLIN)
		sbx_splice_read(&c->sp, SBX_SPLICE_B, c->peer.fd);
	if (events & EPOLLHUP) {
		/* The guest closed both directions (e.g. the sandbox stopped).
		 * Drain what it sent as room allows; HUP is level-triggered, so
		 * the fd leaves epoll until there is room, or for good. */
		while (sbx_splice_read(&c->sp, SBX_SPLICE_B, c->peer.fd) > 0)
			;
		rn_loop_del(&c->peer);
		if (c->sp.eof[SBX_SPLICE_B]) {
			sbx_splice_gone(&c->sp, SBX_SPLICE_B);   /* nothing can be written to it */
		} else {
			c->p_parked = 1;
		}
		splice_update(c);
		return;
	}
	if (events & EPOLLOUT && sbx_splice_flush(&c->sp, SBX_SPLICE_B, c->peer.fd) < 0) {
		conn_close(c);
		return;
	}
	if ((events & EPOLLERR) && !(events & EPOLLIN)) {
		conn_close(c);
		return;
	}
	splice_update(c);
}

/* epoll's events for what the splice waits for on side; EPOLLRDHUP only
 * while that side is still read. */
static uint32_t splice_events(const struct sbx_splice *sp, enum sbx_splice_side side)
{
	unsigned w = sbx_splice_events(sp, side);

	return (w & SBX_SPLICE_IN ? EPOLLIN : 0) | (w & SBX_SPLICE_OUT ? EPOLLOUT : 0) |
	       (sp->eof[side] ? 0 : EPOLLRDHUP);
}

/* Flow control (lib/sbx_splice.c): read a side only while the buffer
 * toward the other side has room; pass EOF on once that buffer drained;
 * close when both ended. */
static void splice_update(struct rn_conn *c)
{
	uint32_t ce, pe;

	if (c->state != C_SPLICE)
		return;
	if (sbx_splice_step(&c->sp, c->ev.fd, c->peer.fd) <= 0) {
		conn_close(c);
		return;
	}
	ce = splice_events(&c->sp, SBX_SPLICE_A);
	pe = splice_events(&c->sp, SBX_SPLICE_B);
	rn_loop_mod(&c->ev, ce);
	if (c->sp.gone[SBX_SPLICE_B])
		return;
	if (c->p_parked) {
		if (!(pe & EPOLLIN))
			return;         /* still no room: stay out of epoll */
		c->p_parked = 0;
		rn_loop_add(&c->peer, pe);
		return;
	}
	rn_loop_mod(&c->peer, pe);
}

/* Live splices (or handshakes) to the sandbox with this id, and to any
 * sandbox of its owner tag (untagged sandboxes share no owner). A walk of
 * the list: at most RN_MAX_CONNS, and only once per connect. */
static void splices_to(const struct rn_sandbox *sb, int *to_sb, int *to_owner)
{
	*to_sb = *to_owner = 0;
	for (struct rn_conn *c = conns; c; c = c->next) {
		if (c->state != C_HANDSHAKE && c->state != C_SPLICE)
			continue;
		*to_sb += !strcmp(c->sid, sb->id);
		*to_owner += sb->spec.owner[0] && !strcmp(c->owner, sb->spec.owner);
	}
}

void rn_conn_connect(struct rn_conn *c, struct rn_sandbox *sb, int port)
{
	int fd;
	char msg[160];

	int to_sb, to_owner;
	splices_to(sb, &to_sb, &to_owner);
	if (to_sb >= RN_MAX_CONNS_PER_SANDBOX || to_owner >= RN_MAX_CONNS_PER_OWNER) {
		if (to_sb >= RN_MAX_CONNS_PER_SANDBOX)
			snprintf(msg, sizeof(msg), "sandbox %s has %d connections, the most one "
				 "sandbox may have", sb->id, RN_MAX_CONNS_PER_SANDBOX);
		else
			snprintf(msg, sizeof(msg), "the owner of %s has %d connections to its "
				 "sandboxes, the most one owner may have", sb->id,
				 RN_MAX_CONNS_PER_OWNER);
		rn_conn_reply_err(c, "too_many_connections", msg);
		return;
	}
	/* the answer is read by on_peer: the loop never waits on a guest */
	fd = sbx_dial_start(sb->agent_socket, port);
	if (fd < 0) {
		snprintf(msg, sizeof(msg), "cannot reach the agent of %s: %s", sb->id,
			 strerror(errno));
		rn_conn_reply_err(c, "conflict", msg);
		return;
	}
	c->peer.fd = fd;
	c->peer.cb = on_peer;
	c->peer.owner = c;
	sbx_buf_init(&c->hs, 64);
	c->state = C_HANDSHAKE;
	c->port = port;
	snprintf(c->sid, sizeof(c->sid), "%s", sb->id);
	snprintf(c->owner, sizeof(c->owner), "%s", sb->spec.owner);
	c->deadline = rn_now_mono() + RN_HANDSHAKE_TIMEOUT_MS;
	if (rn_loop_add(&c->peer, EPOLLIN | EPOLLRDHUP) < 0) {
		rn_conn_reply_err(c, "internal", "epoll");
		return;
	}
	rn_loop_mod(&c->ev, 0);
}

void rn_conn_wait(struct rn_conn *c, struct rn_sandbox *sb, enum rn_wait kind)
{
	c->state = C_WAIT;
	c->wait_sb = sb;
	c->wait_kind = kind;
	c->deadline = 0;
	rn_loop_mod(&c->ev, 0);
}

void rn_conn_wait_connect(struct rn_conn *c, struct rn_sandbox *sb, int port, int want_fd)
{
	c->resumed = 1;
	c->port = port;
	c->want_fd = want_fd;
	if (sb->status == RN_RUNNING)
		rn_api_connect(c->r, c, sb, port, want_fd);
	else
		rn_conn_wait(c, sb, RN_WAIT_CONNECT);
}

void rn_conn_wait_redo(struct rn_conn *c, struct rn_sandbox *sb, const cJSON *req)
{
	c->resumed = 1;
	cJSON_Delete(c->park_req);
	c->park_req = cJSON_Duplicate(req, 1);
	if (!c->park_req) {
		rn_conn_reply_err(c, "internal", "out of memory");
		return;
	}
	rn_conn_wait(c, sb, RN_WAIT_REDO);
}

void rn_conn_wait_settled(struct rn_conn *c, struct rn_sandbox *sb, const cJSON *req)
{
	int resumed = c->resumed;

	rn_conn_wait_redo(c, sb, req);
	c->resumed = resumed;
	if (c->state == C_WAIT)
		c->wait_kind = RN_WAIT_SETTLED;
}

void rn_conn_set_resumed(struct rn_conn *c)
{
	c->resumed = 1;
}

void rn_conn_park(struct rn_conn *c, const void *on, cJSON *req)
{
	c->state = C_WAIT;
	c->park = on;
	c->park_req = req;
	c->deadline = 0;
	rn_loop_mod(&c->ev, 0);   /* a hang-up (HUP, ERR) still closes it */
}

int rn_conn_unpark(struct runner *r, const void *on, rn_conn_resume_fn fn, void *arg)
{
	int n = 0;

	for (struct rn_conn *c = conns; c; c = c->next) {
		cJSON *req;
		if (c->state != C_WAIT || !on || c->park != on)
			continue;
		req = c->park_req;
		c->park = NULL;
		c->park_req = NULL;
		fn(r, c, req, arg);
		cJSON_Delete(req);
		n++;
	}
	return n;
}

int rn_conn_waiting_on(const struct rn_sandbox *sb)
{
	for (struct rn_conn *c = conns; c; c = c->next)
		if (c->state == C_WAIT && c->wait_sb == sb)
			return 1;
	return 0;
}

/* Why a sandbox ended before it was ready: what the driver said, else
 * how it was stopped (a timeout_ms shorter than a busy host's start). */
static const char *start_failure(const struct rn_sandbox *sb, char *buf, size_t n)
{
	if (sb->error[0])
		return sb->error;
	if (sb->reason == RN_REASON_TIMEOUT)
		return "its timeout_ms ran out before it was ready (a busy host starts slowly; "
		       "give it more time)";
	if (sb->reason == RN_REASON_NONE)
		return "it ended before it was ready";
	snprintf(buf, n, "it was stopped (%s) before it was ready", rn_reason_name(sb->reason));
	return buf;
}

void rn_conn_sandbox_changed(struct runner *r, struct rn_sandbox *sb)
{
	for (struct rn_conn *c = conns; c; c = c->next) {
		if (c->state != C_WAIT || c->wait_sb != sb)
			continue;
		if (sb->transition) {
			/* a pause or resume runs off the loop: wait for its end */
		} else if (c->wait_kind == RN_WAIT_SETTLED || (c->wait_kind == RN_WAIT_REDO &&
							       sb->status == RN_RUNNING)) {
			cJSON *req = c->park_req;
			c->park_req = NULL;
			c->wait_sb = NULL;
			rn_api_handle(r, c, req);   /* handled as any request now */
			cJSON_Delete(req);
		} else if (c->wait_kind == RN_WAIT_PAUSE && sb->status == RN_STOPPING) {
			c->wait_kind = RN_WAIT_FINAL;   /* a keep that failed: stopped */
		} else if (c->wait_kind == RN_WAIT_PAUSE) {
			c->wait_sb = NULL;
			if (sb->status == RN_RUNNING)
				rn_conn_reply_err(c, "internal", sb->tr_err[0] ? sb->tr_err :
						  "the pause failed");
			else
				rn_conn_reply_ok(c, "sandbox", rn_sandbox_json(r, sb));
		} else if (sb->status == RN_PAUSED && c->wait_kind != RN_WAIT_FINAL) {
			/* a resume off the loop failed: it is paused as before */
			char msg[400];
			c->wait_sb = NULL;
			snprintf(msg, sizeof msg, "sandbox %s could not be resumed: %s", sb->id,
				 sb->tr_err[0] ? sb->tr_err : "the resume failed");
			rn_conn_reply_err(c, "internal", msg);
		} else if (c->wait_kind == RN_WAIT_READY && sb->status == RN_RUNNING) {
			c->wait_sb = NULL;
			rn_conn_reply_ok(c, "sandbox", rn_sandbox_json(r, sb));
		} else if (c->wait_kind == RN_WAIT_CONNECT && sb->status == RN_RUNNING) {
			c->wait_sb = NULL;
			rn_api_connect(r, c, sb, c->port, c->want_fd);
		} else if (rn_sandbox_final(sb)) {
			c->wait_sb = NULL;
			if (c->wait_kind != RN_WAIT_FINAL) {
				char msg[400], why[64];
				snprintf(msg, sizeof(msg), "sandbox %s failed to start: %s",
					 sb->id, start_failure(sb, why, sizeof why));
				rn_conn_reply_err(c, "internal", msg);
			} else {
				rn_conn_reply_ok(c, "sandbox", rn_sandbox_json(r, sb));
			}
		}
	}
}

int rn_conn_adopt(struct runner *r, int fd, int remote, int64_t deadline)
{
	struct rn_conn *c;

	if (n_conns >= RN_MAX_CONNS || !(c = calloc(1, sizeof(*c)))) {
		close(fd);
		return -1;
	}
	c->r = r;
	c->remote = remote;
	c->ev.fd = fd;
	c->ev.cb = on_client;
	c->ev.owner = c;
	c->peer.fd = -1;
	sbx_buf_init(&c->in, RN_SPLICE_BUF);
	sbx_buf_init(&c->out, RN_SPLICE_BUF + SBX_FRAME_HDR + 4096);
	sbx_splice_init(&c->sp, &c->out, &c->in, RN_SPLICE_BUF);
	c->state = C_REQ;
	c->deadline = deadline;
	if (rn_loop_add(&c->ev, EPOLLIN | EPOLLRDHUP) < 0) {
		close(fd);
		free(c);
		return -1;
	}
	c->next = conns;
	conns = c;
	n_conns++;
	return 0;
}

int rn_conn_take(struct rn_conn *c, unsigned char **pending, size_t *n)
{
	int fd = c->ev.fd, fl;

	*n = c->in.len;
	*pending = malloc(*n ? *n : 1);
	if (!*pending)
		return -1;
	memcpy(*pending, sbx_buf_head(&c->in), *n);
	rn_loop_del(&c->ev);
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	c->ev.fd = -1;
	if (c->peer.fd >= 0) {
		rn_loop_del(&c->peer);
		close(c->peer.fd);
		c->peer.fd = -1;
	}
	c->state = C_DEAD;
	c->wait_sb = NULL;
	return fd;
}

int rn_conn_remote(const struct rn_conn *c)
{
	return c->remote;
}

int rn_conn_accept(struct runner *r, int listen_fd)
{
	for (int i = 0; i < 64; i++) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			/* out of descriptors or memory: the connection stays
			 * queued and epoll says so again at once, so the caller
			 * must stop listening for a moment instead of spinning */
			return errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			       errno == ENOMEM ? -1 : 0;
		rn_conn_adopt(r, fd, 0, rn_now_mono() + RN_REQ_TIMEOUT_MS);
	}
	return 0;
}

int rn_conn_sweep(void)
{
	int64_t now = rn_now_mono(), next = -1;
	struct rn_conn **pp = &conns;
	int freed = 0;

	while (*pp) {
		struct rn_conn *c = *pp;
		if (c->state != C_DEAD && c->deadline && now >= c->deadline) {
			if (c->state == C_HANDSHAKE)
				rn_conn_reply_err(c, "conflict", "the guest did not answer the handshake");
			else
				conn_close(c);
		}
		if (c->state == C_DEAD) {
			*pp = c->next;
			sbx_buf_free(&c->in);
			sbx_buf_free(&c->out);
			sbx_buf_free(&c->hs);
			free(c);
			n_conns--;
			freed++;
			continue;
		}
		if (c->deadline && (next < 0 || c->deadline - now < next))
			next = c->deadline - now;
		pp = &c->next;
	}
	/* Bursts of connections leave their 256 KiB buffers in the heap as
	 * a high-water mark (seen in the soak: +12 MiB idle to idle); give it
	 * back once nothing is connected. */
	if (freed && !n_conns)
		malloc_trim(0);
	return (int)next;
}

void rn_conn_close_all(void)
{
	for (struct rn_conn *c = conns; c; c = c->next)
		conn_close(c);
	rn_conn_sweep();
}
