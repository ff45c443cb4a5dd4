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
#include "../core/gw.h"
#include "sbx_log.h"


/* A side operation: a short agent operation beside the session's main
 * stream (kill, resize, stdin_eof), or the stdin writer of a command
 * stream. Each is its own upstream, a child of the session's wsi (closing
 * the session closes it), freed when it closes. Replies that are errors
 * reach the client as a text message; nothing else does. */
struct gw_sideop {
	struct gw_up up;
	struct gw_req *r;           /* the session; NULL once it went away */
	int keep;                   /* stays open for more frames (stdin) */
};

static void side_error(struct gw_sideop *s, const cJSON *o)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "error");
	cJSON *m;

	if (!s->r)
		return;
	m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "type", "error");
	cJSON_AddItemToObject(m, "error", e ? cJSON_Duplicate(e, 1) :
			      cJSON_CreateString("bad reply from the sandbox"));
	gw_ws_queue_json(s->r, m);
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
	struct gw_sideop *s = u->owner;
	struct sbx_err err = { 0 };
	cJSON *o = f->type == SBX_FRAME_JSON ?
		sbx_json_parse_object(f->payload, f->len, &err) : NULL;
	int ok = o && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "ok"));
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(o, "error"), "code");

	/* A stdin writer with nothing left to send is told `conflict` when
	 * the command exits: that is the stream's normal end, not an error
	 * for the client (the exit message says it all). */
	if (!ok && !(s->keep && !gw_up_queued(u) && cJSON_IsString(code) &&
		     !strcmp(code->valuestring, "conflict")))
		side_error(s, o);
	cJSON_Delete(o);
	return s->keep && ok ? 0 : 1;
}

static void side_sent(struct gw_up *u)
{
	struct gw_sideop *s = u->owner;
	if (s->r && gw_up_queued(u) < GW_QUEUE_HIGH / 2)
		gw_ws_input_flow(s->r);
}

static void side_closed(struct gw_up *u, int by_peer, int lost)
{
	struct gw_sideop *s = u->owner;
	(void)by_peer;
	(void)lost;
	if (s->r)
		gw_ws_side_closed(s->r, s);
	gw_up_release(u);
	free(s);
}

static const struct gw_up_ops side_ops = {
	.reply = side_reply, .frame = side_frame, .sent = side_sent, .closed = side_closed,
};

static struct gw_sideop *side_open(struct gw_req *r, cJSON *agent_req, int keep)
{
	struct gw_sideop *s = calloc(1, sizeof *s);
	int rc;

	if (!s) {
		cJSON_Delete(agent_req);
		return NULL;
	}
	gw_up_init(&s->up, r->vh, &side_ops, s);
	s->r = r;
	s->keep = keep;
	rc = gw_up_open(&s->up, r->wsi, r->sid, gw_up_connect_req(r->sid, 1024, 0), agent_req, 0);
	if (rc) {
		if (rc == GW_UP_ECONNECT)
			sbx_warn("side operation on %s: %s", r->sid, strerror(errno));
		gw_up_release(&s->up);
		free(s);
		return NULL;
	}
	return s;
}

size_t gw_session_side_queued(const struct gw_sideop *s)
{
	return s ? gw_up_queued(&s->up) : 0;
}

void gw_session_detach(struct gw_req *r)
{
	if (r->ws.stdin_side)
		r->ws.stdin_side->r = NULL;
}

static void side_op(struct gw_req *r, cJSON *a)
{
	if (!side_open(r, a, 0))
		gw_ws_fail(r, 503, "no_capacity", "runner unavailable");
}

/* A resize is its own agent connection, and keystrokes typed after it go
 * up the terminal's: they could reach the shell first (`stty size` typed
 * right after a resize showed the old size). So the client is not read
 * while a resize is in flight; its side connection closing resumes it. */
static void send_resize(struct gw_req *r, int64_t cols, int64_t rows)
{
	cJSON *a = cJSON_CreateObject();
	struct gw_sideop *s;

	cJSON_AddStringToObject(a, "op", "resize");
	cJSON_AddStringToObject(a, "id", r->cid);
	cJSON_AddNumberToObject(a, "cols", (double)cols);
	cJSON_AddNumberToObject(a, "rows", (double)rows);
	s = side_open(r, a, 0);
	if (!s) {
		gw_ws_fail(r, 503, "no_capacity", "runner unavailable");
		return;
	}
	r->ws.resize_side = s;
	r->http_rx_paused = 1;
	lws_rx_flow_control(r->wsi, 0);
}

static int on_frame(struct gw_req *r, const struct sbx_frame *f)
{
	cJSON *o;
	const cJSON *t;

	if (f->type == SBX_FRAME_STDOUT || f->type == SBX_FRAME_STDERR) {
		if (gw_ws_queue_bin(r, f->type, f->payload, f->len))
			return gw_resp_error(r, 500, "internal", "out of memory");
		return 0;
	}
	if (!(o = gw_reply_json(r, f, r->op.phase == GW_OP_FIRST, "frame from the sandbox")))
		return -1;
	if (r->op.phase == GW_OP_FIRST) {   /* the attach or exec reply */
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
		if (r->ws.kind == GW_WS_PTY && cJSON_IsString(id)) {
			snprintf(r->cid, sizeof r->cid, "%s", id->valuestring);
			r->vh->m.commands_started++;
			if (r->ws.pending_cols)
				send_resize(r, r->ws.pending_cols, r->ws.pending_rows);
		}
		r->op.phase = GW_OP_STREAMING;
		cJSON_Delete(o);
		return 0;
	}
	t = cJSON_GetObjectItemCaseSensitive(o, "type");
	if (cJSON_IsString(t) && !strcmp(t->valuestring, "exit")) {
		gw_ws_queue_json(r, o);
		gw_ws_queue_close(r, 1000, "");
		return 1;
	}
	if (cJSON_IsString(t) && !strcmp(t->valuestring, "truncated")) {
		gw_ws_queue_json(r, o);
		return 0;
	}
	cJSON_Delete(o);
	return 0;
}

cJSON *gw_stream_request(struct gw_req *r)
{
	int64_t since = 0;
	cJSON *a;

	if (gw_query_i64(r, "since", 0, INT64_MAX / 2, &since) < 0)
		return NULL;
	a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "op", "attach");
	cJSON_AddStringToObject(a, "id", r->cid);
	cJSON_AddNumberToObject(a, "offset", (double)since);
	return a;
}

void gw_session_start(struct gw_req *r, cJSON *req)
{
	gw_req_agent(r, req, on_frame);
}

cJSON *gw_pty_request(struct gw_req *r)
{
	char c[GW_QUERY_CMD_MAX + 1] = "";
	int64_t cols = 80, rows = 24;
	cJSON *a, *args;

	if (gw_query_i64(r, "cols", 1, 1000, &cols) < 0 ||
	    gw_query_i64(r, "rows", 1, 1000, &rows) < 0 ||
	    gw_query_str(r, "cmd", c, sizeof c) < 0)
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

/* A stream opened with a read-only token may not drive the command:
 * the session ends with close 4403 (a terminal needed its own scope to
 * open at all). 1 when refused. */
static int needs_write(struct gw_req *r, const char *what)
{
	char msg[160];

	if (r->ws.kind == GW_WS_PTY || (r->scope & GW_SCOPE_WRITE))
		return 0;
	snprintf(msg, sizeof msg, "%s needs a token with the write scope", what);
	gw_up_close(&r->up);
	gw_ws_fail(r, 403, "forbidden", msg);
	return 1;
}

/* Binary input from the client (tag already stripped). */
void gw_session_input(struct gw_req *r, const void *p, size_t n)
{
	if (needs_write(r, "stdin"))
		return;
	if (r->ws.kind == GW_WS_PTY) {
		if (gw_req_send(r, SBX_FRAME_STDIN, p, n))
			gw_ws_fail(r, 500, "internal", "out of memory");
		return;
	}
	if (!r->ws.stdin_side) {
		cJSON *a = cJSON_CreateObject();
		cJSON_AddStringToObject(a, "op", "stdin");
		cJSON_AddStringToObject(a, "id", r->cid);
		r->ws.stdin_side = side_open(r, a, 1);
		if (!r->ws.stdin_side) {
			gw_ws_fail(r, 503, "no_capacity", "runner unavailable");
			return;
		}
	}
	if (gw_up_send(&r->ws.stdin_side->up, SBX_FRAME_STDIN, p, n))
		gw_ws_fail(r, 500, "internal", "out of memory");
}

static void pace(struct gw_req *r, int paused)
{
	r->ws.paused = paused;
	if (paused) {
		gw_up_pause(&r->up, 1);
	} else {
		gw_ws_output_flow(r);
	}
}

/* A text message from the client, parsed; type is its "type". */
void gw_session_message(struct gw_req *r, const char *type, const cJSON *o)
{
	struct sbx_err err = { 0 };
	cJSON *a;

	if ((!strcmp(type, "kill") || !strcmp(type, "stdin_eof")) && needs_write(r, type))
		return;
	if (!strcmp(type, "kill")) {
		const char *sig = "SIGTERM";
		if (sbx_json_get_str(o, "signal", &sig, &err) < 0) {
			gw_ws_error(r, "invalid", err.msg);
			return;
		}
		if (!r->cid[0])
			return;
		a = cJSON_CreateObject();
		cJSON_AddStringToObject(a, "op", "signal");
		cJSON_AddStringToObject(a, "id", r->cid);
		cJSON_AddStringToObject(a, "signal", sig);
		side_op(r, a);
	} else if (!strcmp(type, "stdin_eof") && r->ws.kind == GW_WS_STREAM) {
		if (r->ws.stdin_side) {
			if (gw_up_send(&r->ws.stdin_side->up, SBX_FRAME_EOF, NULL, 0))
				gw_ws_fail(r, 500, "internal", "out of memory");
			return;
		}
		a = cJSON_CreateObject();
		cJSON_AddStringToObject(a, "op", "stdin_eof");
		cJSON_AddStringToObject(a, "id", r->cid);
		side_op(r, a);
	} else if (!strcmp(type, "resize") && r->ws.kind == GW_WS_PTY) {
		int64_t cols, rows;
		if (sbx_json_get_i64(o, "cols", 1, 1000, &cols, &err) <= 0 ||
		    sbx_json_get_i64(o, "rows", 1, 1000, &rows, &err) <= 0) {
			gw_ws_error(r, "invalid", err.msg[0] ? err.msg : "cols and rows are required");
			return;
		}
		if (!r->cid[0]) {   /* before the shell started: sent once it has */
			r->ws.pending_cols = cols;
			r->ws.pending_rows = rows;
			return;
		}
		send_resize(r, cols, rows);
	} else if (!strcmp(type, "pause")) {
		pace(r, 1);
	} else if (!strcmp(type, "resume")) {
		pace(r, 0);
	} else {
		gw_ws_error(r, "bad_request", "unknown message type");
	}
}
