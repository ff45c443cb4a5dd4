/* The preview proxy's upstream, c->up (a gw_up, a child of the client:
 * closing the client closes it, LIBWEBSOCKETS.md §2). First the runner's
 * `get`, to learn whether the sandbox runs, declared the port and wants
 * its preview token (no ownership check: previews are public unless
 * private). Then `connect` with "fd":true: a runner on this host whose
 * driver can do it passes the guest's TCP socket itself (SCM_RIGHTS), so
 * the runner's splice and the agent's forward leave the data path, and
 * that socket becomes c->up. Otherwise the plain `connect`, after whose ok
 * reply the runner socket is a byte stream to 127.0.0.1:<port> in the
 * sandbox. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "gw_proxy_up.h"
#include "gw_proxy_auth.h"
#include "gw_plimit.h"
#include "../core/gw_fdguard.h"
#include "sbx_log.h"

/* The connect that may resume it was answered (or never reached the
 * runner): lost, it ended without an answer (gw_owner_resume_lost). */
static void resume_settled(struct gw_pconn *c, int lost)
{
	if (c->resume_held)
		(lost ? gw_owner_resume_lost : gw_owner_resume_release)(c->f->vh, c->sid);
	c->resume_held = 0;
}

void gw_proxy_up_close(struct gw_pconn *c)
{
	gw_up_close(&c->up);
	c->up_phase = GW_PU_GONE;
	gw_owner_wait_cancel(&c->owner_wait);
	resume_settled(c, 1);
}

static int open_runner(struct gw_pconn *c, enum gw_pup phase)
{
	cJSON *req;
	unsigned flags = GW_UP_REPLY;
	struct gw_runner *rn = gw_runner_for_sid(c->f->vh, c->sid);

	/* a runner on another host passes no socket: it relays the bytes */
	if (phase == GW_PU_FDWAIT && rn && rn->kind != GW_RUNNER_UNIX)
		phase = GW_PU_CONNECT;
	if (phase == GW_PU_GET) {
		req = cJSON_CreateObject();
		cJSON_AddStringToObject(req, "op", "get");
		cJSON_AddStringToObject(req, "id", c->sid);
	} else {
		req = gw_up_connect_req(c->sid, c->port, phase == GW_PU_FDWAIT);
		flags |= phase == GW_PU_FDWAIT ? GW_UP_PASS_FD : GW_UP_RAW;
		resume_settled(c, 0);
		if (c->resume)   /* within its owner key's sandbox limit, counted as a create */
			c->resume_held = gw_owner_resume_req(c->f->vh, req, c->sid,
							     gw_owner_get(c->f->vh, c->sid));
	}
	c->up_phase = phase;
	char msg[200];
	int status = gw_runner_route_error(c->f->vh, c->sid, &rn, msg, sizeof msg);

	if (status) {
		cJSON_Delete(req);
		resume_settled(c, 0);   /* nothing reached the runner */
		return gw_proxy_fail(c, status, status == 404 ? "no such sandbox" : msg), -1;
	}
	/* rn is usable: neither GW_UP_ENORUNNER nor GW_UP_EDOWN comes back */
	int rc = gw_up_open_runner(&c->up, c->wsi, rn, req, NULL, flags);

	if (rc)
		resume_settled(c, 0);   /* nothing reached the runner */
	switch (rc) {
	case 0:
		return 0;
	case GW_UP_ECONNECT:
		if (gw_fd_exhausted_errno(errno)) {
			/* counted and logged once a second, not once per connection */
			gw_fd_exhausted(GW_FDX_RUNNER_SOCKET, errno);
			return gw_plimit_refuse(c, "no_capacity", GW_PLIMIT_BUSY_MSG), -1;
		}
		if (errno == ENAMETOOLONG)
			return gw_proxy_fail(c, 502, "runner socket path too long"), -1;
		sbx_warn("runner %s: %s", rn ? rn->addr : "?", strerror(errno));
		c->f->vh->m.upstream_errors++;
		return gw_proxy_fail(c, 503, "the runner is unavailable"), -1;
	case GW_UP_EADOPT:
		gw_fd_exhausted(GW_FDX_ADOPT, ENOMEM);
		return gw_plimit_refuse(c, "no_capacity", GW_PLIMIT_BUSY_MSG), -1;
	case GW_UP_ESEND:
		return gw_proxy_fail(c, 502, "cannot write to the runner"), -1;
	default:
		return gw_proxy_fail(c, 500, "out of memory"), -1;
	}
}

void gw_proxy_up_route(struct gw_pconn *c)
{
	open_runner(c, GW_PU_GET);
}

static int port_declared(const cJSON *s, int port)
{
	const cJSON *p;
	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(s, "ports"))
		if (cJSON_IsNumber(p) && p->valueint == port)
			return 1;
	return 0;
}

static void not_listening(struct gw_pconn *c)
{
	char msg[160];
	snprintf(msg, sizeof msg, "Nothing is listening on port %d in this sandbox yet. "
		 "If a server is starting, reload in a moment.", c->port);
	gw_proxy_fail(c, 502, msg);
}

/* A refusal, or the get reply's verdict: -1 after failing the client, 1
 * when the get passed, 0 when a connect may go on. */
static int check_reply(struct gw_pconn *c, const cJSON *o, int ok)
{
	char msg[160];
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "error");
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(e, "code");
	const char *cs = cJSON_IsString(code) ? code->valuestring : "";
	if (!ok) {
		if (!strcmp(cs, "not_found"))
			gw_proxy_fail(c, 404, "There is no such sandbox.");
		else if (!strcmp(cs, "too_many_connections"))
			gw_plimit_refuse(c, cs, "This sandbox has as many connections through the "
					 "runner as it may; try again when some have closed.");
		else if (c->up_phase != GW_PU_GET && !strcmp(cs, "conflict"))
			not_listening(c);
		else if (!strcmp(cs, "limit_reached"))
			gw_proxy_fail(c, 429, "This sandbox is kept stopped, and resuming it would pass "
				      "its owner's sandbox limit.");
		else
			gw_proxy_fail(c, 502, "The runner refused the connection.");
		return -1;
	}
	if (c->up_phase != GW_PU_GET) {
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "resumed")))
			gw_owner_set_live(c->f->vh, c->sid, 1);   /* counted as any resume */
		return 0;
	}
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "sandbox");
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(s, "status");
	/* a kept persistent sandbox (stopped with its files, or paused) comes
	 * back for a preview as for a command: the connect resumes it */
	c->resume = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "resumable")) &&
		    cJSON_IsString(st) && (!strcmp(st->valuestring, "stopped") ||
					   !strcmp(st->valuestring, "paused"));
	if (!c->resume && cJSON_IsString(st) && !strcmp(st->valuestring, "paused")) {
		gw_proxy_fail(c, 409, "This sandbox is paused; resume it to reach its previews.");
		return -1;
	}
	if (!c->resume && (!cJSON_IsString(st) || strcmp(st->valuestring, "running"))) {
		gw_proxy_fail(c, 404, "This sandbox is not running.");
		return -1;
	}
	if (!port_declared(s, c->port)) {
		snprintf(msg, sizeof msg, "Port %d is not one this sandbox declared.", c->port);
		gw_proxy_fail(c, 403, msg);
		return -1;
	}
	/* the runner keeps the flag with the owner tag; a reply without it
	 * cannot say the preview is public: fail closed */
	const cJSON *pa = cJSON_GetObjectItemCaseSensitive(s, "preview_auth");
	if (!cJSON_IsBool(pa)) {
		gw_proxy_fail(c, 503, "Cannot tell whether this preview is private.");
		return -1;
	}
	c->auth = cJSON_IsTrue(pa);
	return gw_proxy_auth_gate(c) ? -1 : 1;
}

/* The guest stream is up (c->up): the held first head goes out and the
 * client is read again. */
static int stream_started(struct gw_pconn *c)
{
	c->up_phase = GW_PU_STREAM;
	if (sbx_buf_append(&c->to_up, sbx_buf_head(&c->head), c->head.len))
		return gw_proxy_fail(c, 500, "out of memory"), -1;
	sbx_buf_free(&c->head);
	if (!c->hold)
		c->sent_reqs++;
	c->state = c->pending_state;
	gw_proxy_process(c);
	if (c->to_up.len && !c->hold)
		gw_up_write_now(&c->up);
	return 0;
}

/* The runner's non-blocking loopback connect has almost always finished
 * by now: a refusal means nothing listens (the page users see while their
 * server boots). A connect still in progress is used as it is. */
static int refused(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	int e = 0;
	socklen_t el = sizeof e;
	if (poll(&p, 1, 0) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
		return 0;
	return e != 0;
}

/* The reply to connect-with-fd: the guest socket becomes the upstream. */
static int guest_socket(struct gw_pconn *c, int fd)
{
	if (fd < 0) {
		/* a runner (or driver) that cannot pass sockets: use its stream */
		c->via_stream = 1;
		open_runner(c, GW_PU_CONNECT);
		return 1;
	}
	if (refused(fd)) {
		close(fd);
		not_listening(c);
		return -1;
	}
	int one = 1;   /* as for clients: small writes go at once */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (gw_up_adopt(&c->up, c->wsi, fd, 0)) {   /* lws closed fd */
		gw_proxy_fail(c, 502, "cannot adopt the guest socket");
		return -1;
	}
	stream_started(c);
	return 1;
}

static void connect_next(struct gw_pconn *c)
{
	open_runner(c, c->via_stream || c->f->preview_stream ? GW_PU_CONNECT : GW_PU_FDWAIT);
}

static void limit_refreshed(struct gw_owner_wait *w)
{
	struct gw_pconn *c = lws_container_of(w, struct gw_pconn, owner_wait);

	connect_next(c);
}

static int up_reply(struct gw_up *u, const cJSON *o, int ok, const char *why, int fd)
{
	struct gw_pconn *c = u->owner;
	int rc;

	if (o || gw_up_unreachable(u))   /* check_reply marks a resumed one live in this turn */
		resume_settled(c, 0);
	rc = o ? check_reply(c, o, ok) : -1;

	if (!o && gw_up_unreachable(u))
		gw_proxy_fail(c, 503, "the runner is unavailable");
	else if (!o)
		gw_proxy_fail(c, 502, why == gw_up_too_much ? "The runner sent too much." :
			      "The runner sent a bad reply.");
	if (rc < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (rc > 0 && c->resume && !c->refreshed &&
	    !gw_owner_resume_room(c->f->vh, c->sid, gw_owner_get(c->f->vh, c->sid))) {
		/* at the limit by the table: some may have ended unseen, so the
		 * runners are asked first, as a create and a /v1 resume do */
		c->refreshed = 1;
		gw_owner_refresh(c->f->vh, &c->owner_wait, limit_refreshed);
		return 1;
	}
	if (rc > 0)   /* get done: this socket is finished, connect next */
		return connect_next(c), 1;
	if (c->up_phase == GW_PU_FDWAIT)
		return guest_socket(c, fd);
	return stream_started(c);
}

static int up_bytes(struct gw_up *u, const void *in, size_t len)
{
	struct gw_pconn *c = u->owner;
	if (gw_proxy_guest_bytes(c, in, len))
		return -1;
	c->up_rx += len;
	if (c->draining)
		gw_proxy_deadline(c, c->f->head_timeout_s);
	else if (!c->head_started)
		gw_proxy_idle(c);
	gw_proxy_guest_rx(c, in, len);
	gw_proxy_client_flush(c);
	if (c->to_cl.len >= GW_PROXY_HIGH)
		gw_up_pause(u, 1);
	return 0;
}

static int up_may_send(struct gw_up *u)
{
	return !((struct gw_pconn *)u->owner)->hold;
}

static void up_sent(struct gw_up *u)
{
	struct gw_pconn *c = u->owner;
	if (c->to_up.len < GW_PROXY_LOW && c->cl_paused && c->up_phase == GW_PU_STREAM)
		gw_proxy_process(c);
}

static void up_closed(struct gw_up *u, int by_peer, int lost)
{
	struct gw_pconn *c = u->owner;
	enum gw_pup was = c->up_phase;
	(void)lost;
	c->up_phase = GW_PU_GONE;
	if (!by_peer || (c->state == GW_P_ERROR && !c->draining))
		return;
	if (was != GW_PU_STREAM) {
		c->f->vh->m.upstream_errors++;
		gw_proxy_fail(c, 502, "The runner closed the connection.");
	} else if (!c->up_rx && !c->draining) {
		gw_proxy_fail(c, 502, "The server closed the connection without answering.");
	} else {
		/* the guest ended the connection: pass that on once its bytes are out */
		c->close_after = 1;
		gw_proxy_pause_client(c, 1);
		lws_callback_on_writable(c->wsi);
	}
}

static const struct gw_up_ops proxy_up_ops = {
	.reply = up_reply, .bytes = up_bytes, .may_send = up_may_send,
	.sent = up_sent, .closed = up_closed,
};

void gw_proxy_up_init(struct gw_pconn *c)
{
	gw_up_init(&c->up, c->f->vh, &proxy_up_ops, c);
	c->up.q = &c->to_up;
	c->up.chunk = GW_PROXY_CHUNK;
}
