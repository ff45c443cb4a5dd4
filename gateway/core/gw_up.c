/* The gateway's one upstream connection (gw_up.h): connect, adopt, the
 * write gate before the runner's reply, the reply parsed and checked
 * once, frames (or bytes) to the owner's callbacks, one close path. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "gw.h"
#include "sbx_dial.h"
#include "sbx_log.h"
#include "sbx_net.h"

/* a whole frame, and what may come behind it in the same reads */
#define GW_UP_IN_CAP (SBX_FRAME_MAX + SBX_FRAME_HDR + 64 * 1024)

const char gw_up_too_much[] = "sent too much";
const char gw_up_dial_refused[] = "the sandbox's agent refused the handshake";

void gw_up_init(struct gw_up *u, struct gw_vh *vh, const struct gw_up_ops *ops, void *owner)
{
	memset(u, 0, sizeof *u);
	u->vh = vh;
	u->ops = ops;
	u->owner = owner;
	u->q = &u->out;
	u->chunk = GW_CHUNK;
	u->held_fd = -1;
	sbx_buf_init(&u->out, 0);
	sbx_buf_init(&u->in, GW_UP_IN_CAP);
}

static int queue_json(struct sbx_buf *b, const cJSON *o)
{
	char *s = sbx_json_print(o);
	int rc = s ? sbx_frame_append(b, SBX_FRAME_JSON, s, strlen(s)) : -1;
	cJSON_free(s);
	return rc;
}

cJSON *gw_up_connect_req(const char *sid, int port, int pass_fd)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "op", "connect");
	cJSON_AddStringToObject(c, "id", sid);
	cJSON_AddNumberToObject(c, "port", port);
	if (pass_fd)
		cJSON_AddTrueToObject(c, "fd");
	return c;
}

static int adopt(struct gw_up *u, struct lws *parent, int fd, int raw_file)
{
	lws_adopt_desc_t ad = {
		.vh = u->vh->vhost, .type = LWS_ADOPT_SOCKET,
		.vh_prot_name = "gw-up", .parent = parent, .opaque = u,
	};
	ad.fd.sockfd = fd;
	/* Adoption failures in lws 4.1.6 (lib/core-net/adopt.c): a socket is
	 * closed by lws, a raw file is not. A raw file that failed after lws
	 * took a wsi for it may stay on its parent's child list, and lws
	 * closes the fd number when the parent closes, by then perhaps
	 * someone else's. So a raw file gets no parent (its owner closes it
	 * with itself) and a failed one is closed here. */
	if (raw_file) {
		ad.type = LWS_ADOPT_RAW_FILE_DESC;
		ad.fd.filefd = fd;
		ad.parent = NULL;
	}
	u->wsi = lws_adopt_descriptor_vhost_via_info(&ad);
	if (!u->wsi) {
		if (raw_file)
			close(fd);
		u->phase = GW_UP_DONE;
		return GW_UP_EADOPT;
	}
	lws_set_opaque_user_data(u->wsi, u);
	u->rx_paused = 0;
	lws_callback_on_writable(u->wsi);
	return 0;
}

/* Connect to a runner's control socket; -1 with errno set. */
static int runner_connect(const struct gw_runner *rn)
{
	if (rn->kind != GW_RUNNER_UNIX) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	return sbx_unix_connect(rn->path, 0);
}

static int open_fd(struct gw_up *u, struct lws *parent, int fd, int direct, cJSON *first,
		   cJSON *next, unsigned flags)
{
	u->direct = direct;
	u->dial = direct;   /* gw_agent_connect wrote the dial's CONNECT 1024 */
	/* the runner's request goes only to the runner; what follows waits
	 * behind the gate until it said ok */
	int oom = !direct && first && queue_json(u->q, first);
	u->gate = u->q->len;
	oom = oom || (next && queue_json(u->q, next));
	cJSON_Delete(first);
	cJSON_Delete(next);
	if (oom) {
		close(fd);
		return GW_UP_ENOMEM;
	}
	u->phase = !direct && (next || (flags & GW_UP_REPLY)) ? GW_UP_REPLY : GW_UP_OPEN;
	if (flags & GW_UP_PASS_FD) {
		/* read with recvmsg (lws's own recv would drop the descriptor),
		 * so adopted as a raw file; the request is the first write on a
		 * fresh socket: it fits */
		if (send(fd, sbx_buf_head(u->q), u->q->len, MSG_DONTWAIT | MSG_NOSIGNAL) !=
		    (ssize_t)u->q->len) {
			close(fd);
			return GW_UP_ESEND;
		}
		sbx_buf_reset(u->q);
		u->gate = 0;
	}
	return adopt(u, parent, fd, (flags & GW_UP_PASS_FD) != 0);
}

static void start(struct gw_up *u, unsigned flags)
{
	gw_up_close(u);   /* a connection before this one (the proxy's get) */
	sbx_buf_reset(u->q);
	sbx_buf_reset(&u->in);
	u->flags = flags;
}

static int fail_open(int rc, cJSON *first, cJSON *next)
{
	int e = errno;
	cJSON_Delete(first);
	cJSON_Delete(next);
	errno = e;
	return rc;
}

int gw_up_open_runner(struct gw_up *u, struct lws *parent, struct gw_runner *rn, cJSON *first,
		      cJSON *next, unsigned flags)
{
	int fd;

	start(u, flags);
	if (!rn)
		return fail_open(GW_UP_ENORUNNER, first, next);
	if ((flags & GW_UP_PASS_FD) && rn->kind != GW_RUNNER_UNIX)
		flags &= ~GW_UP_PASS_FD;   /* only a runner on this host can pass one */
	u->flags = flags;
	if (!(flags & GW_UP_PROBE) && (rn->state == GW_RUNNER_DOWN || rn->state == GW_RUNNER_REFUSED))
		return fail_open(GW_UP_EDOWN, first, next);   /* 503 at once, no connect */
	fd = runner_connect(rn);
	if (fd < 0) {
		int e = errno;
		gw_runner_failed(u->vh, rn, e, NULL);   /* down at once */
		errno = e;
		return fail_open(GW_UP_ECONNECT, first, next);
	}
	return open_fd(u, parent, fd, 0, first, next, flags);
}

int gw_up_open(struct gw_up *u, struct lws *parent, const char *sid, cJSON *first,
	       cJSON *next, unsigned flags)
{
	struct gw_runner *rn = gw_runner_for_sid(u->vh, sid);
	int direct = 0, fd;

	if (rn && rn->state == GW_RUNNER_DOWN)
		return gw_up_open_runner(u, parent, rn, first, next, flags);   /* GW_UP_EDOWN */
	if (rn && rn->kind == GW_RUNNER_UNIX) {
		start(u, flags);
		fd = gw_agent_connect(u->vh, sid, &direct);
		if (fd >= 0)
			return open_fd(u, parent, fd, 1, first, next, flags);
	}
	return gw_up_open_runner(u, parent, rn, first, next, flags);
}

int gw_up_adopt(struct gw_up *u, struct lws *parent, int fd, unsigned flags)
{
	gw_up_close(u);
	sbx_buf_reset(&u->in);
	u->flags = flags | GW_UP_RAW;
	u->direct = 1;
	u->dial = 0;
	u->phase = GW_UP_OPEN;
	return adopt(u, parent, fd, 0);
}

int gw_up_send(struct gw_up *u, enum sbx_frame_type t, const void *p, size_t n)
{
	while (n) {   /* split into frames no larger than the frame max */
		size_t k = n < 65536 ? n : 65536;
		if (sbx_frame_append(u->q, t, p, k))
			return -1;
		p = (const char *)p + k;
		n -= k;
	}
	if (t == SBX_FRAME_EOF && sbx_frame_append(u->q, t, NULL, 0))
		return -1;
	if (u->phase == GW_UP_OPEN)
		gw_up_want_write(u);
	return 0;
}

void gw_up_want_write(struct gw_up *u)
{
	if (u->wsi)
		lws_callback_on_writable(u->wsi);
}

void gw_up_pause(struct gw_up *u, int pause)
{
	if (!u->wsi || u->rx_paused == pause)
		return;
	u->rx_paused = pause;
	lws_rx_flow_control(u->wsi, (pause ? 0 : 1) | LWS_RXFLOW_REASON_FLAG_PROCESS_NOW);
}

size_t gw_up_queued(const struct gw_up *u)
{
	return u->q ? u->q->len : 0;
}

void gw_up_close(struct gw_up *u)
{
	if (u->wsi) {
		struct lws *w = u->wsi;
		u->wsi = NULL;
		lws_set_opaque_user_data(w, NULL);
		lws_set_timeout(w, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
	}
	if (u->q && u->held_fd >= 0) {
		close(u->held_fd);
		u->held_fd = -1;
	}
	if (u->phase != GW_UP_NONE)
		u->phase = GW_UP_DONE;
}

void gw_up_release(struct gw_up *u)
{
	gw_up_close(u);
	sbx_buf_free(&u->out);
	sbx_buf_free(&u->in);
}

/* The connection ends from our side (a callback finished or failed):
 * detach it, tell the owner, and have lws close it. */
static int end(struct gw_up *u, struct lws *wsi)
{
	if (u->wsi == wsi) {
		u->wsi = NULL;
		u->phase = GW_UP_DONE;
		lws_set_opaque_user_data(wsi, NULL);
		if (u->ops->closed)
			u->ops->closed(u, 0, 0);
	}
	return -1;
}

/* The runner's reply, parsed and checked here for every owner. */
static int reply(struct gw_up *u, const struct sbx_frame *f, const char *why)
{
	struct sbx_err err = { 0 };
	cJSON *o = NULL;
	int fd = u->held_fd;

	u->held_fd = -1;   /* the callee's now */
	if (f && f->type != SBX_FRAME_JSON)
		why = "a reply that is not JSON";
	else if (f && !(o = sbx_json_parse_object(f->payload, f->len, &err)))
		why = err.msg;
	int rc = u->ops->reply(u, o, o && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "ok")),
			       why, fd);
	cJSON_Delete(o);
	return rc;
}

/* The peer's bytes are no frames (or too many). */
static int bad(struct gw_up *u, const char *why)
{
	if (u->phase == GW_UP_REPLY) {
		reply(u, NULL, why);
		return -1;
	}
	if (u->ops->fail)
		u->ops->fail(u, why);
	return -1;
}

static int frames(struct lws *wsi, struct gw_up *u)
{
	for (;;) {
		struct sbx_err err = { 0 };
		struct sbx_frame f;
		long n = sbx_frame_decode(sbx_buf_head(&u->in), u->in.len, 0, &f, &err);
		int rc;

		if (n < 0)
			return bad(u, err.msg);
		if (n == 0)
			return 0;
		int was_reply = u->phase == GW_UP_REPLY;
		rc = was_reply ? reply(u, &f, NULL) : u->ops->frame(u, &f);
		if (u->wsi != wsi)
			return -1;   /* closed, or opened anew, by the callback */
		sbx_buf_consume(&u->in, (size_t)n);
		if (rc)
			return rc;
		if (!was_reply)
			continue;
		u->phase = GW_UP_OPEN;   /* what waited behind the gate goes out */
		lws_callback_on_writable(wsi);
		if (u->flags & GW_UP_RAW) {
			/* the stream's first bytes may have come behind the reply */
			rc = u->in.len ? u->ops->bytes(u, sbx_buf_head(&u->in), u->in.len) : 0;
			if (u->wsi == wsi)
				sbx_buf_reset(&u->in);
			return rc;
		}
	}
}

static int rx(struct lws *wsi, struct gw_up *u, const void *in, size_t len)
{
	if (u->phase == GW_UP_OPEN && (u->flags & GW_UP_RAW))
		return len ? u->ops->bytes(u, in, len) : 0;
	if (sbx_buf_append(&u->in, in, len))
		return bad(u, gw_up_too_much);
	if (u->dial) {   /* the dial step: the agent's answer to CONNECT */
		long k = sbx_dial_parse_ok(sbx_buf_head(&u->in), u->in.len, SBX_AGENT_PORT);
		if (k <= 0)
			return k < 0 ? bad(u, gw_up_dial_refused) : 0;
		sbx_buf_consume(&u->in, (size_t)k);
		u->dial = 0;
	}
	return frames(wsi, u);
}

/* GW_UP_PASS_FD: the reply and the descriptor that may come with it. */
static int rx_fd(struct lws *wsi, struct gw_up *u)
{
	unsigned char b[1024];
	int fd;

	/* never more than one is sent: lib closes any other */
	ssize_t n = sbx_recv_fd(lws_get_socket_fd(wsi), b, sizeof b, &fd, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (fd >= 0 && u->held_fd < 0)
		u->held_fd = fd;
	else if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -2;   /* the runner closed: the close path says so */
	return rx(wsi, u, b, (size_t)n);
}

static int writeable(struct lws *wsi, struct gw_up *u)
{
	unsigned char buf[LWS_PRE + GW_UP_CHUNK_MAX];
	size_t n = u->q->len;

	if (u->phase == GW_UP_REPLY && n > u->gate)
		n = u->gate;
	if (u->phase == GW_UP_OPEN && u->ops->may_send && !u->ops->may_send(u))
		n = 0;
	if (!n) {
		if (u->phase == GW_UP_OPEN && u->ops->drained && u->ops->drained(u))
			return end(u, wsi);
		return 0;
	}
	if (n > u->chunk)
		n = u->chunk;
	if (n > GW_UP_CHUNK_MAX)
		n = GW_UP_CHUNK_MAX;
	memcpy(buf + LWS_PRE, sbx_buf_head(u->q), n);
	if (lws_write(wsi, buf + LWS_PRE, n, LWS_WRITE_RAW) < (int)n)
		return -1;
	sbx_buf_consume(u->q, n);
	if (u->phase == GW_UP_REPLY)
		u->gate -= n;
	/* more to send, or (drained) the owner wants to hear of the end */
	if (u->q->len ? u->phase != GW_UP_REPLY || u->gate : u->ops->drained != NULL)
		lws_callback_on_writable(wsi);
	if (u->ops->sent)
		u->ops->sent(u);
	return 0;
}

/* Why a connection we did not close ended: 1 when the peer went away
 * (EOF or an error on the socket), 0 when lws closes it with its parent. */
static int peer_lost(struct lws *wsi)
{
	char c;
	int fd = lws_get_socket_fd(wsi);
	ssize_t n = fd >= 0 ? recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) : 0;
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

int gw_up_callback(struct lws *wsi, enum lws_callback_reasons reason,
		   void *user, void *in, size_t len)
{
	struct gw_up *u = lws_get_opaque_user_data(wsi);
	(void)user;
	if (u && u->wsi != wsi)
		u = NULL;
	switch (reason) {
	case LWS_CALLBACK_RAW_RX:
		if (!u)
			return -1;
		return rx(wsi, u, in, len) ? end(u, wsi) : 0;
	case LWS_CALLBACK_RAW_RX_FILE:
		if (!u)
			return -1;
		switch (rx_fd(wsi, u)) {
		case 0:
			return 0;
		case -2:
			return -1;   /* RAW_CLOSE_FILE follows */
		default:
			return end(u, wsi);
		}
	case LWS_CALLBACK_RAW_WRITEABLE:
		return u ? writeable(wsi, u) : 0;
	case LWS_CALLBACK_RAW_CLOSE:
	case LWS_CALLBACK_RAW_CLOSE_FILE:
		if (u) {
			int lost = reason == LWS_CALLBACK_RAW_CLOSE_FILE || peer_lost(wsi);
			u->wsi = NULL;
			u->phase = GW_UP_DONE;
			lws_set_opaque_user_data(wsi, NULL);
			if (u->held_fd >= 0) {
				close(u->held_fd);
				u->held_fd = -1;
			}
			if (u->ops->closed)
				u->ops->closed(u, 1, lost);
		}
		return 0;
	default:
		return 0;
	}
}
