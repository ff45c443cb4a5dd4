/* The gateway's one upstream connection (gw_up.h): connect, adopt, the
 * write gate before the runner's reply, the reply parsed and checked
 * once, frames (or bytes) to the owner's callbacks, one close path.
 *
 * A runner on another host (GW_RUNNER_TLS) is a TCP socket, connected
 * without blocking and adopted raw like the UNIX ones; its TLS (gw_tls.c)
 * sits between lws and the frame path: RAW_RX bytes are fed to it and its
 * plaintext goes to rx(); the queue is encrypted one chunk at a time in
 * RAW_WRITEABLE, and nothing of it leaves before the handshake is done
 * and the runner's certificate checked. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "gw.h"
#include "gw_tls.h"
#include "gw_up_int.h"
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
	u->tls = NULL;
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

/* A TCP connect to a runner on another host, left in progress
 * (EINPROGRESS): RAW_WRITEABLE finishes it. -1 with errno set. */
static int tcp_connect(const struct gw_runner *rn)
{
	int fd = socket(rn->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1, idle = 60, intvl = 10, cnt = 3;

	if (fd < 0)
		return -1;
	/* small writes (a request, a keystroke) go at once; a runner host
	 * that vanished ends its long streams through keepalive, as the
	 * clients' connections do (gw_main.c) */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
	if (connect(fd, (const struct sockaddr *)&rn->sa, rn->salen) && errno != EINPROGRESS) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Connect to a runner; -1 with errno set. */
static int runner_connect(const struct gw_runner *rn)
{
	if (rn->kind == GW_RUNNER_TLS)
		return tcp_connect(rn);
	return sbx_unix_connect(rn->path, 0);
}

static void tls_drop(struct gw_up *u)
{
	if (u->tls) {
		lws_sul_cancel(&u->tls->sul);
		gw_tls_free(&u->tls->t);
		free(u->tls);
		u->tls = NULL;
	}
}

/* Our close_notify, when it can go at once (lws holds none of our
 * bytes); the connection is being closed either way. */
static void tls_bye(struct gw_up *u, struct lws *wsi)
{
	unsigned char buf[LWS_PRE + 128];
	size_t n;

	if (!u->tls || !u->tls->t.established || gw_tls_out_len(&u->tls->t) ||
	    lws_send_pipe_choked(wsi))
		return;
	gw_tls_shutdown(&u->tls->t);
	n = gw_tls_take_out(&u->tls->t, buf + LWS_PRE, sizeof buf - LWS_PRE);
	if (n)
		lws_write(wsi, buf + LWS_PRE, n, LWS_WRITE_RAW);
}

/* u's failure to reach its TLS runner (or a TLS error later): why, with
 * the runner's address, logged once here. */
static const char *tls_why(struct gw_up *u, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static const char *tls_why(struct gw_up *u, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	u->unreachable = !u->tls->got_plain;
	snprintf(u->why, sizeof u->why, "runner %.127s: %s", u->tls->addr, msg);
	/* the status probe's failures are logged as the runner's state
	 * changes (gw_runners.c), not once a second while it is down */
	if (!(u->flags & GW_UP_PROBE))
		sbx_warn("%s", u->why);
	return u->why;
}

int gw_up_unreachable(const struct gw_up *u)
{
	return u->unreachable;
}

int gw_up_connect_unanswered(const struct gw_up *u)
{
	struct pollfd p = { .events = POLLOUT };

	if (!u->tls || !u->tls->connecting || !u->wsi)
		return 0;
	/* writable: it completed (or failed) and lws has not seen it yet */
	p.fd = lws_get_socket_fd(u->wsi);
	return p.fd >= 0 && poll(&p, 1, 0) == 0;
}

int gw_up_peer_names(struct gw_up *u, const char *name)
{
	return u->tls && u->tls->t.established && gw_tls_peer_names(&u->tls->t, name);
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
		if (fd >= 0)
			close(fd);
		return GW_UP_ENOMEM;
	}
	u->phase = !direct && (next || (flags & GW_UP_REPLY)) ? GW_UP_REPLY : GW_UP_OPEN;
	if (fd < 0) {   /* a kept-alive connection, u's already (gw_up_keep.c) */
		u->rx_paused = 0;
		lws_callback_on_writable(u->wsi);
		return 0;
	}
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
	u->piece_left = 0;
	u->flags = flags;
	u->unreachable = 0;
	u->why[0] = '\0';
	u->rn = NULL;
	u->keep = u->nframes = u->uses = 0;
}

#define GW_UP_TLS_TICK_US (250 * 1000)

/* Until the handshake is done: the connect and handshake took too long,
 * or the runner was marked down meanwhile (its status probe found it
 * gone: a request need not wait out the connect deadline of a host that
 * vanished). Close; RAW_CLOSE says why. Checked every 250 ms. A request
 * the runner has (after the handshake) is never cut this way: a create
 * cut short would leave a sandbox nobody was told of. */
static void tls_deadline(lws_sorted_usec_list_t *sul)
{
	struct gw_up_tls *t = lws_container_of(sul, struct gw_up_tls, sul);
	struct gw_up *u = t->u;
	lws_usec_t used = lws_now_usecs() - t->t0;

	/* a kept connection's request: only until its reply, only its
	 * runner marked down (the runner has it; gw_up.h says which) */
	if (!u->wsi || (t->t.established && (!t->reused || t->got_plain)))
		return;
	t->timed_out = !t->t.established && used >= GW_UP_TLS_CONNECT_S * LWS_US_PER_SEC;
	t->runner_down = !(u->flags & GW_UP_PROBE) && u->rn->state == GW_RUNNER_DOWN &&
			 !strcmp(u->rn->addr, t->addr);
	if (t->timed_out || t->runner_down)
		lws_set_timeout(u->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
	else
		lws_sul_schedule(u->vh->ctx, 0, &t->sul, tls_deadline, GW_UP_TLS_TICK_US);
}

/* A TLS runner's session for the socket fd about to be adopted. */
static int tls_begin(struct gw_up *u, const struct gw_runner *rn)
{
	struct sbx_err err = { 0 };

	if (!u->vh->runner_tls) {   /* gw_main.c refuses such a configuration */
		errno = EPROTONOSUPPORT;
		return -1;
	}
	u->tls = calloc(1, sizeof *u->tls);
	if (!u->tls || gw_tls_start(&u->tls->t, u->vh->runner_tls, rn->name, &err)) {
		free(u->tls);
		u->tls = NULL;
		errno = ENOMEM;
		return -1;
	}
	u->tls->connecting = 1;
	u->tls->u = u;
	u->tls->t0 = lws_now_usecs();
	snprintf(u->tls->addr, sizeof u->tls->addr, "%s", rn->addr);
	return 0;
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
	u->rn = rn;
	if ((flags & GW_UP_PASS_FD) && rn->kind != GW_RUNNER_UNIX)
		flags &= ~GW_UP_PASS_FD;   /* only a runner on this host can pass one */
	u->flags = flags;
	if (!(flags & GW_UP_PROBE) && !gw_runner_usable(rn) && rn->state != GW_RUNNER_UNKNOWN)
		return fail_open(GW_UP_EDOWN, first, next);   /* 503 at once, no connect */
	u->keep = gw_up_keep_wanted(u, rn, first, next, flags);
	if (u->keep) {
		parent = NULL;   /* it may outlive its owner's client: the owner closes u */
		if (gw_up_keep_take(u, rn)) {
			int rc = open_fd(u, NULL, -1, 0, first, next, flags);
			if (rc)
				gw_up_close(u);
			else
				lws_sul_schedule(u->vh->ctx, 0, &u->tls->sul, tls_deadline,
						 GW_UP_TLS_TICK_US);
			return rc;
		}
	}
	u->uses = 1;
	fd = runner_connect(rn);
	if (fd < 0) {
		int e = errno;
		if (rn->kind == GW_RUNNER_TLS) {
			u->unreachable = 1;
			snprintf(u->why, sizeof u->why, "runner %.127s: %.159s", rn->addr, strerror(e));
			if (!(flags & GW_UP_PROBE))
				sbx_warn("%s", u->why);
		}
		gw_runner_failed(u->vh, rn, e, NULL);   /* down at once */
		errno = e;
		return fail_open(GW_UP_ECONNECT, first, next);
	}
	if (rn->kind == GW_RUNNER_TLS && tls_begin(u, rn)) {
		close(fd);
		return fail_open(GW_UP_ENOMEM, first, next);
	}
	int rc = open_fd(u, parent, fd, 0, first, next, flags);
	if (rc)
		tls_drop(u);
	else if (u->tls)
		lws_sul_schedule(u->vh->ctx, 0, &u->tls->sul, tls_deadline, GW_UP_TLS_TICK_US);
	return rc;
}

int gw_up_open(struct gw_up *u, struct lws *parent, const char *sid, cJSON *first,
	       cJSON *next, unsigned flags)
{
	struct gw_runner *rn = gw_runner_for_sid(u->vh, sid);
	int direct = 0, fd;

	if (rn && rn->state == GW_RUNNER_DOWN)   /* GW_UP_EDOWN, or a connect to try */
		return gw_up_open_runner(u, parent, rn, first, next, flags);
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
	u->piece_left = 0;
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
	/* plaintext TLS already holds comes from no new read: the next
	 * WRITEABLE hands it over */
	if (!pause && u->tls && gw_tls_has_input(&u->tls->t))
		lws_callback_on_writable(u->wsi);
}

size_t gw_up_queued(const struct gw_up *u)
{
	return u->q ? u->q->len : 0;
}

void gw_up_close(struct gw_up *u)
{
	if (u->wsi) {
		struct lws *w = u->wsi;
		tls_bye(u, w);
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
	tls_drop(u);
}

void gw_up_release(struct gw_up *u)
{
	gw_up_close(u);
	sbx_buf_free(&u->out);
	sbx_buf_free(&u->in);
}

/* Detach the connection (our close_notify first), tell the owner how it
 * ended, and have lws close it (-1). */
static int detach(struct gw_up *u, struct lws *wsi, int by_peer, int lost)
{
	if (u->wsi == wsi) {
		tls_bye(u, wsi);
		tls_drop(u);
		u->wsi = NULL;
		u->phase = GW_UP_DONE;
		lws_set_opaque_user_data(wsi, NULL);
		if (u->ops->closed)
			u->ops->closed(u, by_peer, lost);
	}
	return -1;
}

/* The connection ends from our side (a callback finished or failed). */
static int end(struct gw_up *u, struct lws *wsi)
{
	return detach(u, wsi, 0, 0);
}

/* The runner's reply, parsed and checked here for every owner. */
static int reply(struct gw_up *u, const struct sbx_frame *f, const char *why)
{
	struct sbx_err err = { 0 };
	cJSON *o = NULL;
	int fd = u->held_fd;

	u->held_fd = -1;   /* the callee's now */
	if (f && u->rn)
		u->rn->replied_ms = sbx_now_ms();   /* alive, however late its status */
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

/* The whole frames in p[0..n) to the owner; *used: the bytes they took
 * (all of them once a raw stream began behind the reply). 0, or the
 * callbacks' nonzero; -1 when a callback closed (or reopened) u: then
 * nothing of u may be touched. */
static int frames_at(struct lws *wsi, struct gw_up *u, const unsigned char *p, size_t n,
		     size_t *used)
{
	*used = 0;
	for (;;) {
		struct sbx_err err = { 0 };
		struct sbx_frame f;
		long k = sbx_frame_decode(p + *used, n - *used, 0, &f, &err);
		int rc;

		if (k < 0)
			return bad(u, err.msg);
		if (k == 0)
			return 0;
		int was_reply = u->phase == GW_UP_REPLY;
		u->nframes++;
		rc = was_reply ? reply(u, &f, NULL) : u->ops->frame(u, &f);
		if (u->wsi != wsi)
			return -1;   /* closed, or opened anew, by the callback */
		*used += (size_t)k;
		if (rc)
			return rc;
		if (!was_reply)
			continue;
		u->phase = GW_UP_OPEN;   /* what waited behind the gate goes out */
		lws_callback_on_writable(wsi);
		if (u->flags & GW_UP_RAW) {
			/* the stream's first bytes may have come behind the reply */
			rc = n > *used ? u->ops->bytes(u, p + *used, n - *used) : 0;
			*used = n;
			return rc;
		}
	}
}

/* The frames completed in u->in. */
static int frames(struct lws *wsi, struct gw_up *u)
{
	size_t used;
	int rc = frames_at(wsi, u, sbx_buf_head(&u->in), u->in.len, &used);

	if (u->wsi == wsi)
		sbx_buf_consume(&u->in, used);
	return u->wsi == wsi ? rc : -1;
}

/* Bytes still missing from the frame whose start u->in holds (its header
 * first); 0 when it is whole, or its header is wrong (frames() says so). */
static size_t frame_rest(const struct gw_up *u)
{
	struct sbx_err err = { 0 };
	struct sbx_frame f;
	const unsigned char *h = sbx_buf_head(&u->in);

	if (u->in.len < SBX_FRAME_HDR)
		return SBX_FRAME_HDR - u->in.len;
	if (sbx_frame_decode(h, u->in.len, 0, &f, &err) != 0)
		return 0;
	size_t whole = SBX_FRAME_HDR + ((size_t)h[0] << 24 | (size_t)h[1] << 16 |
					(size_t)h[2] << 8 | h[3]);
	return whole - u->in.len;
}

/* u->pieces: whether h[0..n) begins a stdout or stderr frame whose
 * header is whole (its length in *len), to be handed over in pieces. */
static int data_header(const struct gw_up *u, const unsigned char *h, size_t n, uint32_t *len)
{
	if (!u->pieces || u->phase != GW_UP_OPEN || (u->flags & GW_UP_RAW) || n < SBX_FRAME_HDR ||
	    (h[4] != SBX_FRAME_STDOUT && h[4] != SBX_FRAME_STDERR))
		return 0;
	*len = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
	return *len <= SBX_FRAME_MAX;   /* else frames() says what is wrong */
}

/* The next piece of the data frame in progress, from *p (advanced past
 * it): up to u->piece_left bytes, as a frame of its own. 0, or the
 * callback's nonzero; -1 when it closed u. */
static int piece(struct lws *wsi, struct gw_up *u, const unsigned char **p, size_t *n)
{
	size_t k = *n < u->piece_left ? *n : u->piece_left;
	struct sbx_frame f = { .type = u->piece_type, .payload = *p, .len = (uint32_t)k };
	int rc;

	if (!k)
		return 0;
	rc = u->ops->frame(u, &f);
	if (u->wsi != wsi)
		return -1;
	u->piece_left -= k;
	*p += k;
	*n -= k;
	return rc;
}

/* A data frame begins at h (its header whole, the frame not): its piece
 * there goes over now, the rest as it comes (piece()). */
static int begin_piece(struct lws *wsi, struct gw_up *u, const unsigned char *h, size_t n,
		       uint32_t flen)
{
	const unsigned char *p = h + SBX_FRAME_HDR;
	size_t k = n - SBX_FRAME_HDR;

	u->nframes++;
	u->piece_type = (enum sbx_frame_type)h[4];
	u->piece_left = flen;
	return piece(wsi, u, &p, &k);
}

/* Frames as read: the whole ones go to the owner from the bytes lws (or
 * TLS) read, and only a frame cut by the end of a read is kept in u->in,
 * completed from the next read with exactly its missing bytes. (Every
 * byte of a stream was copied into u->in, then compacted there: most of
 * the gateway's own copying, by its profile.) With u->pieces a cut
 * stdout or stderr frame is not kept at all: its bytes go over as they
 * come (a stream's frames are cut at nearly every read, as the agent's
 * frames and lws's reads are both about 64 KiB). */
static int rx_frames(struct lws *wsi, struct gw_up *u, const unsigned char *p, size_t len)
{
	size_t used, need;
	uint32_t flen;
	int rc;

	if (u->piece_left) {   /* u->in is empty meanwhile */
		rc = piece(wsi, u, &p, &len);
		if (rc || u->piece_left)
			return rc;
	}
	while (u->in.len) {   /* the frame held back first */
		if (frame_rest(u) && data_header(u, sbx_buf_head(&u->in), u->in.len, &flen)) {
			/* only its header was held */
			rc = begin_piece(wsi, u, sbx_buf_head(&u->in), u->in.len, flen);
			if (rc)
				return rc;
			sbx_buf_reset(&u->in);
			if ((rc = piece(wsi, u, &p, &len)) || u->piece_left)
				return rc;
			continue;
		}
		if ((need = frame_rest(u))) {
			if (!len)
				return 0;
			if (need > len)
				need = len;
			if (sbx_buf_append(&u->in, p, need))
				return bad(u, gw_up_too_much);
			p += need;
			len -= need;
			continue;
		}
		rc = frames(wsi, u);   /* it alone, or its header's error */
		if (u->wsi != wsi)
			return -1;
		if (rc) {   /* what came behind stays seen (a kept connection must have none) */
			if (len)
				sbx_buf_append(&u->in, p, len);
			return rc;
		}
		if (u->phase == GW_UP_OPEN && (u->flags & GW_UP_RAW))
			return len ? u->ops->bytes(u, p, len) : 0;
		if (u->in.len)   /* not reached: a whole frame is always taken */
			return bad(u, gw_up_too_much);
	}
	rc = frames_at(wsi, u, p, len, &used);
	if (u->wsi != wsi)
		return -1;
	if (!rc && used < len && data_header(u, p + used, len - used, &flen))
		return begin_piece(wsi, u, p + used, len - used, flen);
	if (used < len && sbx_buf_append(&u->in, p + used, len - used) && !rc)
		return bad(u, gw_up_too_much);
	return rc;
}

static int rx(struct lws *wsi, struct gw_up *u, const void *in, size_t len)
{
	if (u->phase == GW_UP_OPEN && (u->flags & GW_UP_RAW))
		return len ? u->ops->bytes(u, in, len) : 0;
	if (!u->dial)
		return rx_frames(wsi, u, in, len);
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

/* TLS: the plaintext the session holds, to rx() while the owner reads;
 * stops when a callback paused u (the rest waits in the session) or
 * closed it. 0, or rx()'s nonzero; -2 when the runner closed its TLS. */
static int tls_pump(struct lws *wsi, struct gw_up *u)
{
	unsigned char buf[16 * 1024];   /* one TLS record's plaintext */

	while (!u->rx_paused) {
		struct sbx_err err = { 0 };
		long n = gw_tls_read(&u->tls->t, buf, sizeof buf, &err);
		int rc;

		if (n == 0)
			return 0;
		if (n == -2)
			return -2;
		if (n < 0)
			return bad(u, tls_why(u, "%s", err.msg));
		u->tls->got_plain = 1;
		rc = rx(wsi, u, buf, (size_t)n);
		if (rc || u->wsi != wsi)
			return rc ? rc : -1;
	}
	return 0;
}

/* TLS: the runner's bytes. The handshake first (what it answers goes out
 * in WRITEABLE, the queue behind it once established), then plaintext. */
static int tls_rx(struct lws *wsi, struct gw_up *u, const void *in, size_t len)
{
	struct sbx_err err = { 0 };
	int rc;

	if (gw_tls_feed(&u->tls->t, in, len))
		return bad(u, tls_why(u, "out of memory"));
	if (!u->tls->t.established) {
		rc = gw_tls_handshake(&u->tls->t, &err);
		if (rc < 0)
			return bad(u, tls_why(u, "%s", err.msg));
		lws_callback_on_writable(wsi);
		if (!rc)
			return 0;
		lws_sul_cancel(&u->tls->sul);
		u->vh->m.runner_tls[u->tls->t.resumed]++;
	}
	return tls_pump(wsi, u);
}

/* The runner ended its TLS (close_notify): as a close by the peer. */
static int tls_peer_closed(struct gw_up *u, struct lws *wsi)
{
	return detach(u, wsi, 1, 1);
}

/* TLS: what the session has for the socket, one chunk. 1 when it wrote,
 * 0 when there was nothing, -1 when lws failed. */
static int tls_flush(struct lws *wsi, struct gw_up *u, unsigned char *buf)
{
	size_t n = gw_tls_take_out(&u->tls->t, buf + LWS_PRE, GW_UP_CHUNK_MAX);

	if (!n)
		return 0;
	if (lws_write(wsi, buf + LWS_PRE, n, LWS_WRITE_RAW) < (int)n)
		return -1;
	if (gw_tls_out_len(&u->tls->t))
		lws_callback_on_writable(wsi);
	return 1;
}

/* TLS WRITEABLE before the queue may flow: the connect's outcome, the
 * handshake's bytes, plaintext left behind by a pause. 1 when this
 * WRITEABLE is used up, 0 to go on to the queue, -1 to close. */
static int tls_writeable(struct lws *wsi, struct gw_up *u, unsigned char *buf)
{
	struct sbx_err err = { 0 };
	int rc;

	if (u->tls->connecting) {
		int e = 0;
		socklen_t el = sizeof e;
		if (getsockopt(lws_get_socket_fd(wsi), SOL_SOCKET, SO_ERROR, &e, &el))
			e = errno;
		if (e)
			return bad(u, tls_why(u, "%s", strerror(e))), -1;
		u->tls->connecting = 0;
		if (gw_tls_handshake(&u->tls->t, &err) < 0)   /* the ClientHello */
			return bad(u, tls_why(u, "%s", err.msg)), -1;
	}
	rc = tls_flush(wsi, u, buf);
	if (rc > 0 && u->tls->t.established)
		lws_callback_on_writable(wsi);   /* the queue's turn next */
	if (rc)
		return rc;
	if (!u->tls->t.established)
		return 1;   /* the runner's turn */
	if (!u->rx_paused && gw_tls_has_input(&u->tls->t)) {
		rc = tls_pump(wsi, u);
		if (rc == -2)
			tls_peer_closed(u, wsi);
		if (rc || u->wsi != wsi)
			return -1;
	}
	return 0;
}

/* Put n bytes of the queue on the wire: as they are, or through TLS. */
static int put(struct lws *wsi, struct gw_up *u, unsigned char *buf, size_t n)
{
	struct sbx_err err = { 0 };

	if (!u->tls) {
		memcpy(buf + LWS_PRE, sbx_buf_head(u->q), n);
		return lws_write(wsi, buf + LWS_PRE, n, LWS_WRITE_RAW) < (int)n ? -1 : 0;
	}
	if (gw_tls_write(&u->tls->t, sbx_buf_head(u->q), n, &err)) {
		bad(u, tls_why(u, "%s", err.msg));
		return -1;
	}
	return tls_flush(wsi, u, buf) < 0 ? -1 : 0;
}

static int writeable(struct lws *wsi, struct gw_up *u)
{
	unsigned char buf[LWS_PRE + GW_UP_CHUNK_MAX];
	size_t n;

	if (u->tls) {
		int rc = tls_writeable(wsi, u, buf);
		if (rc < 0)
			return end(u, wsi);
		if (rc)
			return 0;
	}
	n = u->q->len;

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
	if (put(wsi, u, buf, n))
		return u->tls ? end(u, wsi) : -1;
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

void gw_up_write_now(struct gw_up *u)
{
	unsigned char buf[LWS_PRE + GW_UP_CHUNK_MAX];
	size_t n;

	if (!u->wsi)
		return;
	n = u->q->len < u->chunk ? u->q->len : u->chunk;
	if (n > GW_UP_CHUNK_MAX)
		n = GW_UP_CHUNK_MAX;
	/* otherwise the WRITEABLE decides (TLS, the gate, a hold, bytes lws
	 * still holds: those must go first) */
	if (!n || u->tls || u->phase != GW_UP_OPEN || lws_partial_buffered(u->wsi) ||
	    (u->ops->may_send && !u->ops->may_send(u))) {
		lws_callback_on_writable(u->wsi);
		return;
	}
	/* a failed socket: its next WRITEABLE fails too, and lws closes it */
	if (put(u->wsi, u, buf, n)) {
		lws_callback_on_writable(u->wsi);
		return;
	}
	sbx_buf_consume(u->q, n);
	if (u->q->len || u->ops->drained)
		lws_callback_on_writable(u->wsi);
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

/* RAW_CLOSE of a TLS runner's connection before any of its plaintext
 * came: refused or reset during the connect, GW_UP_TLS_CONNECT_S over,
 * or closed by the runner during or right after the handshake (with TLS
 * 1.3 the runner checks our certificate after our side is done; its
 * alert may be lost to the reset of its close). The owner hears of it as
 * of a failure to reach the runner. */
static int tls_lost_early(struct gw_up *u, struct lws *wsi)
{
	int e = 0, in_reply = u->phase == GW_UP_REPLY;
	socklen_t el = sizeof e;
	const char *why;

	int fd = lws_get_socket_fd(wsi);
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	long long ms = (long long)((lws_now_usecs() - u->tls->t0) / 1000);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el))
		e = 0;
	/* a socket whose connect failed is hung up; one still trying is not
	 * (then a deadline, ours or the owner's, closed it) */
	int hung_up = poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
	if (e)
		why = tls_why(u, "%s", strerror(e));
	else if (u->tls->runner_down)
		why = tls_why(u, "marked down while this request waited (%.100s)", u->rn->why);
	else if (u->tls->timed_out)
		why = tls_why(u, "no %s within %d s", u->tls->connecting ? "connection" :
			      "TLS handshake", GW_UP_TLS_CONNECT_S);
	else if (u->tls->connecting && hung_up)   /* lws took the socket's error first */
		why = tls_why(u, "connection refused or reset");
	else if (u->tls->connecting)
		why = tls_why(u, "no connection after %lld ms", ms);
	else if (u->tls->reused)
		why = tls_why(u, "closed the kept-alive connection before answering (after %lld ms)",
			      ms);
	else if (!peer_lost(wsi))
		why = tls_why(u, "no TLS %s after %lld ms", u->tls->t.established ? "answer" :
			      "handshake", ms);
	else
		why = tls_why(u, "closed the connection before answering (%s)",
			      u->tls->t.established ? "did it accept our certificate?" :
			      "is it a runner's TLS port?");
	/* A refused, reset or unanswered connect: the runner is down for
	 * every request now, not only after its next status (the probe's
	 * own failures are gw_probe.c's). A hang-up without the socket's
	 * error may also be lws closing it for an owner's deadline: then
	 * the runner is asked at once instead. */
	if (u->tls->connecting && !u->tls->runner_down && !(u->flags & GW_UP_PROBE) &&
	    !strcmp(u->rn->addr, u->tls->addr)) {
		if (e || u->tls->timed_out)
			gw_runner_failed(u->vh, u->rn, e ? e : ETIMEDOUT, why);
		else if (hung_up)
			gw_probe_soon(u->vh, u->rn);
	}
	tls_drop(u);
	u->wsi = NULL;
	u->phase = GW_UP_DONE;
	lws_set_opaque_user_data(wsi, NULL);
	if (in_reply)
		u->ops->reply(u, NULL, 0, why, -1);
	else if (u->ops->fail)
		u->ops->fail(u, why);
	if (u->ops->closed)
		u->ops->closed(u, 0, 0);
	return 0;
}

static int read_done(struct gw_up *u, struct lws *wsi)
{
	if (u->wsi == wsi && u->ops->read_done)
		u->ops->read_done(u);
	return 0;
}

int gw_up_callback(struct lws *wsi, enum lws_callback_reasons reason,
		   void *user, void *in, size_t len)
{
	struct gw_up *u = lws_get_opaque_user_data(wsi);
	int rc;

	(void)user;
	if (u && u->wsi != wsi)
		u = NULL;
	switch (reason) {
	case LWS_CALLBACK_RAW_RX:
		if (!u)
			return -1;
		if (u->tls) {
			rc = tls_rx(wsi, u, in, len);
			if (rc == 1 && gw_up_keep_park(u, wsi))
				return 0;   /* kept for the next request */
			return rc == -2 ? tls_peer_closed(u, wsi) : rc ? end(u, wsi) : read_done(u, wsi);
		}
		return rx(wsi, u, in, len) ? end(u, wsi) : read_done(u, wsi);
	case LWS_CALLBACK_RAW_RX_FILE:
		if (!u)
			return -1;
		switch (rx_fd(wsi, u)) {
		case 0:
			return read_done(u, wsi);
		case -2:
			return -1;   /* RAW_CLOSE_FILE follows */
		default:
			return end(u, wsi);
		}
	case LWS_CALLBACK_RAW_WRITEABLE:
		if (!u)
			return 0;
		if ((rc = writeable(wsi, u)))
			return rc;
		return read_done(u, wsi);   /* TLS plaintext a pause left may have gone over */
	case LWS_CALLBACK_RAW_CLOSE:
	case LWS_CALLBACK_RAW_CLOSE_FILE:
		if (u && u->tls && !u->tls->got_plain)
			return tls_lost_early(u, wsi);
		if (u) {
			int lost = reason == LWS_CALLBACK_RAW_CLOSE_FILE || peer_lost(wsi);
			tls_drop(u);
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
