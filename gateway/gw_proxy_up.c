/* The preview proxy's upstream: runner connections that are child wsis of
 * the client (closing the client closes them, LIBWEBSOCKETS.md §2). First
 * `get`, to learn whether the sandbox runs, declared the port and wants
 * its preview token (no ownership check: previews are public unless
 * private). Then
 * `connect` with "fd":true: a runner on this host whose driver can do it
 * passes the guest's TCP socket itself (SCM_RIGHTS), so the runner's splice
 * and the agent's forward leave the data path; the reply is read with
 * recvmsg (the runner socket is adopted as a raw file: lws's own recv would
 * drop the fd). Otherwise the plain `connect`, after whose ok reply the
 * runner socket is a byte stream to 127.0.0.1:<port> in the sandbox. */
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
#include "gw_fdguard.h"
#include "sbx_log.h"
#include "sbx_net.h"

void gw_proxy_up_close(struct gw_pconn *c)
{
	if (c->up) {
		struct lws *up = c->up;
		c->up = NULL;
		lws_set_opaque_user_data(up, NULL);
		lws_set_timeout(up, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
	}
	c->up_phase = GW_PU_GONE;
}

void gw_proxy_up_pause(struct gw_pconn *c, int pause)
{
	if (!c->up || c->up_paused == pause)
		return;
	c->up_paused = pause;
	lws_rx_flow_control(c->up, pause ? 0 : 1 | LWS_RXFLOW_REASON_FLAG_PROCESS_NOW);
}

static int open_runner(struct gw_pconn *c, enum gw_pup phase)
{
	const char *path = c->f->vh->runner_socket;
	cJSON *req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", phase == GW_PU_GET ? "get" : "connect");
	cJSON_AddStringToObject(req, "id", c->sid);
	if (phase != GW_PU_GET)
		cJSON_AddNumberToObject(req, "port", c->port);
	if (phase == GW_PU_FDWAIT)
		cJSON_AddTrueToObject(req, "fd");
	char *s = sbx_json_print(req);
	cJSON_Delete(req);
	sbx_buf_reset(&c->rbuf);
	sbx_buf_reset(&c->to_up);
	int rc = s ? sbx_frame_append(&c->to_up, SBX_FRAME_JSON, s, strlen(s)) : -1;
	cJSON_free(s);
	if (rc)
		return gw_proxy_fail(c, 500, "out of memory"), -1;
	int fd = sbx_unix_connect(path, 0);
	if (fd < 0 && errno == ENAMETOOLONG)
		return gw_proxy_fail(c, 502, "runner socket path too long"), -1;
	if (fd < 0 && gw_fd_exhausted_errno(errno)) {
		/* counted and logged once a second, not once per connection */
		gw_fd_exhausted(GW_FDX_RUNNER_SOCKET, errno);
		return gw_plimit_refuse(c, "no_capacity", GW_PLIMIT_BUSY_MSG), -1;
	}
	if (fd < 0) {
		sbx_warn("runner %s: %s", path, strerror(errno));
		c->f->vh->m.upstream_errors++;
		return gw_proxy_fail(c, 503, "the runner is unavailable"), -1;
	}
	lws_adopt_desc_t ad = {
		.vh = c->f->vh->vhost, .type = LWS_ADOPT_SOCKET,
		.vh_prot_name = "gw-proxy-up", .parent = c->wsi, .opaque = c,
	};
	ad.fd.sockfd = fd;
	/* Adoption failures in lws 4.1.6 (lib/core-net/adopt.c): a socket is
	 * closed by lws, a raw file is not. A raw file that failed after lws
	 * took a wsi for it may stay on its parent's child list, and lws
	 * closes the fd number when the parent closes, by then perhaps
	 * someone else's. So the raw file gets no parent (gw_proxy.c closes
	 * it with the client) and a failed one is closed here. */
	if (phase == GW_PU_FDWAIT) {
		/* the request is the first write on a fresh socket: it fits */
		if (send(fd, sbx_buf_head(&c->to_up), c->to_up.len, MSG_DONTWAIT | MSG_NOSIGNAL) !=
		    (ssize_t)c->to_up.len) {
			close(fd);
			return gw_proxy_fail(c, 502, "cannot write to the runner"), -1;
		}
		sbx_buf_reset(&c->to_up);
		ad.type = LWS_ADOPT_RAW_FILE_DESC;
		ad.fd.filefd = fd;
		ad.parent = NULL;
	}
	c->up = lws_adopt_descriptor_vhost_via_info(&ad);
	if (!c->up) {
		if (phase == GW_PU_FDWAIT)
			close(fd);
		gw_fd_exhausted(GW_FDX_ADOPT, ENOMEM);
		return gw_plimit_refuse(c, "no_capacity", GW_PLIMIT_BUSY_MSG), -1;
	}
	lws_set_opaque_user_data(c->up, c);
	c->up_phase = phase;
	c->up_paused = 0;
	lws_callback_on_writable(c->up);
	return 0;
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

/* The runner's reply arrived: 1 to close this runner wsi and go on, -1
 * after failing the client, 0 when the stream starts. */
static int on_reply(struct gw_pconn *c, cJSON *o)
{
	char msg[160];
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "error");
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(e, "code");
	const char *cs = cJSON_IsString(code) ? code->valuestring : "";
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "ok"))) {
		if (!strcmp(cs, "not_found"))
			gw_proxy_fail(c, 404, "There is no such sandbox.");
		else if (!strcmp(cs, "too_many_connections"))
			gw_plimit_refuse(c, cs, "This sandbox has as many connections through the "
					 "runner as it may; try again when some have closed.");
		else if (c->up_phase != GW_PU_GET && !strcmp(cs, "conflict"))
			not_listening(c);
		else
			gw_proxy_fail(c, 502, "The runner refused the connection.");
		return -1;
	}
	if (c->up_phase == GW_PU_GET) {
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "sandbox");
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(s, "status");
		if (!cJSON_IsString(st) || strcmp(st->valuestring, "running")) {
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
	c->up_phase = GW_PU_STREAM;
	return 0;
}

static int stream_rx(struct gw_pconn *c, const void *in, size_t len)
{
	if (!len)
		return 0;
	if (sbx_buf_append(&c->to_cl, in, len))
		return -1;
	c->up_rx += len;
	if (!c->head_started || c->draining)
		lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, c->draining ?
				c->f->head_timeout_s : c->f->idle_timeout_s);
	lws_callback_on_writable(c->wsi);
	if (c->to_cl.len >= GW_PROXY_HIGH)
		gw_proxy_up_pause(c, 1);
	gw_proxy_guest_rx(c, in, len);
	return 0;
}

static int stream_started(struct gw_pconn *c);

/* Bytes from the runner before the stream: its reply frame (and guest
 * bytes behind it in the same read). */
static int reply_rx(struct lws *wsi, struct gw_pconn *c, const void *in, size_t len)
{
	struct sbx_err err = { 0 };
	struct sbx_frame f;
	if (sbx_buf_append(&c->rbuf, in, len))
		return gw_proxy_fail(c, 502, "The runner sent too much."), -1;
	long n = sbx_frame_decode(sbx_buf_head(&c->rbuf), c->rbuf.len, 0, &f, &err);
	if (n == 0)
		return 0;
	cJSON *o = n > 0 && f.type == SBX_FRAME_JSON ?
		sbx_json_parse_object(f.payload, f.len, &err) : NULL;
	if (!o)
		return gw_proxy_fail(c, 502, "The runner sent a bad reply."), -1;
	int rc = on_reply(c, o);
	cJSON_Delete(o);
	if (rc < 0)
		return -1;
	if (rc > 0) {   /* get done: this socket is finished, connect next */
		c->up = NULL;
		lws_set_opaque_user_data(wsi, NULL);
		open_runner(c, c->via_stream || c->f->preview_stream ? GW_PU_CONNECT : GW_PU_FDWAIT);
		return -1;
	}
	sbx_buf_consume(&c->rbuf, (size_t)n);
	if (stream_rx(c, sbx_buf_head(&c->rbuf), c->rbuf.len))
		return gw_proxy_fail(c, 502, "out of memory"), -1;
	return stream_started(c);
}

/* The guest stream is up (c->up): the held first head goes out and the
 * client is read again. */
static int stream_started(struct gw_pconn *c)
{
	sbx_buf_free(&c->rbuf);
	if (sbx_buf_append(&c->to_up, sbx_buf_head(&c->head), c->head.len))
		return gw_proxy_fail(c, 500, "out of memory"), -1;
	sbx_buf_free(&c->head);
	if (!c->hold)
		c->sent_reqs++;
	c->state = c->pending_state;
	gw_proxy_process(c);
	if (c->up && c->to_up.len && !c->hold)
		lws_callback_on_writable(c->up);
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

/* The runner's reply to connect-with-fd, read with recvmsg. Returns -1
 * to close the runner wsi (always, once the reply is complete). */
static int fd_reply(struct lws *wsi, struct gw_pconn *c)
{
	unsigned char b[1024];
	struct sbx_err err = { 0 };
	struct sbx_frame f;
	int tfd;

	/* never more than one fd is sent: others are closed */
	ssize_t n = sbx_recv_fd(lws_get_socket_fd(wsi), b, sizeof b, &tfd, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0 || sbx_buf_append(&c->rbuf, b, (size_t)n)) {
		if (tfd >= 0)
			close(tfd);
		return gw_proxy_fail(c, 502, "The runner closed the connection."), -1;
	}
	long fl = sbx_frame_decode(sbx_buf_head(&c->rbuf), c->rbuf.len, 0, &f, &err);
	if (fl == 0 && tfd < 0)
		return 0;   /* the fd comes with the frame's first byte: more of it later */
	cJSON *o = fl > 0 && f.type == SBX_FRAME_JSON ?
		sbx_json_parse_object(f.payload, f.len, &err) : NULL;
	int rc = o ? on_reply(c, o) : (gw_proxy_fail(c, 502, "The runner sent a bad reply."), -1);
	cJSON_Delete(o);
	if (rc < 0) {
		if (tfd >= 0)
			close(tfd);
		return -1;
	}
	c->up = NULL;
	lws_set_opaque_user_data(wsi, NULL);
	if (tfd < 0) {
		/* a runner (or driver) that cannot pass sockets: use its stream */
		c->via_stream = 1;
		open_runner(c, GW_PU_CONNECT);
		return -1;
	}
	if (refused(tfd)) {
		close(tfd);
		not_listening(c);
		return -1;
	}
	int one = 1;   /* as for clients: small writes go at once */
	setsockopt(tfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	lws_adopt_desc_t ad = {
		.vh = c->f->vh->vhost, .type = LWS_ADOPT_SOCKET,
		.vh_prot_name = "gw-proxy-up", .parent = c->wsi, .opaque = c,
	};
	ad.fd.sockfd = tfd;
	c->up = lws_adopt_descriptor_vhost_via_info(&ad);
	if (!c->up) {   /* lws closed tfd */
		gw_proxy_fail(c, 502, "cannot adopt the guest socket");
		return -1;
	}
	lws_set_opaque_user_data(c->up, c);
	c->up_phase = GW_PU_STREAM;
	c->up_paused = 0;
	sbx_buf_reset(&c->rbuf);
	stream_started(c);
	return -1;
}

static int up_writeable(struct lws *wsi, struct gw_pconn *c)
{
	unsigned char buf[LWS_PRE + GW_PROXY_CHUNK];
	size_t n = c->to_up.len;
	if (!n || (c->up_phase == GW_PU_STREAM && c->hold))
		return 0;
	if (n > GW_PROXY_CHUNK)
		n = GW_PROXY_CHUNK;
	memcpy(buf + LWS_PRE, sbx_buf_head(&c->to_up), n);
	if (lws_write(wsi, buf + LWS_PRE, n, LWS_WRITE_RAW) < (int)n)
		return -1;
	sbx_buf_consume(&c->to_up, n);
	if (c->to_up.len)
		lws_callback_on_writable(wsi);
	if (c->to_up.len < GW_PROXY_LOW && c->cl_paused && c->up_phase == GW_PU_STREAM)
		gw_proxy_process(c);
	return 0;
}

static void up_closed(struct gw_pconn *c)
{
	enum gw_pup was = c->up_phase;
	c->up = NULL;
	c->up_phase = GW_PU_GONE;
	if (c->state == GW_P_ERROR && !c->draining)
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

int gw_proxy_up_cb(struct lws *wsi, enum lws_callback_reasons reason,
		   void *user, void *in, size_t len)
{
	struct gw_pconn *c = lws_get_opaque_user_data(wsi);
	(void)user;
	if (c && c->up != wsi)
		c = NULL;
	switch (reason) {
	case LWS_CALLBACK_RAW_RX:
		if (!c)
			return -1;
		if (c->up_phase == GW_PU_STREAM) {
			if (stream_rx(c, in, len)) {
				gw_proxy_fail(c, 502, "out of memory");
				return -1;
			}
			return 0;
		}
		return reply_rx(wsi, c, in, len);
	case LWS_CALLBACK_RAW_WRITEABLE:
		return c ? up_writeable(wsi, c) : 0;
	case LWS_CALLBACK_RAW_RX_FILE:
		return c && c->up_phase == GW_PU_FDWAIT ? fd_reply(wsi, c) : -1;
	case LWS_CALLBACK_RAW_CLOSE:
	case LWS_CALLBACK_RAW_CLOSE_FILE:
		if (c)
			up_closed(c);
		return 0;
	default:
		return 0;
	}
}
