/* What a WebSocket session does upstream, as a codec over the service
 * layer. A command stream is svc_logs from `since`, following: output
 * chunks become binary messages, the exit a text message and a close
 * 1000; stdin, kill and stdin_eof from the client go through side
 * operations (below), so any number of subscribers can watch one command.
 * A terminal is svc_pty: keystrokes go up the same upstream; resize is a
 * side operation; pause and resume stop and restart reading it (the agent
 * then stops reading the PTY, so the program blocks instead of flooding a
 * slow browser). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gw_ws.h"

/* A side operation: an svc call beside the session's main stream (kill,
 * resize, stdin_eof: answered once; the stdin writer of a command stream:
 * open until the command exits or the session ends). Its upstream is a
 * child of the session's wsi. A failure reaches the client as an error
 * text message; the session goes on. */
struct gw_side {
	struct svc_collect k;
	struct gw_ws_session *s;
	struct gw_side *next;       /* on s->sides */
};

static void side_free(struct gw_side *side)
{
	struct gw_side **p = &side->s->sides;

	while (*p && *p != side)
		p = &(*p)->next;
	if (*p)
		*p = side->next;
	svc_collect_free(&side->k);
	free(side);
}

/* From the event loop, never inside the upstream's own callback. */
static void side_done(struct svc_collect *k, struct svc_answer *a)
{
	struct gw_side *side = lws_container_of(k, struct gw_side, k);
	struct gw_ws_session *s = side->s;

	if (a->status >= 400 && !k->call.parent_closed)
		gw_ws_error(s, a->code, a->msg);
	if (s->stdin_side == side)
		s->stdin_side = NULL;
	if (s->resize_side == side)
		s->resize_side = NULL;
	side_free(side);
	gw_ws_input_flow(s);
}

static void side_drained(struct svc_collect *k)
{
	gw_ws_input_flow(lws_container_of(k, struct gw_side, k)->s);
}

static struct gw_side *side_new(struct gw_ws_session *s)
{
	struct gw_side *side = calloc(1, sizeof *side);

	if (!side) {
		gw_ws_fail(s, 500, "internal", "out of memory");
		return NULL;
	}
	svc_collect_init(&side->k, s->vh, s->wsi, s, s->key);
	svc_collect_step(&side->k, side_done);
	side->k.drained = side_drained;
	snprintf(side->k.call.sid, sizeof side->k.call.sid, "%s", s->sid);
	snprintf(side->k.call.cid, sizeof side->k.call.cid, "%s", s->cid);
	side->s = s;
	side->next = s->sides;
	s->sides = side;
	return side;
}

size_t gw_session_side_queued(const struct gw_side *side)
{
	return side ? gw_up_queued(&side->k.call.up) : 0;
}

void gw_session_detach(struct gw_ws_session *s)
{
	while (s->sides)
		side_free(s->sides);
	s->stdin_side = s->resize_side = NULL;
	svc_call_reset(&s->main);
}

/* One agent request beside the stream (consumed). */
static struct gw_side *side_op(struct gw_ws_session *s, cJSON *a)
{
	struct gw_side *side = side_new(s);

	if (side)
		svc_agent_op(&side->k.call, a, NULL);
	else
		cJSON_Delete(a);
	return side;
}

/* A resize is its own agent connection, and keystrokes typed after it go
 * up the terminal's: they could reach the shell first (`stty size` typed
 * right after a resize showed the old size). So the client is not read
 * while a resize is in flight; its answer resumes it. */
static void send_resize(struct gw_ws_session *s, int64_t cols, int64_t rows)
{
	cJSON *a = cJSON_CreateObject();

	cJSON_AddStringToObject(a, "op", "resize");
	cJSON_AddStringToObject(a, "id", s->cid);
	cJSON_AddNumberToObject(a, "cols", (double)cols);
	cJSON_AddNumberToObject(a, "rows", (double)rows);
	if (!(s->resize_side = side_op(s, a)))
		return;
	s->rx_paused = 1;
	lws_rx_flow_control(s->wsi, 0);
}

/* ---- the session's own stream: its sink ---- */

static struct gw_ws_session *session_of(struct svc_call *c)
{
	return lws_container_of(c, struct gw_ws_session, main);
}

static void main_reply(struct svc_call *c, int status, cJSON *body)
{
	(void)c;
	(void)status;
	cJSON_Delete(body);   /* a stream answers by streaming or failing */
}

/* lws closes the upstream when it closes the session itself (a protocol
 * error of the client's, after its close frame, which nothing may
 * follow): finish by closing, with nothing more queued. 1 if so. */
static int session_gone(struct gw_ws_session *s, struct svc_call *c)
{
	if (!c->parent_closed)
		return 0;
	s->closing = s->drop = 1;
	lws_callback_on_writable(s->wsi);
	return 1;
}

static void main_fail(struct svc_call *c, int status, const char *code, const char *msg)
{
	struct gw_ws_session *s = session_of(c);

	if (!session_gone(s, c))
		gw_ws_fail(s, status, code, msg);
}

/* The attach or exec reply: a terminal learns its command's id. */
static int main_begin(struct svc_call *c, int64_t size)
{
	struct gw_ws_session *s = session_of(c);

	(void)size;
	if (s->kind == GW_WS_PTY && c->cid[0]) {
		snprintf(s->cid, sizeof s->cid, "%s", c->cid);
		if (s->pending_cols)
			send_resize(s, s->pending_cols, s->pending_rows);
	}
	return 0;
}

static int main_data(struct svc_call *c, int stream, const void *p, size_t n)
{
	struct gw_ws_session *s = session_of(c);

	if (!gw_ws_queue_bin(s, stream == SVC_STDERR ? SBX_FRAME_STDERR : SBX_FRAME_STDOUT, p, n))
		return 0;
	gw_ws_fail(s, 500, "internal", "out of memory");
	return -1;
}

/* The agent's own message: {"type":"exit","exit_code","signal"} or
 * {"type":"truncated","bytes"}. */
static int main_event(struct svc_call *c, const char *type, const cJSON *o)
{
	cJSON *m = cJSON_CreateObject();
	const cJSON *it;

	cJSON_AddStringToObject(m, "type", type);
	if (!strcmp(type, "truncated")) {
		it = cJSON_GetObjectItemCaseSensitive(o, "truncated");
		cJSON_AddNumberToObject(m, "bytes", cJSON_IsNumber(it) ? it->valuedouble : 0);
	} else {
		cJSON_ArrayForEach(it, o)
			cJSON_AddItemToObject(m, it->string, cJSON_Duplicate(it, 1));
	}
	gw_ws_queue_json(session_of(c), m);
	return 0;
}

/* Cut short: the sandbox side went away (EOF or an error on the
 * socket), or lws closed the session. */
static void main_end(struct svc_call *c, int cut)
{
	struct gw_ws_session *s = session_of(c);

	if (s->closing)
		return;
	if (!cut) {
		gw_ws_queue_close(s, 1000, "");
	} else if (!session_gone(s, c)) {
		s->up_lost = 1;
		lws_callback_on_writable(s->wsi);
	}
}

/* Reads of the agent stop while the client's queue is full or the client
 * asked for a pause (gw_ws_output_flow resumes them). */
static int main_full(struct svc_call *c)
{
	struct gw_ws_session *s = session_of(c);

	return s->q.len >= GW_QUEUE_HIGH || s->paused;
}

static void main_drained(struct svc_call *c)
{
	gw_ws_input_flow(session_of(c));
}

static void main_flush(struct svc_call *c)
{
	gw_ws_flush(session_of(c));
}

static const struct svc_sink main_sink = {
	.reply = main_reply, .fail = main_fail, .begin = main_begin, .data = main_data,
	.event = main_event, .end = main_end, .full = main_full, .drained = main_drained,
	.flush = main_flush,
};

void gw_session_init(struct gw_ws_session *s)
{
	svc_call_init(&s->main, s->vh, s->wsi, &main_sink, s, s->key);
	s->main.pieces = 1;   /* output joins in the queue anyway (gw_ws.c) */
	snprintf(s->main.sid, sizeof s->main.sid, "%s", s->sid);
	snprintf(s->main.cid, sizeof s->main.cid, "%s", s->cid);
}

void gw_session_start(struct gw_ws_session *s)
{
	if (s->kind == GW_WS_PTY)
		svc_pty(&s->main, s->cmd, (int)s->cols, (int)s->rows);
	else
		svc_logs(&s->main, s->since, 1);
}

/* ---- its arguments, from the upgrade's query: a refused argument ends
 * the session with close 4422 ---- */

static int query_refused(struct gw_ws_session *s, int rc, const char *why)
{
	if (rc < 0)
		gw_ws_fail(s, 422, "invalid", why);
	return rc < 0;
}

int gw_session_query(struct gw_ws_session *s)
{
	struct lws *wsi = s->wsi;
	char why[160];

	if (s->kind != GW_WS_PTY)
		return query_refused(s, gw_query_num(wsi, "since", 0, INT64_MAX / 2, &s->since, why,
						     sizeof why), why) ? -1 : 0;
	s->cols = 80;
	s->rows = 24;
	if (query_refused(s, gw_query_num(wsi, "cols", 1, 1000, &s->cols, why, sizeof why), why) ||
	    query_refused(s, gw_query_num(wsi, "rows", 1, 1000, &s->rows, why, sizeof why), why) ||
	    query_refused(s, gw_query_get(wsi, "cmd", s->cmd, sizeof s->cmd, why, sizeof why), why))
		return -1;
	return 0;
}

/* ---- from the client ---- */

/* A stream opened with a read-only token may not drive the command:
 * the session ends with close 4403 (a terminal needed its own scope to
 * open at all). 1 when refused. */
static int needs_write(struct gw_ws_session *s, const char *what)
{
	char msg[160];

	if (s->kind == GW_WS_PTY || (s->scope & GW_SCOPE_WRITE))
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
		if (svc_send(&s->main, SBX_FRAME_STDIN, p, n))
			gw_ws_fail(s, 500, "internal", "out of memory");
		return;
	}
	if (!s->stdin_side) {
		if (!(s->stdin_side = side_new(s)))
			return;
		svc_stdin_stream(&s->stdin_side->k.call);
	}
	svc_stdin_data(&s->stdin_side->k.call, p, n);
}

static void pace(struct gw_ws_session *s, int paused)
{
	s->paused = paused;
	if (paused)
		gw_up_pause(&s->main.up, 1);
	else
		gw_ws_output_flow(s);
}

/* A text message from the client, parsed; type is its "type". */
void gw_session_message(struct gw_ws_session *s, const char *type, const cJSON *o)
{
	struct sbx_err err = { 0 };
	const char *cid = s->cid;
	cJSON *a;

	if ((!strcmp(type, "kill") || !strcmp(type, "stdin_eof")) && needs_write(s, type))
		return;
	if (!strcmp(type, "kill")) {
		struct gw_side *side;
		if (!cid[0])
			return;
		if ((side = side_new(s)))
			svc_kill(&side->k.call, cJSON_Duplicate(o, 1));
	} else if (!strcmp(type, "stdin_eof") && s->kind == GW_WS_STREAM) {
		if (s->stdin_side) {
			if (svc_send(&s->stdin_side->k.call, SBX_FRAME_EOF, NULL, 0))
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
