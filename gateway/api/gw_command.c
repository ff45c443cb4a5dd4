/* Commands: exec (detached, or waited for with output collected up to
 * GW_OUTPUT_CAP per stream and a *_truncated flag), status/wait/list, kill,
 * stdin. Each is one agent connection through the runner's `connect`. */
#include <stdio.h>
#include <string.h>
#include "../core/gw.h"


/* Output as JSON text: bytes that are not UTF-8, and NUL (which a cJSON
 * string cannot hold), become U+FFFD; with "encoding":"base64" the exact
 * bytes are given instead. */
static void add_text(struct gw_req *r, cJSON *o, const char *name, struct sbx_buf *b)
{
	char *s = r->op.b64 ? sbx_text_base64_str(sbx_buf_head(b), b->len) :
				sbx_text_utf8(sbx_buf_head(b), b->len);
	cJSON_AddStringToObject(o, name, s ? s : "");
	free(s);
}

static void collect(struct sbx_buf *b, int *trunc, const struct sbx_frame *f)
{
	size_t room = GW_OUTPUT_CAP - b->len;
	size_t n = f->len < room ? f->len : room;
	if (n < f->len)
		*trunc = 1;
	if (n && sbx_buf_append(b, f->payload, n))
		*trunc = 1;
}

static int on_exec(struct gw_req *r, const struct sbx_frame *f)
{
	cJSON *o;
	if (r->op.phase == GW_OP_FIRST) {     /* the exec reply */
		if (!(o = gw_reply_json(r, f, 1, "agent frame")))
			return -1;
		r->vh->m.commands_started++;
		cJSON_DeleteItemFromObjectCaseSensitive(o, "ok");
		cJSON_DeleteItemFromObjectCaseSensitive(o, "offset");
		if (r->op.mode == GW_OP_EXEC_DETACHED) {
			cJSON_AddStringToObject(o, "status", "running");
			gw_resp_json(r, 201, o);
			return 1;
		}
		r->op.acc = o;
		r->op.phase = GW_OP_STREAMING;
		sbx_buf_init(&r->op.out, 0);
		sbx_buf_init(&r->op.err, 0);
		return 0;
	}
	if (f->type == SBX_FRAME_STDOUT || f->type == SBX_FRAME_STDERR) {
		int e = f->type == SBX_FRAME_STDERR;
		if (e)
			collect(&r->op.err, &r->op.err_trunc, f);
		else
			collect(&r->op.out, &r->op.out_trunc, f);
		if (r->on_output)   /* MCP progress notifications */
			r->on_output(r, e, f->payload, f->len);
		return 0;
	}
	if (!(o = gw_reply_json(r, f, 0, "agent frame")))
		return -1;
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "type");
	if (cJSON_IsString(t) && !strcmp(t->valuestring, "truncated")) {
		r->op.out_trunc = r->op.err_trunc = 1;
		cJSON_Delete(o);
		return 0;
	}
	if (!cJSON_IsString(t) || strcmp(t->valuestring, "exit")) {
		cJSON_Delete(o);
		return 0;
	}
	cJSON *res = cJSON_CreateObject();
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(r->op.acc, "id");
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(r->op.acc, "started_at");
	cJSON_AddStringToObject(res, "id", cJSON_IsString(id) ? id->valuestring : "");
	cJSON_AddStringToObject(res, "status", "exited");
	cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(o, "exit_code");
	cJSON_AddItemToObject(res, "exit_code", v ? v : cJSON_CreateNull());
	v = cJSON_DetachItemFromObjectCaseSensitive(o, "signal");
	cJSON_AddItemToObject(res, "signal", v ? v : cJSON_CreateNull());
	add_text(r, res, "stdout", &r->op.out);
	add_text(r, res, "stderr", &r->op.err);
	if (r->op.b64)
		cJSON_AddStringToObject(res, "encoding", "base64");
	cJSON_AddBoolToObject(res, "stdout_truncated", r->op.out_trunc);
	cJSON_AddBoolToObject(res, "stderr_truncated", r->op.err_trunc);
	int64_t now = sbx_now_ms();
	cJSON_AddNumberToObject(res, "duration_ms",
		cJSON_IsNumber(st) ? (double)(now - (int64_t)st->valuedouble) : 0);
	cJSON_Delete(o);
	gw_resp_json(r, 200, res);
	return 1;
}

static const char *const exec_fields[] = { "cmd", "args", "cwd", "env", "timeout_ms" };

void gw_cmd_exec(struct gw_req *r, cJSON *body)
{
	struct sbx_err err = { 0 };
	const char *cmd = NULL;
	int sudo = 0, detached = 0;
	const char *enc = NULL;
	/* no string of an exec is data: a NUL in cmd, args, cwd or env is
	 * refused by name, never passed on (lib/sbx_json.h) */
	if (sbx_json_refuse_nul(body, &err) < 0 ||
	    sbx_json_get_str(body, "cmd", &cmd, &err) < 0 ||
	    sbx_json_get_str(body, "encoding", &enc, &err) < 0 ||
	    sbx_json_get_bool(body, "sudo", &sudo, &err) < 0 ||
	    sbx_json_get_bool(body, "detached", &detached, &err) < 0) {
		cJSON_Delete(body);
		gw_resp_error(r, 422, "invalid", "%s", err.msg);
		return;
	}
	if (!cmd || !*cmd) {
		cJSON_Delete(body);
		gw_resp_error(r, 422, "invalid", "cmd is required");
		return;
	}
	if (enc && strcmp(enc, "base64") && strcmp(enc, "text")) {
		cJSON_Delete(body);
		gw_resp_error(r, 422, "invalid", "encoding is base64 or text");
		return;
	}
	r->op.b64 = enc && !strcmp(enc, "base64");
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "op", "exec");
	gw_json_move_fields(a, body, exec_fields, sizeof exec_fields / sizeof exec_fields[0]);
	cJSON_Delete(body);
	if (!cJSON_GetObjectItemCaseSensitive(a, "cwd"))
		cJSON_AddStringToObject(a, "cwd", "/home/sandbox");
	cJSON_AddNumberToObject(a, "uid", sudo ? 0 : 1000);
	cJSON_AddNumberToObject(a, "gid", sudo ? 0 : 1000);
	/* detached commands get a stdin pipe, fed by .../stdin and streams */
	cJSON_AddBoolToObject(a, "stdin", detached && !r->no_stdin);
	cJSON_AddBoolToObject(a, "attach", !detached);
	r->op.mode = detached ? GW_OP_EXEC_DETACHED : GW_OP_EXEC_WAITED;
	gw_req_agent(r, a, on_exec);
}

static int on_simple(struct gw_req *r, const struct sbx_frame *f)
{
	cJSON *o = gw_reply_json(r, f, 1, "agent frame");
	if (!o)
		return -1;
	cJSON_DeleteItemFromObjectCaseSensitive(o, "ok");
	if (r->op.wrap[0]) {
		cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(o, r->op.wrap);
		cJSON_Delete(o);
		o = v ? v : cJSON_CreateObject();
	}
	gw_resp_json(r, 200, o);
	return 1;
}

void gw_cmd_simple(struct gw_req *r, cJSON *agent_req, const char *wrap)
{
	if (!cJSON_GetObjectItemCaseSensitive(agent_req, "op"))
		cJSON_AddStringToObject(agent_req, "op", "commands");
	snprintf(r->op.wrap, sizeof r->op.wrap, "%s", wrap ? wrap : "");
	gw_req_agent(r, agent_req, on_simple);
}

void gw_cmd_kill(struct gw_req *r, cJSON *body)
{
	struct sbx_err err = { 0 };
	const char *sig = "SIGTERM";
	if (sbx_json_refuse_nul(body, &err) < 0 ||
	    sbx_json_get_str(body, "signal", &sig, &err) < 0) {
		cJSON_Delete(body);
		gw_resp_error(r, 422, "invalid", "%s", err.msg);
		return;
	}
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "op", "signal");
	cJSON_AddStringToObject(a, "id", r->cid);
	cJSON_AddStringToObject(a, "signal", sig);
	cJSON_Delete(body);
	gw_cmd_simple(r, a, NULL);
}

/* POST .../stdin: the body goes out as STDIN frames. With ?eof=1 an EOF
 * frame follows and the agent's {"ok":true} answers; without it the
 * gateway answers once the bytes were handed to the agent. */
void gw_cmd_stdin_start(struct gw_req *r)
{
	int eof = 0;
	if (gw_query_bool(r, "eof", &eof) < 0)
		return;
	r->op.mode = eof ? GW_OP_STDIN_EOF : GW_OP_STDIN_OPEN;
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "op", "stdin");
	cJSON_AddStringToObject(a, "id", r->cid);
	snprintf(r->op.wrap, sizeof r->op.wrap, "%s", "");
	gw_req_agent(r, a, on_simple);
}

void gw_cmd_stdin_data(struct gw_req *r, const void *in, size_t len)
{
	if (gw_req_send(r, SBX_FRAME_STDIN, in, len))
		gw_resp_error(r, 500, "internal", "out of memory");
}

void gw_cmd_stdin_done(struct gw_req *r)
{
	if (r->resp_ready)
		return;
	if (r->op.mode == GW_OP_STDIN_EOF) {
		gw_req_send(r, SBX_FRAME_EOF, NULL, 0);
		return;
	}
	/* no EOF: the agent keeps stdin open; answer when the bytes are out */
	r->op.phase = GW_OP_ANSWER_WHEN_SENT;
	gw_up_want_write(&r->up);
}
