/* What a WebSocket session does upstream. A command stream is an agent
 * `attach` from `since`: output chunks become binary messages, the exit a
 * text message and a close 1000; stdin, kill and stdin_eof from the client
 * go through side operations (gw_side.c), so any number of subscribers can
 * watch one command. A terminal is an agent `exec` on a PTY with attach:
 * keystrokes go up the same connection; resize is a side operation; pause
 * and resume stop and restart reading it (the agent then stops reading
 * the PTY, so the program blocks instead of flooding a slow browser). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gw.h"
#include "sbx_log.h"

cJSON *gw_connect_req(struct gw_req *r);

static void side_op(struct gw_req *r, cJSON *a)
{
	if (!gw_side_open(r, a, 0))
		gw_ws_fail(r, 503, "no_capacity", "runner unavailable");
}

/* A resize is its own agent connection, and keystrokes typed after it go
 * up the terminal's: they could reach the shell first (`stty size` typed
 * right after a resize showed the old size). So the client is not read
 * while a resize is in flight; its side connection closing resumes it. */
static void send_resize(struct gw_req *r, int64_t cols, int64_t rows)
{
	cJSON *a = cJSON_CreateObject();
	struct gw_side *s;

	cJSON_AddStringToObject(a, "op", "resize");
	cJSON_AddStringToObject(a, "id", r->cid);
	cJSON_AddNumberToObject(a, "cols", (double)cols);
	cJSON_AddNumberToObject(a, "rows", (double)rows);
	s = gw_side_open(r, a, 0);
	if (!s) {
		gw_ws_fail(r, 503, "no_capacity", "runner unavailable");
		return;
	}
	r->resize_side = s;
	r->http_rx_paused = 1;
	lws_rx_flow_control(r->wsi, 0);
}

static int on_frame(struct gw_req *r, const struct sbx_frame *f)
{
	struct sbx_err err = { 0 };
	cJSON *o;
	const cJSON *t;

	if (f->type == SBX_FRAME_STDOUT || f->type == SBX_FRAME_STDERR) {
		if (gw_ws_queue_bin(r, f->type, f->payload, f->len))
			return gw_resp_error(r, 500, "internal", "out of memory");
		return 0;
	}
	if (f->type != SBX_FRAME_JSON ||
	    !(o = sbx_json_parse_object(f->payload, f->len, &err)))
		return gw_resp_error(r, 502, "internal", "bad frame from the sandbox");
	if (!r->op_state) {           /* the attach or exec reply */
		if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "ok"))) {
			gw_resp_runner_error(r, o);
			cJSON_Delete(o);
			return -1;
		}
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
		if (r->ws == GW_WS_PTY && cJSON_IsString(id)) {
			snprintf(r->cid, sizeof r->cid, "%s", id->valuestring);
			r->vh->m.commands_started++;
			if (r->pending_cols)
				send_resize(r, r->pending_cols, r->pending_rows);
		}
		r->op_state = 1;
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

void gw_stream_start(struct gw_req *r)
{
	int64_t since = 0;
	cJSON *a;

	if (gw_query_i64(r, "since", 0, INT64_MAX / 2, &since) < 0)
		return;
	a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "op", "attach");
	cJSON_AddStringToObject(a, "id", r->cid);
	cJSON_AddNumberToObject(a, "offset", (double)since);
	gw_up_open(r, gw_connect_req(r), a, on_frame);
}

void gw_pty_start(struct gw_req *r)
{
	char c[GW_QUERY_CMD_MAX + 1] = "";
	int64_t cols = 80, rows = 24;
	cJSON *a, *args;

	if (gw_query_i64(r, "cols", 1, 1000, &cols) < 0 ||
	    gw_query_i64(r, "rows", 1, 1000, &rows) < 0 ||
	    gw_query_str(r, "cmd", c, sizeof c) < 0)
		return;
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
	gw_up_open(r, gw_connect_req(r), a, on_frame);
}

/* A stream opened with a read-only token may not drive the command:
 * the session ends with close 4403 (a terminal needed its own scope to
 * open at all). 1 when refused. */
static int needs_write(struct gw_req *r, const char *what)
{
	char msg[160];

	if (r->ws == GW_WS_PTY || (r->scope & GW_SCOPE_WRITE))
		return 0;
	snprintf(msg, sizeof msg, "%s needs a token with the write scope", what);
	gw_up_close(r);
	gw_ws_fail(r, 403, "forbidden", msg);
	return 1;
}

/* Binary input from the client (tag already stripped). */
void gw_session_input(struct gw_req *r, const void *p, size_t n)
{
	if (needs_write(r, "stdin"))
		return;
	if (r->ws == GW_WS_PTY) {
		if (gw_up_send(r, SBX_FRAME_STDIN, p, n))
			gw_ws_fail(r, 500, "internal", "out of memory");
		return;
	}
	if (!r->stdin_side) {
		cJSON *a = cJSON_CreateObject();
		cJSON_AddStringToObject(a, "op", "stdin");
		cJSON_AddStringToObject(a, "id", r->cid);
		r->stdin_side = gw_side_open(r, a, 1);
		if (!r->stdin_side) {
			gw_ws_fail(r, 503, "no_capacity", "runner unavailable");
			return;
		}
	}
	if (gw_side_send(r->stdin_side, SBX_FRAME_STDIN, p, n))
		gw_ws_fail(r, 500, "internal", "out of memory");
}

static void pace(struct gw_req *r, int paused)
{
	r->ws_paused = paused;
	if (paused && r->up && !r->up_rx_paused) {
		r->up_rx_paused = 1;
		lws_rx_flow_control(r->up, 0 | LWS_RXFLOW_REASON_FLAG_PROCESS_NOW);
	} else if (!paused) {
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
	} else if (!strcmp(type, "stdin_eof") && r->ws == GW_WS_STREAM) {
		if (r->stdin_side) {
			if (gw_side_send(r->stdin_side, SBX_FRAME_EOF, NULL, 0))
				gw_ws_fail(r, 500, "internal", "out of memory");
			return;
		}
		a = cJSON_CreateObject();
		cJSON_AddStringToObject(a, "op", "stdin_eof");
		cJSON_AddStringToObject(a, "id", r->cid);
		side_op(r, a);
	} else if (!strcmp(type, "resize") && r->ws == GW_WS_PTY) {
		int64_t cols, rows;
		if (sbx_json_get_i64(o, "cols", 1, 1000, &cols, &err) <= 0 ||
		    sbx_json_get_i64(o, "rows", 1, 1000, &rows, &err) <= 0) {
			gw_ws_error(r, "invalid", err.msg[0] ? err.msg : "cols and rows are required");
			return;
		}
		if (!r->cid[0]) {   /* before the shell started: sent once it has */
			r->pending_cols = cols;
			r->pending_rows = rows;
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
