/* A call's upstream (c->up, a gw_up): one runner operation, or one agent
 * operation behind the runner's `connect` to port 1024 (straight to the
 * agent's socket when the gateway knows it). Every frame after the
 * runner's ok goes to c->on_frame; reads pause while the front end is
 * full (its sink's full), and a streamed upload is told when the
 * upstream took it (its sink's drained). */
#include "svc.h"
#include "../core/gw_refusal.h"

static int up_reply(struct gw_up *u, const cJSON *o, int ok, const char *why, int fd)
{
	struct svc_call *c = u->owner;
	(void)fd;   /* never asked for */
	if (o || gw_up_unreachable(u))   /* an answer, or the request never reached it */
		svc_resume_settled(c);   /* "resumed" below marks it live in this same turn */
	if (!o) {
		struct gw_refusal ref;
		gw_refusal_upstream(u, why, 1, &ref);
		svc_fail_as(c, &ref);
		return -1;
	}
	if (!ok) {
		svc_runner_error(c, o);
		return -1;
	}
	svc_note_resumed(c, o);
	return 0;
}

void svc_note_resumed(struct svc_call *c, const cJSON *reply)
{
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply, "resumed"))) {
		/* the runner brought a kept persistent sandbox back first */
		c->resumed = 1;
		gw_owner_set_live(c->vh, c->sid, 1);
	}
}

void svc_resume_mark(struct svc_call *c, cJSON *req, int explicit_op)
{
	svc_resume_settled(c);   /* a call resumes through one request at a time */
	c->resume_held = explicit_op ? gw_owner_resume_hold(c->vh, req, c->sid, c->key) :
		gw_owner_resume_req(c->vh, req, c->sid, c->key);
}

void svc_resume_settled(struct svc_call *c)
{
	if (c->resume_held && c->vh)
		gw_owner_resume_release(c->vh, c->sid);
	c->resume_held = 0;
}

void svc_resume_dropped(struct svc_call *c)
{
	if (c->resume_held && c->vh)
		gw_owner_resume_lost(c->vh, c->sid);
	c->resume_held = 0;
}

static int up_frame(struct gw_up *u, const struct sbx_frame *f)
{
	struct svc_call *c = u->owner;
	int rc;

	/* a runner op's reply is its first frame; the op's callback marks a
	 * resumed sandbox live in this same turn, so nothing sees it uncounted */
	svc_resume_settled(c);
	rc = c->on_frame(c, f);
	if (!rc && c->sink->full && c->sink->full(c))
		gw_up_pause(u, 1);
	return rc;
}

static void up_fail(struct gw_up *u, const char *why)
{
	struct gw_refusal ref;
	gw_refusal_upstream(u, why, 0, &ref);
	svc_fail_as(u->owner, &ref);
}

/* stdin without eof: answered once every byte went to the agent */
static int up_drained(struct gw_up *u)
{
	struct svc_call *c = u->owner;
	if (c->op.phase != GW_OP_ANSWER_WHEN_SENT)
		return 0;
	svc_reply(c, 200, cJSON_CreateObject());
	return 1;
}

static void up_sent(struct gw_up *u)
{
	struct svc_call *c = u->owner;
	if (c->sink->drained && gw_up_queued(u) < GW_QUEUE_HIGH / 2)
		c->sink->drained(c);
}

static void up_closed(struct gw_up *u, int by_peer, int lost)
{
	struct svc_call *c = u->owner;
	if (!by_peer)
		return;
	c->parent_closed = !lost;
	if (!c->answered && c->place && !c->place->answered && svc_place_retry(c, NULL)) {
		/* a create whose runner went away before answering: the next */
	} else if (!c->answered) {
		svc_fail(c, 502, "internal", "upstream closed early");
	} else {
		svc_end(c, 1);   /* a stream cut short */
	}
}

static void up_read_done(struct gw_up *u)
{
	struct svc_call *c = u->owner;
	if (c->sink->flush)
		c->sink->flush(c);
}

static const struct gw_up_ops up_ops = {
	.reply = up_reply, .frame = up_frame, .fail = up_fail,
	.drained = up_drained, .sent = up_sent, .closed = up_closed, .read_done = up_read_done,
};

/* Fail c for gw_up_open's error rc on runner rn (may be NULL): -1. */
static int open_error(struct svc_call *c, int rc, struct gw_runner *rn)
{
	struct gw_refusal ref;
	gw_refusal_open(c->vh, &c->up, rc, rn, c->sid, &ref);
	svc_fail_as(c, &ref);
	return -1;
}

static void ready(struct svc_call *c, svc_frame_cb cb)
{
	if (c->up.ops != &up_ops)
		gw_up_init(&c->up, c->vh, &up_ops, c);
	c->up.pieces = c->pieces;
	c->on_frame = cb;
}

int svc_runner_on(struct svc_call *c, struct gw_runner *rn, cJSON *req, svc_frame_cb cb)
{
	int rc;

	ready(c, cb);
	rc = gw_up_open_runner(&c->up, c->wsi, rn, req, NULL, 0);
	if (rc && rc != GW_UP_ECONNECT && rc != GW_UP_EDOWN) {
		open_error(c, rc, rn);
		return 1;
	}
	return rc;
}

static int open_up(struct svc_call *c, const char *sid, cJSON *first, cJSON *next, svc_frame_cb cb)
{
	struct gw_runner *rn;
	int rc;

	ready(c, cb);
	/* a runner op: its sandbox's runner, or the local one */
	rn = c->sid[0] ? gw_runner_for_sid(c->vh, c->sid) : gw_runner_local(c->vh);
	if (sid)
		rc = gw_up_open(&c->up, c->wsi, sid, first, next, 0);
	else
		rc = gw_up_open_runner(&c->up, c->wsi, rn, first, next, 0);
	if (rc)
		svc_resume_settled(c);   /* nothing reached the runner */
	return rc ? open_error(c, rc, rn) : 0;
}

int svc_runner(struct svc_call *c, cJSON *runner_req, svc_frame_cb cb)
{
	return open_up(c, NULL, runner_req, NULL, cb);
}

int svc_agent(struct svc_call *c, cJSON *agent_req, svc_frame_cb cb)
{
	cJSON *connect = gw_up_connect_req(c->sid, 1024, 0);

	/* a persistent sandbox that was kept comes back for any agent op,
	 * within its key's sandbox limit */
	svc_resume_mark(c, connect, 0);
	return open_up(c, c->sid, connect, agent_req, cb);
}

int svc_send(struct svc_call *c, enum sbx_frame_type t, const void *p, size_t n)
{
	return gw_up_send(&c->up, t, p, n);
}

cJSON *svc_reply_json(struct svc_call *c, const struct sbx_frame *f, int need_ok, const char *what)
{
	struct sbx_err err = { 0 };
	cJSON *o = f->type == SBX_FRAME_JSON ?
		sbx_json_parse_object(f->payload, f->len, &err) : NULL;
	if (!o) {
		svc_fail(c, 502, "internal", "bad %s", what);
		return NULL;
	}
	if (need_ok && !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "ok"))) {
		svc_runner_error(c, o);
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}
