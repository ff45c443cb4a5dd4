/* The entry of the @vercel/sandbox surface: /v2/sandboxes... and
 * /v3/sandboxes. One function (compat_vercel_route) decides whether a
 * request is ours; then auth (Bearer = an API key; teamId/projectId in the
 * query are accepted and ignored), ownership, the body (JSON capped as on
 * /v1; fs/write's gzip streamed), and the call's steps. A step is one
 * operation of the service layer (svc.h) on the call's collecting sink;
 * its answer comes back whole, as values, to the step's continuation. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compat_vercel.h"
#include "gw_rest.h"
#include "sbx_log.h"

enum {
	CV_NONE, CV_CREATE, CV_LIST, CV_SESSIONS, CV_BOX_GET, CV_BOX_DELETE,
	CV_SESSION_GET, CV_STOP, CV_EXTEND, CV_NETWORK, CV_CMD_RUN, CV_CMD_GET,
	CV_CMD_LOGS, CV_CMD_KILL, CV_FS_WRITE, CV_FS_READ, CV_FS_MKDIR, CV_UNSUPPORTED,
	CV_NOT_ALLOWED,
};

static int id_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
}

/* The next path segment into out (empty when the path ended); -1 when it
 * holds other characters than an id's or is too long. */
static int seg(const char **p, char *out, size_t n)
{
	size_t k = 0;
	if (**p == '/')
		(*p)++;
	while (**p && **p != '/' && **p != '?') {
		if (!id_char(**p) || k + 1 >= n)
			return -1;
		out[k++] = *(*p)++;
	}
	out[k] = '\0';
	return 0;
}

static int is(const struct gw_req *r, const char *m)
{
	return !strcmp(r->method, m);
}

/* The operation of r's path and method (CV_NONE: no such endpoint). */
static int pick(struct gw_req *r, struct cv_call *c, const char **unsupported)
{
	const char *p = r->uri;
	char a[80], b[80], d[80];
	int v3 = !strncmp(p, "/v3/sandboxes", 13);

	p += 13;
	if (*p && *p != '/' && *p != '?')
		return CV_NONE;
	if (seg(&p, a, sizeof a))
		return CV_NONE;
	if (!a[0])
		return is(r, "POST") ? CV_CREATE : (!v3 && is(r, "GET")) ? CV_LIST : CV_NOT_ALLOWED;
	if (v3)
		return CV_NONE;
	if (!strcmp(a, "snapshots") || !strcmp(a, "drives")) {
		*unsupported = !strcmp(a, "drives") ? "drives" : "snapshots";
		return CV_UNSUPPORTED;
	}
	if (!strcmp(a, "sessions")) {
		if (seg(&p, c->sid, sizeof c->sid))
			return CV_NONE;
		if (!c->sid[0])
			return is(r, "GET") ? CV_SESSIONS : CV_NOT_ALLOWED;
		if (seg(&p, b, sizeof b))
			return CV_NONE;
		if (!b[0])
			return is(r, "GET") ? CV_SESSION_GET : CV_NOT_ALLOWED;
		if (!strcmp(b, "cmd")) {
			if (seg(&p, c->cid, sizeof c->cid))
				return CV_NONE;
			if (!c->cid[0])
				return is(r, "POST") ? CV_CMD_RUN : CV_NOT_ALLOWED;
			if (seg(&p, d, sizeof d) || (*p && *p != '?'))
				return CV_NONE;
			if (!d[0])
				return is(r, "GET") ? CV_CMD_GET : CV_NOT_ALLOWED;
			if (!strcmp(d, "logs"))
				return is(r, "GET") ? CV_CMD_LOGS : CV_NOT_ALLOWED;
			if (!strcmp(d, "kill"))
				return is(r, "POST") ? CV_CMD_KILL : CV_NOT_ALLOWED;
			return CV_NONE;
		}
		if (!strcmp(b, "fs")) {
			if (seg(&p, d, sizeof d) || (*p && *p != '?'))
				return CV_NONE;
			if (!is(r, "POST"))
				return CV_NOT_ALLOWED;
			return !strcmp(d, "write") ? CV_FS_WRITE : !strcmp(d, "read") ? CV_FS_READ :
			       !strcmp(d, "mkdir") ? CV_FS_MKDIR : CV_NONE;
		}
		if (*p && *p != '?')
			return CV_NONE;
		if (!is(r, "POST"))
			return CV_NOT_ALLOWED;
		if (!strcmp(b, "stop"))
			return CV_STOP;
		if (!strcmp(b, "extend-timeout"))
			return CV_EXTEND;
		if (!strcmp(b, "network-policy"))
			return CV_NETWORK;
		if (!strcmp(b, "snapshot") || !strcmp(b, "interactive")) {
			*unsupported = !strcmp(b, "snapshot") ? "snapshots" : "interactive sessions";
			return CV_UNSUPPORTED;
		}
		return CV_NONE;
	}
	snprintf(c->sid, sizeof c->sid, "%s", a);
	if (seg(&p, b, sizeof b) || (*p && *p != '?'))
		return CV_NONE;
	if (!b[0]) {
		if (is(r, "PATCH")) {
			*unsupported = "updating a sandbox";
			return CV_UNSUPPORTED;
		}
		return is(r, "GET") ? CV_BOX_GET : is(r, "DELETE") ? CV_BOX_DELETE : CV_NOT_ALLOWED;
	}
	if (!strcmp(b, "fork")) {
		*unsupported = "fork";
		return CV_UNSUPPORTED;
	}
	return CV_NONE;
}

int cv_error(struct gw_req *r, int status, const char *code, const char *fmt, ...)
{
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return gw_resp_error(r, status, code, "%s", msg);
}

void compat_vercel_free(struct cv_call *c)
{
	if (!c)
		return;
	lws_sul_cancel(&c->sul);
	svc_collect_free(&c->k);   /* closes its upstream */
	cv_fs_write_free(c->w);
	cJSON_Delete(c->body);
	cJSON_Delete(c->keep);
	sbx_buf_free(&c->jbody);
	free(c);
}

static void answered(struct svc_collect *k, struct svc_answer *sa);

struct svc_call *cv_sub(struct gw_req *r, struct cv_call *c, cv_step_fn next)
{
	(void)r;
	svc_collect_step(&c->k, answered);
	snprintf(c->k.call.sid, sizeof c->k.call.sid, "%s", c->sid);
	snprintf(c->k.call.cid, sizeof c->k.call.cid, "%s", c->cid);
	c->next = next;
	return &c->k.call;
}

void cv_fail_answer(struct gw_req *r, const struct cv_answer *a)
{
	gw_resp_error(r, a->status >= 400 ? a->status : 502, a->code ? a->code : "internal", "%s",
		      a->msg ? a->msg : "bad answer from the sandbox");
}

int cv_resolve(struct gw_req *r, const char *path, const char *cwd, char *out, size_t n)
{
	int k;
	if (!cwd)
		cwd = CV_CWD;
	if (cwd[0] != '/')
		return gw_resp_error(r, 422, "invalid", "cwd must be an absolute path");
	if (!path || !path[0])
		return gw_resp_error(r, 422, "invalid", "path is empty");
	k = path[0] == '/' ? snprintf(out, n, "%s", path) :
	    snprintf(out, n, "%s%s%s", cwd, cwd[strlen(cwd) - 1] == '/' ? "" : "/", path);
	if (k < 0 || (size_t)k >= n)
		return gw_resp_error(r, 422, "invalid", "path longer than %zu bytes", n - 1);
	return 0;
}

/* A 409 from a session's operation may mean the sandbox is no longer
 * running: the SDK expects 410 for that (it then tries to resume). */
static void stopped_checked(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(a->json, "status");
	if (a->status < 400 && cJSON_IsString(st) && strcmp(st->valuestring, "running") &&
	    strcmp(st->valuestring, "starting")) {
		gw_resp_error(r, 410, "sandbox_stopped", "sandbox %s is %s", c->sid, st->valuestring);
		return;
	}
	gw_resp_error(r, c->err_status, c->err_code, "%s", c->err_msg);
}

static void answer_step(struct gw_req *r, struct cv_call *c, struct cv_answer *a, cv_step_fn next)
{
	if (a->status == 409 && c->session_op) {
		c->err_status = a->status;
		snprintf(c->err_code, sizeof c->err_code, "%s", a->code ? a->code : "conflict");
		snprintf(c->err_msg, sizeof c->err_msg, "%s", a->msg ? a->msg : "conflict");
		c->session_op = 0;
		svc_get(cv_sub(r, c, stopped_checked));
		return;
	}
	next(r, c, a);
}

/* A step's answer: to its continuation, unless r was answered meanwhile. */
static void answered(struct svc_collect *k, struct svc_answer *sa)
{
	struct cv_call *c = k->call.owner;
	struct gw_req *r = c->r;
	cv_step_fn next = c->next;
	struct cv_answer a = { .status = sa->status, .json = sa->json, .code = sa->code,
			       .msg = sa->msg };

	c->next = NULL;
	if (!r->resp_ready && next)
		answer_step(r, c, &a, next);
}

static void woken(lws_sorted_usec_list_t *sul)
{
	struct cv_call *c = lws_container_of(sul, struct cv_call, sul);
	struct gw_req *r = c->r;

	if (c->w && !r->resp_ready)
		cv_fs_write_pump(r, c);   /* may answer r, never frees it */
}

/* fs/write's upload took what was queued: the pump goes on */
static void drained(struct svc_collect *k)
{
	struct cv_call *c = k->call.owner;
	if (c->put_full) {
		c->put_full = 0;
		lws_sul_schedule(c->r->vh->ctx, 0, &c->sul, woken, 1);
	}
}

static void dispatch(struct gw_req *r, struct cv_call *c, int op)
{
	struct sbx_err err = { 0 };

	/* no string of a JSON body here is data (files come as a tar): a NUL
	 * in one is refused by name, never cut (lib/sbx_json.h) */
	if (sbx_json_refuse_nul(c->body, &err) < 0) {
		gw_resp_error(r, 422, "invalid", "%s", err.msg);
		return;
	}
	switch (op) {
	case CV_CREATE: cv_box_create(r, c); return;
	case CV_LIST: cv_box_list(r, c, 0); return;
	case CV_SESSIONS: cv_box_list(r, c, 1); return;
	case CV_BOX_GET: {
		char v[8];
		int resume = gw_query_get(r->wsi, "resume", v, sizeof v, NULL, 0) == 1 &&
			     !strcmp(v, "true");
		cv_box_get(r, c, resume);
		return;
	}
	case CV_BOX_DELETE: cv_session_stop(r, c, 1); return;
	case CV_SESSION_GET: cv_session_get(r, c); return;
	case CV_STOP: cv_session_stop(r, c, 0); return;
	case CV_EXTEND: cv_session_extend(r, c); return;
	case CV_NETWORK: cv_session_network(r, c); return;
	case CV_CMD_RUN: cv_cmd_run(r, c); return;
	case CV_CMD_GET: {
		char v[8];
		int wait = gw_query_get(r->wsi, "wait", v, sizeof v, NULL, 0) == 1 &&
			   (!strcmp(v, "true") || !strcmp(v, "1"));
		cv_cmd_get(r, c, wait);
		return;
	}
	case CV_CMD_LOGS: cv_cmd_logs(r, c); return;
	case CV_CMD_KILL: cv_cmd_kill(r, c); return;
	case CV_FS_READ: cv_fs_read(r, c); return;
	case CV_FS_MKDIR: cv_fs_mkdir(r, c); return;
	default: gw_resp_error(r, 404, "not_found", "no such endpoint");
	}
}

int compat_vercel_route(struct gw_req *r)
{
	const char *what = NULL;
	struct cv_call *c;
	char cl[32];
	int64_t len = 0;
	int op;

	if (strncmp(r->uri, "/v2/sandboxes", 13) && strncmp(r->uri, "/v3/sandboxes", 13))
		return 0;
	if (!(c = calloc(1, sizeof *c))) {
		gw_resp_error(r, 500, "internal", "out of memory");
		return 1;
	}
	op = pick(r, c, &what);
	r->key = gw_auth_check(r->vh, r->wsi, 0, NULL, &r->scope);
	if (op == CV_NONE) {
		free(c);
		gw_resp_error(r, 404, "not_found", "no such endpoint");
		return 1;
	}
	if (r->key < 0) {
		free(c);
		gw_resp_error(r, 401, "unauthorized", "missing or unknown API key (Authorization: Bearer <key>)");
		return 1;
	}
	if (op == CV_NOT_ALLOWED) {
		free(c);
		gw_resp_error(r, 405, "method_not_allowed", "method %s not allowed here", r->method);
		return 1;
	}
	if (op == CV_UNSUPPORTED) {
		free(c);
		r->close_after = 1;   /* the body, if any, is not read */
		gw_resp_error(r, 422, "unsupported", "%s: not supported by this gateway (docs/vercel.md)", what);
		return 1;
	}
	if (c->sid[0] && gw_owner_get(r->vh, c->sid) != r->key) {
		r->close_after = 1;
		gw_resp_error(r, 404, "not_found", "no sandbox %s", c->sid);
		free(c);
		return 1;
	}
	r->vercel = c;
	c->r = r;
	svc_collect_init(&c->k, r->vh, r->wsi, c, r->key);
	c->k.call.tag = "VCL";
	c->k.drained = drained;
	c->op = op;
	c->session_op = op >= CV_STOP && op <= CV_FS_MKDIR && op != CV_STOP;
	snprintf(r->sid, sizeof r->sid, "%s", c->sid);
	snprintf(r->cid, sizeof r->cid, "%s", c->cid);
	if (lws_hdr_total_length(r->wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0) {
		r->close_after = 1;
		gw_resp_error(r, 411, "length_required", "send a Content-Length (chunked bodies are not accepted)");
		return 1;
	}
	if (lws_hdr_copy(r->wsi, cl, sizeof cl, WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0) {
		char *end;
		len = strtoll(cl, &end, 10);
		if (*end || len < 0)
			len = -1;
	}
	if (len < 0) {
		r->close_after = 1;
		gw_resp_error(r, 400, "bad_request", "bad Content-Length");
		return 1;
	}
	r->body_expected = len;
	if (op == CV_FS_WRITE) {
		if (len > (int64_t)GW_FILE_BODY_CAP) {
			r->close_after = 1;
			gw_resp_error(r, 413, "too_large", "archive over %u bytes", GW_FILE_BODY_CAP);
			return 1;
		}
		r->body_stream = 1;
		if (cv_fs_write_start(r, c) == 0 && !len) {
			r->body_done = 1;
			cv_fs_write_done(r, c);
		}
		return 1;
	}
	if (len > GW_JSON_BODY_CAP) {
		r->close_after = 1;
		gw_resp_error(r, 413, "too_large", "body over %d bytes", GW_JSON_BODY_CAP);
		return 1;
	}
	if (op == CV_CMD_GET || op == CV_CMD_LOGS) {
		/* they last as long as the command (lws would cut them at 5 s) */
		gw_keepalive_http_start(r, op == CV_CMD_LOGS);
		r->ka_text = "{\"stream\":\"stdout\",\"data\":\"\"}\n";   /* a line the SDK accepts */
	}
	if (!len) {
		r->body_done = 1;
		c->body = cJSON_CreateObject();
		dispatch(r, c, op);
		return 1;
	}
	sbx_buf_init(&c->jbody, GW_JSON_BODY_CAP);
	return 1;
}

void compat_vercel_body(struct gw_req *r, const void *in, size_t len)
{
	struct cv_call *c = r->vercel;
	r->body_seen += len;
	if (c->op == CV_FS_WRITE) {
		cv_fs_write_data(r, c, in, len);
		return;
	}
	if (sbx_buf_append(&c->jbody, in, len)) {
		r->close_after = 1;
		gw_resp_error(r, 413, "too_large", "body over %d bytes", GW_JSON_BODY_CAP);
	}
}

void compat_vercel_body_done(struct gw_req *r)
{
	struct cv_call *c = r->vercel;
	struct sbx_err err = { 0 };

	r->body_done = 1;
	if (c->op == CV_FS_WRITE) {
		cv_fs_write_done(r, c);
		return;
	}
	c->body = sbx_json_parse_object(sbx_buf_head(&c->jbody), c->jbody.len, &err);
	if (!c->body) {
		gw_resp_error(r, 400, "bad_request", "%s", err.msg);
		return;
	}
	dispatch(r, c, c->op);
}
