/* Connections: accept, the hybrid-vsock "CONNECT <port>\n" handshake, the
 * first frame choosing the operation, frame dispatch afterwards, bounded
 * send queues, error frames and a lingering close (so that a final error
 * frame is not destroyed by a reset when the peer still has unread input
 * on our side). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent.h"
#include "sbx_hs.h"
#include "sbx_frame.h"
#include "sbx_json.h"
#include "sbx_log.h"


cJSON *ag_ok(void)
{
	cJSON *o = cJSON_CreateObject();

	if (o)
		cJSON_AddBoolToObject(o, "ok", 1);
	return o;
}

const char *ag_errno_code(int e)
{
	switch (e) {
	case ENOENT: case ENOTDIR:
		return "not_found";
	case EEXIST: case ENOTEMPTY: case EBUSY: case ETXTBSY:
		return "conflict";
	case EISDIR: case EINVAL: case ENAMETOOLONG: case ELOOP: case EACCES:
	case EPERM: case EROFS:
		return "invalid";
	default:
		return "io";
	}
}

static void conn_free(struct ag_conn *c)
{
	sbx_buf_free(&c->in);
	sbx_buf_free(&c->out);
	sbx_buf_free(&c->up);
	sbx_buf_free(&c->down);
	free(c->tmp_path);
	free(c->final_path);
	free(c);
}

static struct ag_conn *dead_conns;

/* Close now, free after the loop round: handlers may still hold c (or have
 * events for it queued in the same epoll batch) and check c->dead. */
void ag_conn_close(struct ag_conn *c)
{
	if (c->dead)
		return;
	ag_cmd_detach(c);
	ag_fs_abort(c);
	ag_fwd_close(c);
	ag_ev_del(&c->ev);
	close(c->ev.fd);
	c->ev.fd = -1;
	c->dead = 1;
	if (c->prev)
		c->prev->next = c->next;
	else
		ag.conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	ag.nconns--;
	if (!c->quiet)
		ag.last_busy = ag_now_ms();
	c->next = dead_conns;
	dead_conns = c;
}

void ag_conn_pause_all(struct ag_conn *keep)
{
	for (;;) {
		struct ag_conn *c = ag.conns;

		while (c && c == keep)
			c = c->next;
		if (!c)
			break;
		if (c->cmd && c->state != AG_ST_CLOSING)
			ag_conn_fail(c, "paused", "the sandbox was paused: attach again after "
				     "it is resumed");
		ag_conn_close(c);
	}
}

void ag_conn_free_dead(void)
{
	while (dead_conns) {
		struct ag_conn *c = dead_conns;

		dead_conns = c->next;
		conn_free(c);
	}
}

void ag_conn_accept(void)
{
	int i;

	/* Bounded per wake-up so one busy listener cannot starve the loop. */
	for (i = 0; i < 64; i++) {
		int fd = accept4(ag.listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct ag_conn *c;

		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				sbx_warn("accept: %s", strerror(errno));
			return;
		}
		/* vsock peers are the host by construction (no credentials) */
		if (!ag.vsock && !ag_peer_allowed(fd)) {
			close(fd);
			continue;
		}
		if (ag.nconns >= AG_MAX_CONNS || !(c = calloc(1, sizeof(*c)))) {
			sbx_warn("refusing connection: %d open", ag.nconns);
			close(fd);
			continue;
		}
		{
			/* Room in the socket for bursts of output: a reader that
			 * is briefly descheduled then does not fall behind. */
			int sz = 1 << 20;

			setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		}
		c->ev = (struct ag_ev){ .kind = AG_EV_CONN, .owner = c, .fd = fd };
		c->peer = (struct ag_ev){ .kind = AG_EV_PEER, .owner = c, .fd = -1 };
		c->fd = -1;
		sbx_buf_init(&c->in, AG_IN_CAP);
		sbx_buf_init(&c->out, AG_OUT_CAP);
		sbx_buf_init(&c->up, 0);
		sbx_buf_init(&c->down, 0);
		/* Under vsock the host side answers "CONNECT 1024" itself and
		 * frames follow; a CONNECT line for another port is relayed here
		 * (sandbox-vsockd --relay-port) for the forward: both as on a
		 * UNIX socket. */
		c->state = AG_ST_DETECT;
		c->deadline = ag_deadline_in(AG_HANDSHAKE_MS);
		c->next = ag.conns;
		if (ag.conns)
			ag.conns->prev = c;
		ag.conns = c;
		ag.nconns++;
		ag_conn_update(c);
	}
}

void ag_conn_update(struct ag_conn *c)
{
	uint32_t m = 0;

	if (c->dead)
		return;
	if (c->state == AG_ST_FORWARD) {
		/* agent_fwd.c owns the masks while splicing */
		return;
	}
	if (!c->rd_closed && !c->in_paused)
		m |= EPOLLIN | EPOLLRDHUP;
	else if (c->rd_closed)
		m |= EPOLLHUP;   /* stay registered to learn of a full close */
	if (c->out.len || (c->ring_wait && c->state == AG_ST_ATTACH))
		m |= EPOLLOUT;
	ag_ev_set(&c->ev, m);
}

int ag_conn_json(struct ag_conn *c, cJSON *o)
{
	char *s = o ? sbx_json_print(o) : NULL;
	int rc = -1;

	if (s) {
		rc = sbx_frame_append(&c->out, SBX_FRAME_JSON, s, strlen(s));
		cJSON_free(s);
	}
	cJSON_Delete(o);
	if (rc < 0)
		sbx_warn("conn fd %d: cannot queue a reply", c->ev.fd);
	return rc;
}

void ag_conn_closing(struct ag_conn *c)
{
	ag_cmd_detach(c);
	ag_fs_abort(c);
	c->state = AG_ST_CLOSING;
	c->in_paused = 0;
	c->deadline = ag_deadline_in(AG_LINGER_MS);
	sbx_buf_reset(&c->in);
}

void ag_conn_fail(struct ag_conn *c, const char *code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	cJSON *o = cJSON_CreateObject(), *e;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sbx_debug("conn fd %d: %s: %s", c->ev.fd, code, msg);
	if (o) {
		cJSON_AddBoolToObject(o, "ok", 0);
		e = cJSON_AddObjectToObject(o, "error");
		if (e) {
			cJSON_AddStringToObject(e, "code", code);
			cJSON_AddStringToObject(e, "message", msg);
		}
	}
	ag_conn_json(c, o);
	ag_conn_closing(c);
	ag_conn_flush(c);
}

void ag_conn_fail_errno(struct ag_conn *c, int e, const char *what)
{
	ag_conn_fail(c, ag_errno_code(e), "%s: %s", what, strerror(e));
}

/* Success reply that ends the operation. */
void ag_conn_ok(struct ag_conn *c)
{
	ag_conn_json(c, ag_ok());
	ag_conn_closing(c);
	ag_conn_flush(c);
}

/* Write what is queued; refill from the operation's source (retention or
 * file) as the socket drains; finish a closing connection. May free c. */
void ag_conn_flush(struct ag_conn *c)
{
	int rounds;

	if (c->dead)
		return;
	for (rounds = 0; rounds < 64; rounds++) {
		if (c->state == AG_ST_ATTACH) {
			if (ag_cmd_pump(c) < 0) {
				ag_conn_close(c);
				return;
			}
		} else if (c->state == AG_ST_READ_FILE) {
			ag_fs_pump(c);
		}
		if (!c->out.len)
			break;
		ssize_t n = send(c->ev.fd, sbx_buf_head(&c->out), c->out.len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			sbx_debug("conn fd %d: send: %s", c->ev.fd, strerror(errno));
			ag_conn_close(c);
			return;
		}
		sbx_buf_consume(&c->out, (size_t)n);
	}
	/* Out of rounds right after a send emptied the queue: refill now, or
	 * nothing would ask for EPOLLOUT and the stream would stall. */
	if (c->state == AG_ST_ATTACH && ag_cmd_pump(c) < 0) {
		ag_conn_close(c);
		return;
	}
	if (c->state == AG_ST_READ_FILE)
		ag_fs_pump(c);
	if (c->state == AG_ST_CLOSING && !c->out.len) {
		if (!c->wr_shut) {
			shutdown(c->ev.fd, SHUT_WR);
			c->wr_shut = 1;
		}
		if (c->rd_closed) {
			ag_conn_close(c);
			return;
		}
	}
	ag_conn_update(c);
}

static void start_request(struct ag_conn *c, const unsigned char *p, uint32_t n)
{
	struct ag_req r;
	struct sbx_err err = { 0 };

	if (ag_req_parse(p, n, &r, &err) < 0) {
		ag_conn_fail(c, "bad_request", "%s", err.msg);
		return;
	}
	c->deadline = 0;
	switch (r.op) {
	case AG_OP_PING: {
		cJSON *o = ag_ok();

		cJSON_AddNumberToObject(o, "version", 1);
		ag_conn_json(c, o);
		ag_conn_closing(c);
		ag_conn_flush(c);
		break;
	}
	case AG_OP_IDLE: {
		/* how long nothing ran and nobody but this caller was connected:
		 * the runner's idle timeout asks this */
		cJSON *o = ag_ok();
		int busy = ag.nconns > 1;

		c->quiet = 1;
		for (struct ag_cmd *cmd = ag.cmds; cmd && !busy; cmd = cmd->next)
			busy = !cmd->exited;
		cJSON_AddNumberToObject(o, "idle_ms", busy ? 0 : (double)(ag_now_ms() - ag.last_busy));
		cJSON_AddNumberToObject(o, "connections", ag.nconns - 1);
		ag_conn_json(c, o);
		ag_conn_closing(c);
		ag_conn_flush(c);
		break;
	}
	case AG_OP_QUIESCE:
		/* a VM's pause (the vm driver, before it freezes the VM): the
		 * host cannot signal the guest's PID 1 as it does a jail's
		 * (SIGUSR1). The listener stays: the runner moves the host's
		 * socket aside while paused, so nothing new reaches it. */
		if (!ag.vsock) {
			ag_conn_fail(c, "bad_request", "quiesce is the vm driver's: elsewhere "
				     "the runner signals the agent");
			break;
		}
		c->quiet = 1;
		ag_conn_pause_all(c);
		sbx_info("quiesced for a pause: every other connection closed");
		ag_conn_ok(c);
		break;
	case AG_OP_WRITE_FILE: case AG_OP_READ_FILE: case AG_OP_MKDIR:
	case AG_OP_LIST: case AG_OP_STAT:
		ag_fs_request(c, &r);
		break;
	case AG_OP_FORWARD:
		ag_fwd_start(c, (int)r.port, 0);
		break;
	default:
		ag_cmd_request(c, &r);
		break;
	}
	ag_req_free(&r);
}

/* CONNECT <port>\n (lib/sbx_hs.c). Returns 1 when handled (c may be gone
 * or switched state), 0 when more bytes are needed. */
static int handshake(struct ag_conn *c)
{
	int port = 0;
	long used = sbx_hs_parse_connect(sbx_buf_head(&c->in), c->in.len, &port);

	if (used == 0)
		return 0;
	if (used < 0) {
		sbx_debug("conn fd %d: bad handshake", c->ev.fd);
		ag_conn_close(c);
		return 1;
	}
	sbx_buf_consume(&c->in, (size_t)used);
	if (port == AG_PROTO_PORT) {
		char ok[32];
		int k = snprintf(ok, sizeof(ok), "OK %d\n", AG_PROTO_PORT);

		sbx_buf_append(&c->out, ok, (size_t)k);
		c->state = AG_ST_REQUEST;
		c->deadline = ag_deadline_in(AG_FIRST_FRAME_MS);
		return 0;
	}
	ag_fwd_start(c, (int)port, 1);
	return 1;
}

/* Handle buffered input according to the state. May free c. */
void ag_conn_process(struct ag_conn *c)
{
	int guard;

	if (c->dead)
		return;
	for (guard = 0; guard < 1024; guard++) {
		struct sbx_frame f;
		struct sbx_err err = { 0 };
		long used;

		if (c->state == AG_ST_DETECT) {
			if (!c->in.len)
				break;
			c->state = sbx_buf_head(&c->in)[0] == 'C' ? AG_ST_HANDSHAKE : AG_ST_REQUEST;
			if (c->state == AG_ST_REQUEST)
				c->deadline = ag_deadline_in(AG_FIRST_FRAME_MS);
			continue;
		}
		if (c->state == AG_ST_HANDSHAKE) {
			if (handshake(c))
				return;
			continue;
		}
		if (c->state == AG_ST_CLOSING) {
			sbx_buf_reset(&c->in);
			break;
		}
		if (c->state == AG_ST_FORWARD || c->in_paused || !c->in.len)
			break;
		used = sbx_frame_decode(sbx_buf_head(&c->in), c->in.len, 0, &f, &err);
		if (used < 0) {
			ag_conn_fail(c, "bad_request", "%s", err.msg);
			return;
		}
		if (used == 0)
			break;
		switch (c->state) {
		case AG_ST_REQUEST:
			if (f.type != SBX_FRAME_JSON) {
				ag_conn_fail(c, "bad_request", "the first frame must be a JSON request");
				return;
			}
			/* copy out: the handlers may reuse the input buffer */
			{
				unsigned char *req = malloc(f.len ? f.len : 1);

				if (!req) {
					ag_conn_fail(c, "internal", "out of memory");
					return;
				}
				memcpy(req, f.payload, f.len);
				sbx_buf_consume(&c->in, (size_t)used);
				start_request(c, req, f.len);
				free(req);
			}
			if (c->dead)
				return;
			/* handlers that take more frames processed the buffer */
			return;
		case AG_ST_ATTACH:
		case AG_ST_STDIN: {
			int consumed = 0;

			ag_cmd_frame(c, f.type, f.payload, f.len, &consumed);
			if (consumed < 0 || c->dead)
				return;           /* conn failed or closed */
			if (!consumed)
				return;           /* paused on a full stdin pipe */
			if (c->state == AG_ST_CLOSING)
				return;
			sbx_buf_consume(&c->in, (size_t)used);
			break;
		}
		case AG_ST_WRITE_FILE:
			sbx_buf_consume(&c->in, (size_t)used);
			ag_fs_frame(c, f.type, f.payload, f.len);
			if (c->dead || c->state != AG_ST_WRITE_FILE)
				return;
			break;
		default:
			ag_conn_fail(c, "bad_request", "unexpected frame for this operation");
			return;
		}
	}
}

static void conn_read(struct ag_conn *c)
{
	int rounds;

	if (c->dead)
		return;
	for (rounds = 0; rounds < 4; rounds++) {
		unsigned char *p;
		size_t room;
		ssize_t n;

		if (c->state == AG_ST_CLOSING) {
			unsigned char junk[4096];

			n = recv(c->ev.fd, junk, sizeof(junk), 0);
		} else {
			if (c->in.len >= AG_IN_CAP) {
				/* a whole max frame fits; more means a stuck state */
				ag_conn_fail(c, "bad_request", "input not consumed");
				return;
			}
			room = AG_IN_CAP - c->in.len;
			if (room > 256 * 1024)
				room = 256 * 1024;
			p = sbx_buf_reserve(&c->in, room);
			if (!p) {
				ag_conn_fail(c, "internal", "out of memory");
				return;
			}
			n = recv(c->ev.fd, p, room, 0);
			if (n > 0)
				sbx_buf_commit(&c->in, (size_t)n);
		}
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			ag_conn_close(c);
			return;
		}
		if (n == 0) {
			c->rd_closed = 1;
			switch (c->state) {
			case AG_ST_ATTACH:
			case AG_ST_WAIT:
			case AG_ST_READ_FILE:
				/* half-close: keep streaming/waiting */
				if (ag.hangup_on_eof)
					ag_cmd_hangup(c);
				ag_conn_update(c);
				return;
			case AG_ST_CLOSING:
				if (c->out.len == 0) {
					ag_conn_close(c);
					return;
				}
				ag_conn_update(c);
				return;
			default:
				/* a peer that stops sending mid-operation gets an
				 * error frame in case it still reads; file uploads
				 * leave nothing behind */
				if (c->state == AG_ST_DETECT || c->state == AG_ST_HANDSHAKE ||
				    (c->state == AG_ST_REQUEST && c->in.len == 0)) {
					ag_conn_close(c);
					return;
				}
				ag_conn_fail(c, "bad_request", "connection closed before the operation completed");
				return;
			}
		}
		if (c->state == AG_ST_CLOSING)
			continue;
		ag_conn_process(c);
		if (c->dead || c->in_paused || c->state == AG_ST_FORWARD)
			return;
	}
}

void ag_conn_event(struct ag_conn *c, uint32_t events)
{
	if (c->state == AG_ST_FORWARD) {
		ag_fwd_event(c, 0, events);
		return;
	}
	if (c->dead)
		return;
	/* After a half-close, HUP means the peer is gone altogether (a
	 * waiting or attached client that vanished): nobody to send to. */
	if ((events & (EPOLLHUP | EPOLLERR)) && c->rd_closed) {
		ag_conn_close(c);
		return;
	}
	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
		conn_read(c);
		if (c->dead)
			return;
	}
	ag_conn_flush(c);
}

void ag_conn_sweep(int64_t now)
{
	struct ag_conn *c = ag.conns, *next;

	for (; c; c = next) {
		next = c->next;
		if (c->deadline && now >= c->deadline) {
			sbx_debug("conn fd %d: timed out in state %d", c->ev.fd, c->state);
			ag_conn_close(c);
		}
	}
}
