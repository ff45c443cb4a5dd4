/* Side operations of a WebSocket session: short agent operations that run
 * beside its main stream (kill, resize, stdin_eof) and the stdin writer of
 * a command stream. Each is its own runner connection, adopted as a raw
 * child of the session's wsi, so closing the session closes it. Replies
 * that are errors reach the client as a text message; nothing else does. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "gw.h"
#include "sbx_dial.h"
#include "sbx_log.h"

struct gw_side {
	struct gw_req *r;           /* the session; NULL once it went away */
	struct lws *wsi;
	struct sbx_buf out, in;
	size_t gate;                /* bytes that may go before the runner said ok */
	int agent;                  /* the runner said ok */
	int dial;                   /* direct: the agent's "OK 1024\n" comes first */
	int keep;                   /* stays open for more frames (stdin) */
};

static int queue_json(struct sbx_buf *b, const cJSON *o)
{
	char *s = sbx_json_print(o);
	int rc = s ? sbx_frame_append(b, SBX_FRAME_JSON, s, strlen(s)) : -1;
	cJSON_free(s);
	return rc;
}

struct gw_side *gw_side_open(struct gw_req *r, cJSON *agent_req, int keep)
{
	struct gw_side *s = calloc(1, sizeof *s);
	cJSON *conn = cJSON_CreateObject();
	int fd = -1, direct = 0;

	cJSON_AddStringToObject(conn, "op", "connect");
	cJSON_AddStringToObject(conn, "id", r->sid);
	cJSON_AddNumberToObject(conn, "port", 1024);
	if (!s)
		goto fail;
	sbx_buf_init(&s->out, 0);
	sbx_buf_init(&s->in, 64 * 1024);
	fd = gw_agent_connect(r->vh, r->sid, &direct);
	if (fd < 0) {
		sbx_warn("side operation: runner %s: %s", r->vh->runner_socket, strerror(errno));
		goto fail;
	}
	if (!direct && queue_json(&s->out, conn))
		goto fail;
	s->gate = s->out.len;
	s->agent = direct;   /* straight to the agent: no runner reply comes */
	s->dial = direct;
	if (queue_json(&s->out, agent_req))
		goto fail;
	lws_adopt_desc_t ad = {
		.vh = r->vh->vhost, .type = LWS_ADOPT_SOCKET,
		.vh_prot_name = "gw-side", .parent = r->wsi, .opaque = s,
	};
	ad.fd.sockfd = fd;
	s->r = r;
	s->keep = keep;
	s->wsi = lws_adopt_descriptor_vhost_via_info(&ad);
	fd = -1;       /* lws owns it now, or closed it */
	if (!s->wsi)
		goto fail;
	lws_set_opaque_user_data(s->wsi, s);
	lws_callback_on_writable(s->wsi);
	cJSON_Delete(conn);
	cJSON_Delete(agent_req);
	return s;
fail:
	if (fd >= 0)
		close(fd);
	if (s) {
		sbx_buf_free(&s->out);
		sbx_buf_free(&s->in);
		free(s);
	}
	cJSON_Delete(conn);
	cJSON_Delete(agent_req);
	return NULL;
}

size_t gw_side_queued(const struct gw_side *s)
{
	return s ? s->out.len : 0;
}

int gw_side_send(struct gw_side *s, enum sbx_frame_type t, const void *p, size_t n)
{
	while (n) {
		size_t k = n < 65536 ? n : 65536;
		if (sbx_frame_append(&s->out, t, p, k))
			return -1;
		p = (const char *)p + k;
		n -= k;
	}
	if (t == SBX_FRAME_EOF && sbx_frame_append(&s->out, t, NULL, 0))
		return -1;
	lws_callback_on_writable(s->wsi);
	return 0;
}

void gw_side_detach(struct gw_side *s)
{
	if (s)
		s->r = NULL;
}

/* One reply frame from the agent: errors go to the client. Returns -1 to
 * close the side connection. */
static int reply(struct gw_side *s, const struct sbx_frame *f)
{
	struct sbx_err err = { 0 };
	cJSON *o = f->type == SBX_FRAME_JSON ?
		sbx_json_parse_object(f->payload, f->len, &err) : NULL;
	int ok = o && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "ok"));
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(o, "error"), "code");

	/* A stdin writer with nothing left to send is told `conflict` when
	 * the command exits: that is the stream's normal end, not an error
	 * for the client (the exit message says it all). */
	if (!ok && s->agent && s->keep && !s->out.len && cJSON_IsString(code) &&
	    !strcmp(code->valuestring, "conflict")) {
		cJSON_Delete(o);
		return -1;
	}
	if (!ok && s->r) {
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "error");
		cJSON *m = cJSON_CreateObject();
		cJSON_AddStringToObject(m, "type", "error");
		cJSON_AddItemToObject(m, "error", e ? cJSON_Duplicate(e, 1) :
				      cJSON_CreateString("bad reply from the sandbox"));
		gw_ws_queue_json(s->r, m);
	}
	cJSON_Delete(o);
	if (!s->agent) {
		if (!ok)
			return -1;
		s->agent = 1;
		lws_callback_on_writable(s->wsi);
		return 0;
	}
	return s->keep && ok ? 0 : -1;
}

static int rx(struct gw_side *s, const void *in, size_t len)
{
	struct sbx_err err = { 0 };

	if (sbx_buf_append(&s->in, in, len))
		return -1;
	if (s->dial) {   /* the dial step: the agent's answer to CONNECT */
		long k = sbx_dial_parse_ok(sbx_buf_head(&s->in), s->in.len, SBX_AGENT_PORT);
		if (k <= 0)
			return k < 0 ? -1 : 0;
		sbx_buf_consume(&s->in, (size_t)k);
		s->dial = 0;
	}
	for (;;) {
		struct sbx_frame f;
		long n = sbx_frame_decode(sbx_buf_head(&s->in), s->in.len, 0, &f, &err);
		if (n <= 0)
			return n < 0 ? -1 : 0;
		int rc = reply(s, &f);
		sbx_buf_consume(&s->in, (size_t)n);
		if (rc)
			return rc;
	}
}

static int writeable(struct gw_side *s)
{
	unsigned char buf[LWS_PRE + GW_CHUNK];
	size_t n = s->out.len;

	if (!s->agent && n > s->gate)
		n = s->gate;
	if (!n)
		return 0;
	if (n > GW_CHUNK)
		n = GW_CHUNK;
	memcpy(buf + LWS_PRE, sbx_buf_head(&s->out), n);
	if (lws_write(s->wsi, buf + LWS_PRE, n, LWS_WRITE_RAW) < (int)n)
		return -1;
	sbx_buf_consume(&s->out, n);
	if (!s->agent)
		s->gate -= n;
	if (s->out.len && (s->agent || s->gate))
		lws_callback_on_writable(s->wsi);
	if (s->r && s->out.len < GW_QUEUE_HIGH / 2)
		gw_ws_input_flow(s->r);
	return 0;
}

int gw_side_callback(struct lws *wsi, enum lws_callback_reasons reason,
		     void *user, void *in, size_t len)
{
	struct gw_side *s = lws_get_opaque_user_data(wsi);
	(void)user;

	switch (reason) {
	case LWS_CALLBACK_RAW_RX:
		return s ? rx(s, in, len) : -1;
	case LWS_CALLBACK_RAW_WRITEABLE:
		return s ? writeable(s) : 0;
	case LWS_CALLBACK_RAW_CLOSE:
		if (s) {
			lws_set_opaque_user_data(wsi, NULL);
			if (s->r)
				gw_ws_side_closed(s->r, s);
			sbx_buf_free(&s->out);
			sbx_buf_free(&s->in);
			free(s);
		}
		return 0;
	default:
		return 0;
	}
}
