/* What a WebSocket session does upstream. A command stream is an agent
 * `attach` from `since`: output chunks become binary messages, the exit a
 * text message and a close 1000; stdin, kill and stdin_eof from the client
 * go through side operations (below), so any number of subscribers can
 * watch one command. A terminal is an agent `exec` on a PTY with attach:
 * keystrokes go up the same connection; resize is a side operation; pause
 * and resume stop and restart reading it (the agent then stops reading
 * the PTY, so the program blocks instead of flooding a slow browser). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/gw_refusal.h"
#include "gw_ws.h"
#include "sbx_log.h"


/* A side operation: a short agent operation beside the session's main
 * stream (kill, resize, stdin_eof), or the stdin writer of a command
 * stream. Each is its own upstream, a child of the session's wsi (closing
 * the session closes it), freed when it closes. Replies that are errors
 * reach the client as a text message; nothing else does. */
struct gw_sideop {
	struct gw_up up;
	struct gw_ws_session *s;    /* the session; NULL once it went away */
	int keep;                   /* stays open for more frames (stdin) */
};

static void side_error(struct gw_sideop *side, const cJSON *o)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "error");
	cJSON *m;

	if (!side->s)
		return;
	m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "type", "error");
	cJSON_AddItemToObject(m, "error", e ? cJSON_Duplicate(e, 1) :
			      cJSON_CreateString("bad reply from the sandbox"));
	gw_ws_queue_json(side->s, m);
}

static int side_reply(struct gw_up *u, const cJSON *o, int ok, const char *why, int fd)
{
	(void)why;
	(void)fd;
	if (ok)
		return 0;
	side_error(u->owner, o);
	return -1;
}

/* The agent's reply (a stdin writer: to each frame). */
static int side_frame(struct gw_up *u, const struct sbx_frame *f)
{
	struct gw_sideop *side = u->owner;
	struct sbx_err err = { 0 };
	cJSON *o = f->type == SBX_FRAME_JSON ?
		sbx_json_parse_object(f->payload, f->len, &err) : NULL;
	int ok = o && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "ok"));
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(o, "error"), "code");

	/* A stdin writer with nothing left to send is told `conflict` when
	 * the command exits: that is the stream's normal end, not an error
	 * for the client (the exit message says it all). */
	if (!ok && !(side->keep && !gw_up_queued(u) && cJSON_IsString(code) &&
		     !strcmp(code->valuestring, "conflict")))
		side_error(side, o);
	cJSON_Delete(o);
	return side->keep && ok ? 0 : 1;
}

static void side_sent(struct gw_up *u)
{
	struct gw_sideop *side = u->owner;
	if (side->s && gw_up_queued(u) < GW_QUEUE_HIGH / 2)
		gw_ws_input_flow(side->s);
}

static void side_closed(struct gw_up *u, int by_peer, int lost)
{
	struct gw_sideop *side = u->owner;
	(void)by_peer;
	(void)lost;
	if (side->s)
		gw_ws_side_closed(side->s, side);
	gw_up_release(u);
	free(side);
}

static const struct gw_up_ops side_ops = {
	.reply = side_reply, .frame = side_frame, .sent = side_sent, .closed = side_closed,
};

static struct gw_sideop *side_open(struct gw_ws_session *s, cJSON *agent_req, int keep)
{
	struct gw_sideop *side = calloc(1, sizeof *side);
	const char *sid = s->r->sid;
	int rc;

	if (!side) {
		cJSON_Delete(agent_req);
		return NULL;
	}
	gw_up_init(&side->up, s->r->vh, &side_ops, side);
	side->s = s;
	side->keep = keep;
	rc = gw_up_open(&side->up, s->r->wsi, sid, gw_up_connect_req(sid, 1024, 0), agent_req, 0);
	if (rc) {
		if (rc == GW_UP_ECONNECT)
			sbx_warn("side operation on %s: %s", sid, strerror(errno));
		gw_up_release(&side->up);
		free(side);
		return NULL;
	}
	return side;
}

size_t gw_session_side_queued(const struct gw_sideop *side)
{
	return side ? gw_up_queued(&side->up) : 0;
}

void gw_session_detach(struct gw_ws_session *s)
{
	if (s->stdin_side)
		s->stdin_side->s = NULL;
}

static void side_op(struct gw_ws_session *s, cJSON *a)
{
	if (!side_open(s, a, 0))
		gw_ws_fail(s, 503, "no_capacity", "runner unavailable");
}

/* A resize is its own agent connection, and keystrokes typed after it go
 * up the terminal's: they could reach the shell first (`stty size` typed
 * right after a resize showed the old size). So the client is not read
 * while a resize is in flight; its side connection closing resumes it. */
static void send_resize(struct gw_ws_session *s, int64_t cols, int64_t rows)
{
	cJSON *a = cJSON_CreateObject();
	struct gw_sideop *side;

	cJSON_AddStringToObject(a, "op", "resize");
	cJSON_AddStringToObject(a, "id", s->r->cid);
	cJSON_AddNumberToObject(a, "cols", (double)cols);
	cJSON_AddNumberToObject(a, "rows", (double)rows);
	side = side_open(s, a, 0);
	if (!side) {
		gw_ws_fail(s, 503, "no_capacity", "runner unavailable");
		return;
	}
	s->resize_side = side;
	s->rx_paused = 1;
	lws_rx_flow_control(s->r->wsi, 0);
}

/* ---- the session's own upstream: the agent stream ---- */

static void fail_refusal(struct gw_ws_session *s, const struct gw_refusal *ref)
{
	gw_ws_fail(s, ref->status, ref->code, ref->msg);
}

static int up_reply(struct gw_up *u, const cJSON *o, int ok, const char *why, int fd)
{
	struct gw_ws_session *s = u->owner;
	struct gw_refusal ref;

	(void)fd;   /* never asked for */
	if (ok)
		return 0;
	if (o)
		gw_refusal_reply(s->r->vh, o, &ref);
	else
		gw_refusal_upstream(u, why, 1, &ref);
	fail_refusal(s, &ref);
	return -1;
}

/* The attach or exec reply: a terminal learns its command's id. */
static int first_reply(struct gw_ws_session *s, cJSON *o)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
	struct gw_req *r = s->r;

	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "ok"))) {
		struct gw_refusal ref;
		gw_refusal_reply(r->vh, o, &ref);
		fail_refusal(s, &ref);
		return -1;
	}
	if (s->kind == GW_WS_PTY && cJSON_IsString(id)) {
		snprintf(r->cid, sizeof r->cid, "%s", id->valuestring);
		r->vh->m.commands_started++;
		if (s->pending_cols)
			send_resize(s, s->pending_cols, s->pending_rows);
	}
	s->started = 1;
	return 0;
}

static int on_frame(struct gw_ws_session *s, const struct sbx_frame *f)
{
	struct sbx_err err = { 0 };
	cJSON *o;
	const cJSON *t;
	int rc = 0;

	if (f->type == SBX_FRAME_STDOUT || f->type == SBX_FRAME_STDERR) {
		if (!gw_ws_queue_bin(s, f->type, f->payload, f->len))
			return 0;
		gw_ws_fail(s, 500, "internal", "out of memory");
		return -1;
	}
	o = f->type == SBX_FRAME_JSON ? sbx_json_parse_object(f->payload, f->len, &err) : NULL;
	if (!o) {
		gw_ws_fail(s, 502, "internal", "bad frame from the sandbox");
		return -1;
	}
	if (!s->started) {
		rc = first_reply(s, o);
		cJSON_Delete(o);
		return rc;
	}
	t = cJSON_GetObjectItemCaseSensitive(o, "type");
	if (cJSON_IsString(t) && !strcmp(t->valuestring, "exit")) {
		gw_ws_queue_json(s, o);
		gw_ws_queue_close(s, 1000, "");
		return 1;
	}
	if (cJSON_IsString(t) && !strcmp(t->valuestring, "truncated")) {
		gw_ws_queue_json(s, o);
		return 0;
	}
	cJSON_Delete(o);
	return 0;
}

/* Reads of the agent stop while the client's queue is full or the client
 * asked for a pause (gw_ws_output_flow resumes them). */
static int up_frame(struct gw_up *u, const struct sbx_frame *f)
{
	struct gw_ws_session *s = u->owner;
	int rc = on_frame(s, f);

	if (!rc && (s->q.len >= GW_QUEUE_HIGH || s->paused))
		gw_up_pause(u, 1);
	return rc;
}

static void up_fail(struct gw_up *u, const char *why)
{
	struct gw_refusal ref;

	gw_refusal_upstream(u, why, 0, &ref);
	fail_refusal(u->owner, &ref);
}

static void up_sent(struct gw_up *u)
{
	gw_ws_input_flow(u->owner);
}

/* Two ways to get here: the sandbox side went away (EOF or an error on
 * the socket), or lws closes this child because the session itself is
 * closing, after its close frame, which nothing may follow. */
static void up_closed(struct gw_up *u, int by_peer, int lost)
{
	struct gw_ws_session *s = u->owner;

	if (!by_peer)
		return;
	if (lost)
		s->up_lost = 1;
	else   /* lws failed the session: finish the failing by closing it */
		s->closing = s->drop = 1;
	lws_callback_on_writable(s->r->wsi);
}

static const struct gw_up_ops up_ops = {
	.reply = up_reply, .frame = up_frame, .fail = up_fail, .sent = up_sent,
	.closed = up_closed,
};

void gw_session_start(struct gw_ws_session *s, cJSON *req)
{
	struct gw_req *r = s->r;
	struct gw_runner *rn = gw_runner_for_sid(r->vh, r->sid);
	struct gw_refusal ref;
	int rc;

	gw_up_init(&s->up, r->vh, &up_ops, s);
	rc = gw_up_open(&s->up, r->wsi, r->sid, gw_up_connect_req(r->sid, 1024, 0), req, 0);
	if (rc) {
		gw_refusal_open(r->vh, &s->up, rc, rn, r->sid, &ref);
		fail_refusal(s, &ref);
	}
}

/* ---- the request it opens with, from the upgrade's query: a refused
 * argument ends the session with close 4422 ---- */

static int query_refused(struct gw_ws_session *s, int rc, const char *why)
{
	if (rc < 0)
		gw_ws_fail(s, 422, "invalid", why);
	return rc < 0;
}

cJSON *gw_stream_request(struct gw_ws_session *s)
{
	char why[160];
	int64_t since = 0;
	cJSON *a;

	if (query_refused(s, gw_query_num(s->r->wsi, "since", 0, INT64_MAX / 2, &since, why,
					  sizeof why), why))
		return NULL;
	a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "op", "attach");
	cJSON_AddStringToObject(a, "id", s->r->cid);
	cJSON_AddNumberToObject(a, "offset", (double)since);
	return a;
}

cJSON *gw_pty_request(struct gw_ws_session *s)
{
	struct lws *wsi = s->r->wsi;
	char c[GW_QUERY_CMD_MAX + 1] = "", why[160];
	int64_t cols = 80, rows = 24;
	cJSON *a, *args;

	if (query_refused(s, gw_query_num(wsi, "cols", 1, 1000, &cols, why, sizeof why), why) ||
	    query_refused(s, gw_query_num(wsi, "rows", 1, 1000, &rows, why, sizeof why), why) ||
	    query_refused(s, gw_query_get(wsi, "cmd", c, sizeof c, why, sizeof why), why))
		return NULL;
	a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "op", "exec");
	cJSON_AddStringToObject(a, "cmd", *c ? c : "bash");
	args = cJSON_AddArrayToObject(a, "args");
	if (!*c || !strcmp(c, "bash"))
		cJSON_AddItemToArray(args, cJSON_CreateString("-l"));
	cJSON_AddStringToObject(a, "cwd", "/home/sandbox");
	cJSON_AddNumberToObject(a, "uid", 1000);
	cJSON_AddNumberToObject(a, "gid", 1000);
	cJSON_AddBoolToObject(a, "pty", 1);
	cJSON_AddBoolToObject(a, "attach", 1);
	cJSON_AddBoolToObject(a, "hangup_on_detach", 1);
	cJSON_AddNumberToObject(a, "cols", (double)cols);
	cJSON_AddNumberToObject(a, "rows", (double)rows);
	return a;
}

/* ---- from the client ---- */

/* A stream opened with a read-only token may not drive the command:
 * the session ends with close 4403 (a terminal needed its own scope to
 * open at all). 1 when refused. */
static int needs_write(struct gw_ws_session *s, const char *what)
{
	char msg[160];

	if (s->kind == GW_WS_PTY || (s->r->scope & GW_SCOPE_WRITE))
		return 0;
	snprintf(msg, sizeof msg, "%s needs a token with the write scope", what);
	gw_ws_fail(s, 403, "forbidden", msg);
	return 1;
}

/* Binary input from the client (tag already stripped). */
void gw_session_input(struct gw_ws_session *s, const void *p, size_t n)
{
	if (needs_write(s, "stdin"))
		return;
	if (s->kind == GW_WS_PTY) {
		if (gw_up_send(&s->up, SBX_FRAME_STDIN, p, n))
			gw_ws_fail(s, 500, "internal", "out of memory");
		return;
	}
	if (!s->stdin_side) {
		cJSON *a = cJSON_CreateObject();
		cJSON_AddStringToObject(a, "op", "stdin");
		cJSON_AddStringToObject(a, "id", s->r->cid);
		s->stdin_side = side_open(s, a, 1);
		if (!s->stdin_side) {
			gw_ws_fail(s, 503, "no_capacity", "runner unavailable");
			return;
		}
	}
	if (gw_up_send(&s->stdin_side->up, SBX_FRAME_STDIN, p, n))
		gw_ws_fail(s, 500, "internal", "out of memory");
}

static void pace(struct gw_ws_session *s, int paused)
{
	s->paused = paused;
	if (paused) {
		gw_up_pause(&s->up, 1);
	} else {
		gw_ws_output_flow(s);
	}
}

/* A text message from the client, parsed; type is its "type". */
void gw_session_message(struct gw_ws_session *s, const char *type, const cJSON *o)
{
	struct sbx_err err = { 0 };
	const char *cid = s->r->cid;
	cJSON *a;

	if ((!strcmp(type, "kill") || !strcmp(type, "stdin_eof")) && needs_write(s, type))
		return;
	if (!strcmp(type, "kill")) {
		const char *sig = "SIGTERM";
		if (sbx_json_get_str(o, "signal", &sig, &err) < 0) {
			gw_ws_error(s, "invalid", err.msg);
			return;
		}
		if (!cid[0])
			return;
		a = cJSON_CreateObject();
		cJSON_AddStringToObject(a, "op", "signal");
		cJSON_AddStringToObject(a, "id", cid);
		cJSON_AddStringToObject(a, "signal", sig);
		side_op(s, a);
	} else if (!strcmp(type, "stdin_eof") && s->kind == GW_WS_STREAM) {
		if (s->stdin_side) {
			if (gw_up_send(&s->stdin_side->up, SBX_FRAME_EOF, NULL, 0))
				gw_ws_fail(s, 500, "internal", "out of memory");
			return;
		}
		a = cJSON_CreateObject();
		cJSON_AddStringToObject(a, "op", "stdin_eof");
		cJSON_AddStringToObject(a, "id", cid);
		side_op(s, a);
	} else if (!strcmp(type, "resize") && s->kind == GW_WS_PTY) {
		int64_t cols, rows;
		if (sbx_json_get_i64(o, "cols", 1, 1000, &cols, &err) <= 0 ||
		    sbx_json_get_i64(o, "rows", 1, 1000, &rows, &err) <= 0) {
			gw_ws_error(s, "invalid", err.msg[0] ? err.msg : "cols and rows are required");
			return;
		}
		if (!cid[0]) {   /* before the shell started: sent once it has */
			s->pending_cols = cols;
			s->pending_rows = rows;
			return;
		}
		send_resize(s, cols, rows);
	} else if (!strcmp(type, "pause")) {
		pace(s, 1);
	} else if (!strcmp(type, "resume")) {
		pace(s, 0);
	} else {
		gw_ws_error(s, "bad_request", "unknown message type");
	}
}
