/* Commands: POST .../cmd (detached, or waited with logs as ndjson), GET
 * .../cmd/{id} (?wait=true), .../logs (ndjson from the start, live until
 * the command ends), .../kill. Every command is started detached with
 * stdin on /dev/null (the SDK has no stdin); a waited one is then
 * followed on r itself through gw_logs.c, whose lines it writes in the
 * SDK's form ({"stream","data"} and the finished {"command"}). The data
 * strings are exact for UTF-8: a character split across two chunks is
 * held until its last byte came. Bytes that are not UTF-8 become U+FFFD
 * (the SDK's data is a string; docs/vercel.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compat_vercel.h"
#include "../http/gw_rest_sink.h"

/* Bytes at the end of p[0..n) that begin a UTF-8 sequence not complete yet. */
static size_t incomplete_tail(const unsigned char *p, size_t n)
{
	for (size_t k = 1; k <= 3 && k <= n; k++) {
		unsigned char b = p[n - k];
		if ((b & 0xc0) == 0x80)
			continue;
		size_t need = b >= 0xf0 && b < 0xf8 ? 4 : b >= 0xe0 && b < 0xf0 ? 3 :
			      b >= 0xc0 && b < 0xe0 ? 2 : 1;
		return need > k ? k : 0;
	}
	return 0;
}

static int line(struct gw_req *r, int e, const unsigned char *p, size_t n)
{
	static const char out[] = "{\"stream\":\"stdout\",\"data\":\"";
	static const char err[] = "{\"stream\":\"stderr\",\"data\":\"";
	if (!n)
		return 0;
	if (sbx_buf_append(&r->resp, e ? err : out, sizeof out - 1) ||
	    sbx_text_json(&r->resp, p, n) || sbx_buf_append(&r->resp, "\"}\n", 3))
		return -1;
	return 0;
}

static int on_chunk(struct gw_req *r, int e, const unsigned char *p, size_t n)
{
	struct cv_call *c = r->front.state;
	unsigned char *joined = NULL;
	size_t total, keep;
	int rc;

	if (!c || !c->want_logs)
		return 0;
	if (c->ncarry[e]) {
		if (!(joined = malloc(c->ncarry[e] + n)))
			return -1;
		memcpy(joined, c->carry[e], c->ncarry[e]);
		memcpy(joined + c->ncarry[e], p, n);
		total = c->ncarry[e] + n;
		p = joined;
	} else {
		total = n;
	}
	keep = incomplete_tail(p, total);
	rc = line(r, e, p, total - keep);
	memcpy(c->carry[e], p + total - keep, keep);
	c->ncarry[e] = keep;
	free(joined);
	return rc;
}

static int on_finish(struct gw_req *r, const cJSON *exit)
{
	struct cv_call *c = r->front.state;
	char *s;
	int rc = 0;

	if (!c)
		return 0;
	for (int e = 0; e < 2; e++) {   /* a sequence never completed: U+FFFD */
		if (c->want_logs && line(r, e, c->carry[e], c->ncarry[e]))
			return -1;
		c->ncarry[e] = 0;
	}
	if (!c->keep)   /* .../logs: the stream just ends */
		return 0;
	cJSON *cmd = cJSON_GetObjectItemCaseSensitive(c->keep, "command");
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(cmd, "startedAt");
	cJSON_ReplaceItemInObjectCaseSensitive(cmd, "exitCode", cJSON_CreateNumber(cv_exit_code(
		cJSON_GetObjectItemCaseSensitive(exit, "exit_code"),
		cJSON_GetObjectItemCaseSensitive(exit, "signal"))));
	cJSON_AddNumberToObject(cmd, "durationMs", (double)sbx_now_ms() -
				(cJSON_IsNumber(st) ? st->valuedouble : 0));
	s = sbx_json_print(c->keep);
	if (!s || sbx_buf_append(&r->resp, s, strlen(s)) || sbx_buf_append(&r->resp, "\n", 1))
		rc = -1;
	cJSON_free(s);
	return rc;
}

/* The command's output as the SDK's ndjson lines on r itself: a sink of
 * the service layer's logs (svc_logs) with REST's reply, fail and end. */
static int logs_begin(struct svc_call *sc, int64_t size)
{
	(void)size;
	gw_resp_start_stream(sc->owner, 200, "application/x-ndjson", -1);
	return 0;
}

static int logs_data(struct svc_call *sc, int stream, const void *p, size_t n)
{
	struct gw_req *r = sc->owner;
	int rc = on_chunk(r, stream == SVC_STDERR, p, n);

	gw_keepalive_lines_sent(r);
	gw_req_wake(r);
	return rc;
}

static int logs_event(struct svc_call *sc, const char *type, const cJSON *o)
{
	struct gw_req *r = sc->owner;
	int rc;

	if (strcmp(type, "exit"))   /* the SDK's lines have no form for a gap */
		return 0;
	rc = on_finish(r, o);
	gw_req_wake(r);
	return rc;
}

static const struct svc_sink logs_sink = {
	.reply = gw_rest_reply, .fail = gw_rest_fail, .begin = logs_begin, .data = logs_data,
	.event = logs_event, .end = gw_rest_end, .full = gw_rest_full,
};

/* Follow the command's output on r itself (from offset 0, until it ends). */
static void follow(struct gw_req *r, struct cv_call *c)
{
	struct svc_call *sc;

	snprintf(r->cid, sizeof r->cid, "%s", c->cid);
	if (!(sc = gw_rest_call(r, &logs_sink))) {
		gw_resp_error(r, 500, "internal", "out of memory");
		return;
	}
	snprintf(sc->cid, sizeof sc->cid, "%s", c->cid);
	svc_logs(sc, 0, 1);
}

static void started(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	const cJSON *b = c->body;
	const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a->json, "id"));
	const cJSON *at = cJSON_GetObjectItemCaseSensitive(a->json, "started_at");
	cJSON *ac;
	char *s;

	if (a->status >= 400 || !id) {
		cv_fail_answer(r, a);
		return;
	}
	snprintf(c->cid, sizeof c->cid, "%s", id);
	cv_cmd_remember(c->sid, id, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "command")),
			cJSON_GetObjectItemCaseSensitive(b, "args"),
			cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c->keep, "cwd")),
			cJSON_IsNumber(at) ? at->valuedouble : (double)sbx_now_ms());
	ac = cJSON_CreateObject();
	cJSON_AddStringToObject(ac, "id", id);
	cJSON_AddStringToObject(ac, "status", "running");
	if (cJSON_IsNumber(at))
		cJSON_AddNumberToObject(ac, "started_at", at->valuedouble);
	cJSON *cmd = cv_command(c->sid, ac);
	cJSON_Delete(ac);
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(b, "wait"))) {
		gw_resp_json(r, 200, cmd);
		return;
	}
	/* waited: the command line now, output lines as they come, the
	 * finished command last */
	cJSON_Delete(c->keep);
	c->keep = cmd;
	c->want_logs = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(b, "logs"));
	s = sbx_json_print(cmd);
	sbx_buf_reset(&r->resp);
	if (!s || sbx_buf_append(&r->resp, s, strlen(s)) || sbx_buf_append(&r->resp, "\n", 1)) {
		cJSON_free(s);
		gw_resp_error(r, 500, "internal", "out of memory");
		return;
	}
	cJSON_free(s);
	gw_keepalive_http_start(r, 1);
	r->ka.text = "{\"stream\":\"stdout\",\"data\":\"\"}\n";
	follow(r, c);
}

static int str_or_absent(const cJSON *b, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(b, k);
	return !v || cJSON_IsNull(v) || cJSON_IsString(v);
}

void cv_cmd_run(struct gw_req *r, struct cv_call *c)
{
	const cJSON *b = c->body, *v;
	const char *cmd = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "command"));
	const char *cwd = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "cwd"));
	char path[4096];
	struct svc_call *s;
	cJSON *req;

	if (!cmd || !*cmd)
		return (void)gw_resp_error(r, 422, "invalid", "command is required");
	if (!str_or_absent(b, "cwd"))
		return (void)gw_resp_error(r, 422, "invalid", "cwd must be a string");
	/* a relative cwd is the SDK's default cwd's */
	if (cv_resolve(r, cwd ? cwd : ".", NULL, path, sizeof path))
		return;
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "cmd", cmd);
	if ((v = cJSON_GetObjectItemCaseSensitive(b, "args")) && !cJSON_IsNull(v))
		cJSON_AddItemToObject(req, "args", cJSON_Duplicate(v, 1));
	if ((v = cJSON_GetObjectItemCaseSensitive(b, "env")) && !cJSON_IsNull(v))
		cJSON_AddItemToObject(req, "env", cJSON_Duplicate(v, 1));
	if ((v = cJSON_GetObjectItemCaseSensitive(b, "sudo")) && !cJSON_IsNull(v))
		cJSON_AddItemToObject(req, "sudo", cJSON_Duplicate(v, 1));
	if ((v = cJSON_GetObjectItemCaseSensitive(b, "timeout")) && !cJSON_IsNull(v))
		cJSON_AddItemToObject(req, "timeout_ms", cJSON_Duplicate(v, 1));
	cJSON_AddStringToObject(req, "cwd", path);
	cJSON_AddTrueToObject(req, "detached");
	c->keep = cJSON_CreateObject();
	cJSON_AddStringToObject(c->keep, "cwd", path);
	s = cv_step(c, started);
	s->no_stdin = 1;
	svc_exec(s, req);   /* checks the fields as /v1 does */
}

static void shaped(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	if (a->status >= 400)
		cv_fail_answer(r, a);
	else
		gw_resp_json(r, 200, cv_command(c->sid, a->json));
}

static void status_of(struct cv_call *c, const char *op, cv_step_fn next)
{
	struct svc_call *s = cv_step(c, next);
	cJSON *o;
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "op", op);
	cJSON_AddStringToObject(o, "id", c->cid);
	svc_agent_op(s, o, "command");
}

void cv_cmd_get(struct gw_req *r, struct cv_call *c)
{
	status_of(c, cv_query_true(r, "wait", 1) ? "wait" : "status", shaped);
}

static void logs_known(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	if (a->status >= 400) {
		cv_fail_answer(r, a);
		return;
	}
	c->want_logs = 1;
	follow(r, c);
}

void cv_cmd_logs(struct gw_req *r, struct cv_call *c)
{
	(void)r;   /* a row's operation: its answer comes by c */
	/* asked first so an unknown command is a 404 and a stopped sandbox a 410 */
	status_of(c, "status", logs_known);
}

static void killed(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	/* 409: it had exited already, which the command's status shows */
	if (a->status >= 400 && a->status != 409) {
		cv_fail_answer(r, a);
		return;
	}
	c->session_op = 1;
	status_of(c, "status", shaped);
}

void cv_cmd_kill(struct gw_req *r, struct cv_call *c)
{
	const cJSON *sig = cJSON_GetObjectItemCaseSensitive(c->body, "signal");
	char name[24];
	struct svc_call *s;
	cJSON *b;

	if (cJSON_IsNumber(sig) && sig->valuedouble >= 1 && sig->valuedouble <= 64)
		snprintf(name, sizeof name, "%d", sig->valueint);
	else if (!sig || cJSON_IsNull(sig))
		snprintf(name, sizeof name, "SIGTERM");
	else if (cJSON_IsString(sig) && strlen(sig->valuestring) < sizeof name)
		snprintf(name, sizeof name, "%s", sig->valuestring);
	else
		return (void)gw_resp_error(r, 422, "invalid", "signal must be a signal number or name");
	c->session_op = 0;   /* a 409 here is an exited command */
	s = cv_step(c, killed);
	b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "signal", name);
	svc_kill(s, b);
}
