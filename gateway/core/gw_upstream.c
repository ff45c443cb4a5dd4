/* A request's upstream (r->up, a gw_up): one runner operation, or one agent
 * operation behind the runner's `connect` to port 1024 (straight to the
 * agent's socket when the gateway knows it). Every frame after the
 * runner's ok goes to r->on_frame; reads pause (rx flow control) while the
 * client's response queue is full, and a streamed request body is read
 * again once the upstream took it. */
#include "gw.h"
#include "gw_refusal.h"

static int req_reply(struct gw_up *u, const cJSON *o, int ok, const char *why, int fd)
{
	struct gw_req *r = u->owner;
	struct gw_refusal ref;
	(void)fd;   /* never asked for */
	if (ok)
		return 0;
	if (o)
		gw_refusal_reply(r->vh, o, &ref);
	else
		gw_refusal_upstream(u, why, 1, &ref);
	return gw_resp_error(r, ref.status, ref.code, "%s", ref.msg);
}

static int req_frame(struct gw_up *u, const struct sbx_frame *f)
{
	struct gw_req *r = u->owner;
	int rc = r->on_frame(r, f);
	/* an internal request has no reader: r->resp_cap bounds it */
	if (!rc && r->wsi && r->resp.len >= GW_QUEUE_HIGH)
		gw_up_pause(u, 1);
	return rc;
}

static void req_fail(struct gw_up *u, const char *why)
{
	struct gw_refusal ref;

	gw_refusal_upstream(u, why, 0, &ref);
	gw_resp_error(u->owner, ref.status, ref.code, "%s", ref.msg);
}

/* POST .../stdin without eof: answered once every byte went to the agent */
static int req_drained(struct gw_up *u)
{
	struct gw_req *r = u->owner;
	if (r->op.phase != GW_OP_ANSWER_WHEN_SENT)
		return 0;
	gw_resp_json(r, 200, cJSON_CreateObject());
	return 1;
}

static void req_sent(struct gw_up *u)
{
	struct gw_req *r = u->owner;
	if (r->http_rx_paused && r->wsi && gw_up_queued(u) < GW_QUEUE_HIGH / 2) {
		r->http_rx_paused = 0;
		lws_rx_flow_control(r->wsi, 1 | LWS_RXFLOW_REASON_FLAG_PROCESS_NOW);
	}
}

static void req_closed(struct gw_up *u, int by_peer, int lost)
{
	struct gw_req *r = u->owner;
	if (!by_peer)
		return;
	(void)lost;
	if (!r->resp_ready) {
		gw_resp_error(r, 502, "internal", "upstream closed early");
	} else if (!r->resp_done) {
		/* a stream cut short: close the client too */
		r->close_after = 1;
		r->resp_done = 1;
		gw_req_wake(r);
	}
}

static const struct gw_up_ops req_ops = {
	.reply = req_reply, .frame = req_frame, .fail = req_fail,
	.drained = req_drained, .sent = req_sent, .closed = req_closed,
};

static int open_error(struct gw_req *r, int rc, struct gw_runner *rn)
{
	struct gw_refusal ref;

	gw_refusal_open(r->vh, &r->up, rc, rn, r->sid, &ref);
	return gw_resp_error(r, ref.status, ref.code, "%s", ref.msg);
}

static int open_up(struct gw_req *r, const char *sid, cJSON *first, cJSON *next, gw_frame_cb cb)
{
	struct gw_runner *rn;
	int rc;

	if (r->up.ops != &req_ops)
		gw_up_init(&r->up, r->vh, &req_ops, r);
	r->on_frame = cb;
	/* a runner op: its sandbox's runner, or the local one */
	rn = r->sid[0] ? gw_runner_for_sid(r->vh, r->sid) : gw_runner_local(r->vh);
	if (sid)
		rc = gw_up_open(&r->up, r->wsi, sid, first, next, 0);
	else
		rc = gw_up_open_runner(&r->up, r->wsi, rn, first, next, 0);
	return rc ? open_error(r, rc, rn) : 0;
}

int gw_req_runner(struct gw_req *r, cJSON *runner_req, gw_frame_cb cb)
{
	return open_up(r, NULL, runner_req, NULL, cb);
}

int gw_req_agent(struct gw_req *r, cJSON *agent_req, gw_frame_cb cb)
{
	return open_up(r, r->sid, gw_up_connect_req(r->sid, 1024, 0), agent_req, cb);
}

int gw_req_send(struct gw_req *r, enum sbx_frame_type t, const void *p, size_t n)
{
	return gw_up_send(&r->up, t, p, n);
}

cJSON *gw_reply_json(struct gw_req *r, const struct sbx_frame *f, int need_ok, const char *what)
{
	struct sbx_err err = { 0 };
	cJSON *o = f->type == SBX_FRAME_JSON ?
		sbx_json_parse_object(f->payload, f->len, &err) : NULL;
	if (!o) {
		gw_resp_error(r, 502, "internal", "bad %s", what);
		return NULL;
	}
	if (need_ok && !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "ok"))) {
		gw_resp_runner_error(r, o);
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

void gw_json_move_fields(cJSON *dst, cJSON *src, const char *const *names,
			 size_t n)
{
	for (size_t i = 0; i < n; i++) {
		cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(src, names[i]);
		if (v)
			cJSON_AddItemToObject(dst, names[i], v);
	}
}
