/* Commands: exec (detached, or waited for with output collected up to
 * GW_OUTPUT_CAP per stream and a *_truncated flag), status/wait/list, kill,
 * stdin. Each is one agent connection through the runner's `connect`. */
#include <stdio.h>
#include <string.h>
#include "svc.h"


/* Output as JSON text: bytes that are not UTF-8, and NUL (which a cJSON
 * string cannot hold), become U+FFFD; with "encoding":"base64" the exact
 * bytes are given instead. */
static void add_text(struct svc_call *c, cJSON *o, const char *name, struct sbx_buf *b)
{
	char *s = c->op.b64 ? sbx_text_base64_str(sbx_buf_head(b), b->len) :
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

static int on_exec(struct svc_call *c, const struct sbx_frame *f)
{
	cJSON *o;
	if (c->op.phase == GW_OP_FIRST) {     /* the exec reply */
		if (!(o = svc_reply_json(c, f, 1, "agent frame")))
			return -1;
		c->vh->m.commands_started++;
		cJSON_DeleteItemFromObjectCaseSensitive(o, "ok");
		cJSON_DeleteItemFromObjectCaseSensitive(o, "offset");
		if (c->op.mode == GW_OP_EXEC_DETACHED) {
			cJSON_AddStringToObject(o, "status", "running");
			svc_reply(c, 201, o);
			return 1;
		}
		c->op.acc = o;
		c->op.phase = GW_OP_STREAMING;
		sbx_buf_init(&c->op.out, 0);
		sbx_buf_init(&c->op.err, 0);
		return 0;
	}
	if (f->type == SBX_FRAME_STDOUT || f->type == SBX_FRAME_STDERR) {
		int e = f->type == SBX_FRAME_STDERR;
		if (e)
			collect(&c->op.err, &c->op.err_trunc, f);
		else
			collect(&c->op.out, &c->op.out_trunc, f);
		if (c->sink->data)   /* as it comes too (MCP progress notifications) */
			c->sink->data(c, e ? SVC_STDERR : SVC_STDOUT, f->payload, f->len);
		return 0;
	}
	if (!(o = svc_reply_json(c, f, 0, "agent frame")))
		return -1;
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "type");
	if (cJSON_IsString(t) && !strcmp(t->valuestring, "truncated")) {
		c->op.out_trunc = c->op.err_trunc = 1;
		cJSON_Delete(o);
		return 0;
	}
	if (!cJSON_IsString(t) || strcmp(t->valuestring, "exit")) {
		cJSON_Delete(o);
		return 0;
	}
	cJSON *res = cJSON_CreateObject();
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(c->op.acc, "id");
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(c->op.acc, "started_at");
	cJSON_AddStringToObject(res, "id", cJSON_IsString(id) ? id->valuestring : "");
	cJSON_AddStringToObject(res, "status", "exited");
	cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(o, "exit_code");
	cJSON_AddItemToObject(res, "exit_code", v ? v : cJSON_CreateNull());
	v = cJSON_DetachItemFromObjectCaseSensitive(o, "signal");
	cJSON_AddItemToObject(res, "signal", v ? v : cJSON_CreateNull());
	add_text(c, res, "stdout", &c->op.out);
	add_text(c, res, "stderr", &c->op.err);
	if (c->op.b64)
		cJSON_AddStringToObject(res, "encoding", "base64");
	cJSON_AddBoolToObject(res, "stdout_truncated", c->op.out_trunc);
	cJSON_AddBoolToObject(res, "stderr_truncated", c->op.err_trunc);
	int64_t now = sbx_now_ms();
	cJSON_AddNumberToObject(res, "duration_ms",
		cJSON_IsNumber(st) ? (double)(now - (int64_t)st->valuedouble) : 0);
	cJSON_Delete(o);
	svc_reply(c, 200, res);
	return 1;
}

static const char *const exec_fields[] = { "cmd", "args", "cwd", "env", "timeout_ms" };

void svc_exec(struct svc_call *c, cJSON *body)
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
		svc_fail(c, 422, "invalid", "%s", err.msg);
		return;
	}
	if (!cmd || !*cmd) {
		cJSON_Delete(body);
		svc_fail(c, 422, "invalid", "cmd is required");
		return;
	}
	if (enc && strcmp(enc, "base64") && strcmp(enc, "text")) {
		cJSON_Delete(body);
		svc_fail(c, 422, "invalid", "encoding is base64 or text");
		return;
	}
	c->op.b64 = enc && !strcmp(enc, "base64");
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "op", "exec");
	sbx_json_move(a, body, exec_fields, sizeof exec_fields / sizeof exec_fields[0]);
	cJSON_Delete(body);
	/* no cwd: the agent's default, /home/sandbox or the image's WorkingDir */
	cJSON_AddNumberToObject(a, "uid", sudo ? 0 : 1000);
	cJSON_AddNumberToObject(a, "gid", sudo ? 0 : 1000);
	/* detached commands get a stdin pipe, fed by .../stdin and streams */
	cJSON_AddBoolToObject(a, "stdin", detached && !c->no_stdin);
	cJSON_AddBoolToObject(a, "attach", !detached);
	c->op.mode = detached ? GW_OP_EXEC_DETACHED : GW_OP_EXEC_WAITED;
	svc_agent(c, a, on_exec);
}

static int on_simple(struct svc_call *c, const struct sbx_frame *f)
{
	cJSON *o = svc_reply_json(c, f, 1, "agent frame");
	if (!o)
		return -1;
	cJSON_DeleteItemFromObjectCaseSensitive(o, "ok");
	if (c->op.wrap[0]) {
		cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(o, c->op.wrap);
		cJSON_Delete(o);
		o = v ? v : cJSON_CreateObject();
	}
	svc_reply(c, 200, o);
	return 1;
}

void svc_agent_op(struct svc_call *c, cJSON *agent_req, const char *wrap)
{
	if (!cJSON_GetObjectItemCaseSensitive(agent_req, "op"))
		cJSON_AddStringToObject(agent_req, "op", "commands");
	snprintf(c->op.wrap, sizeof c->op.wrap, "%s", wrap ? wrap : "");
	svc_agent(c, agent_req, on_simple);
}

void svc_commands(struct svc_call *c)
{
	svc_agent_op(c, cJSON_CreateObject(), NULL);
}

void svc_command_get(struct svc_call *c, int wait)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "op", wait ? "wait" : "status");
	cJSON_AddStringToObject(o, "id", c->cid);
	svc_agent_op(c, o, "command");
}

void svc_kill(struct svc_call *c, cJSON *body)
{
	struct sbx_err err = { 0 };
	const char *sig = "SIGTERM";
	if (sbx_json_refuse_nul(body, &err) < 0 ||
	    sbx_json_get_str(body, "signal", &sig, &err) < 0) {
		cJSON_Delete(body);
		svc_fail(c, 422, "invalid", "%s", err.msg);
		return;
	}
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "op", "signal");
	cJSON_AddStringToObject(a, "id", c->cid);
	cJSON_AddStringToObject(a, "signal", sig);
	cJSON_Delete(body);
	svc_agent_op(c, a, NULL);
}

/* POST .../stdin: the body goes out as STDIN frames. With ?eof=1 an EOF
 * frame follows and the agent's {"ok":true} answers; without it the
 * gateway answers once the bytes were handed to the agent. */
void svc_stdin_start(struct svc_call *c, int eof)
{
	c->op.mode = eof ? GW_OP_STDIN_EOF : GW_OP_STDIN_OPEN;
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "op", "stdin");
	cJSON_AddStringToObject(a, "id", c->cid);
	snprintf(c->op.wrap, sizeof c->op.wrap, "%s", "");
	svc_agent(c, a, on_simple);
}

void svc_stdin_data(struct svc_call *c, const void *in, size_t len)
{
	if (svc_send(c, SBX_FRAME_STDIN, in, len))
		svc_fail(c, 500, "internal", "out of memory");
}

void svc_stdin_done(struct svc_call *c)
{
	if (c->answered)
		return;
	if (c->op.mode == GW_OP_STDIN_EOF) {
		svc_send(c, SBX_FRAME_EOF, NULL, 0);
		return;
	}
	/* no EOF: the agent keeps stdin open; answer when the bytes are out */
	c->op.phase = GW_OP_ANSWER_WHEN_SENT;
	gw_up_want_write(&c->up);
}

/* The agent answers each frame of an open stdin; only an error is news. */
static int on_stdin_stream(struct svc_call *c, const struct sbx_frame *f)
{
	cJSON *o = svc_reply_json(c, f, 0, "agent frame");
	const cJSON *code;

	if (!o)
		return -1;
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "ok"))) {
		cJSON_Delete(o);
		return 0;
	}
	code = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "error"),
						"code");
	if (!gw_up_queued(&c->up) && cJSON_IsString(code) &&
	    !strcmp(code->valuestring, "conflict"))
		svc_reply(c, 200, cJSON_CreateObject());
	else
		svc_runner_error(c, o);
	cJSON_Delete(o);
	return 1;
}

void svc_stdin_stream(struct svc_call *c)
{
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "op", "stdin");
	cJSON_AddStringToObject(a, "id", c->cid);
	svc_agent(c, a, on_stdin_stream);
}
