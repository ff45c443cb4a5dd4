/* The @vercel/sandbox surface's handlers: each /v2 and /v3 endpoint is a
 * row of the one route table (gw_routes.c), which checks the key (Bearer
 * = an API key; teamId/projectId in the query are accepted and ignored),
 * the method, the sandbox's owner and the body (JSON capped as on /v1;
 * fs/write's gzip streamed) as for every route; here the call's steps. A step is one
 * operation of the service layer (svc.h) on the call's collecting sink;
 * its answer comes back whole, as values, to the step's continuation. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compat_vercel.h"
#include "../http/gw_rest_sink.h"
#include "sbx_log.h"

int cv_error(struct gw_req *r, int status, const char *code, const char *fmt, ...)
{
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return gw_resp_error(r, status, code, "%s", msg);
}

static void call_free(void *front)
{
	struct cv_call *c = front;

	if (!c)
		return;
	lws_sul_cancel(&c->sul);
	svc_collect_free(&c->k);   /* closes its upstream */
	cv_fs_write_free(c->w);
	cJSON_Delete(c->body);
	cJSON_Delete(c->keep);
	free(c);
}

static void answered(struct svc_collect *k, struct svc_answer *sa);

struct svc_call *cv_step(struct cv_call *c, cv_step_fn next)
{
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
		svc_get(cv_step(c, stopped_checked));
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

/* r's call (r->front.state), made when its row's handler runs, with the
 * row's parsed body (consumed); NULL after answering. session_op: an
 * operation on a running sandbox, whose 409 may mean "stopped" (410). */
static struct cv_call *call_new(struct gw_req *r, cJSON *body, int session_op)
{
	struct sbx_err err = { 0 };
	struct cv_call *c;

	/* no string of a JSON body here is data (files come as a tar): a NUL
	 * in one is refused by name, never cut (lib/sbx_json.h) */
	if (body && sbx_json_refuse_nul(body, &err) < 0) {
		cJSON_Delete(body);
		gw_resp_error(r, 422, "invalid", "%s", err.msg);
		return NULL;
	}
	if (!(c = calloc(1, sizeof *c))) {
		cJSON_Delete(body);
		gw_resp_error(r, 500, "internal", "out of memory");
		return NULL;
	}
	r->front.state = c;
	r->front.free = call_free;
	c->r = r;
	c->body = body ? body : cJSON_CreateObject();
	c->session_op = session_op;
	snprintf(c->sid, sizeof c->sid, "%s", r->sid);
	snprintf(c->cid, sizeof c->cid, "%s", r->cid);
	svc_collect_init(&c->k, r->vh, r->wsi, c, r->key);
	c->k.drained = drained;
	return c;
}

int cv_query_true(struct gw_req *r, const char *name, int one)
{
	char v[8];
	return gw_query_get(r->wsi, name, v, sizeof v, NULL, 0) == 1 &&
	       (!strcmp(v, "true") || (one && !strcmp(v, "1")));
}

/* The operations the JSON rows name (.ctx): what runs, whether it acts on
 * a running sandbox (a 409 may then mean "stopped", answered 410), the
 * flag it reads in c->op, and whether its answer lasts as long as a
 * command (with keepalive lines or not; lws would cut it at 5 s). */
struct cv_op {
	void (*run)(struct gw_req *r, struct cv_call *c);
	int session_op, flag;
	int lasting;                /* -1 no, 0 yes, 1 yes with keepalive lines */
};
const struct cv_op cv_op_create = { cv_box_create, 0, 0, -1 };
const struct cv_op cv_op_list = { cv_box_list, 0, 0, -1 };
const struct cv_op cv_op_sessions = { cv_box_list, 0, 1, -1 };
const struct cv_op cv_op_box_get = { cv_box_get, 0, 0, -1 };
const struct cv_op cv_op_box_delete = { cv_session_stop, 0, 1, -1 };
const struct cv_op cv_op_session_get = { cv_session_get, 0, 0, -1 };
const struct cv_op cv_op_stop = { cv_session_stop, 0, 0, -1 };
const struct cv_op cv_op_extend = { cv_session_extend, 1, 0, -1 };
const struct cv_op cv_op_network = { cv_session_network, 1, 0, -1 };
const struct cv_op cv_op_cmd_run = { cv_cmd_run, 1, 0, -1 };
const struct cv_op cv_op_cmd_get = { cv_cmd_get, 1, 0, 0 };
const struct cv_op cv_op_cmd_logs = { cv_cmd_logs, 1, 0, 1 };
const struct cv_op cv_op_cmd_kill = { cv_cmd_kill, 1, 0, -1 };
const struct cv_op cv_op_fs_read = { cv_fs_read, 1, 0, -1 };
const struct cv_op cv_op_fs_mkdir = { cv_fs_mkdir, 1, 0, -1 };
const struct cv_op cv_op_snapshot = { cv_session_snapshot, 1, 0, -1 };
const struct cv_op cv_op_snap_get = { cv_snap_get, 0, 0, -1 };
const struct cv_op cv_op_snap_delete = { cv_snap_delete, 0, 1, -1 };
const struct cv_op cv_op_snap_list = { cv_snap_list, 0, 0, -1 };
const struct cv_op cv_op_fork = { cv_box_fork, 0, 0, -1 };

/* ---- the rows' handlers (the route table) ---- */

void cv_h_json(struct gw_req *r, cJSON *body)
{
	const struct cv_op *op = r->rt->ctx;
	struct cv_call *c = call_new(r, body, op->session_op);

	if (!c)
		return;
	c->op = op->flag;
	if (op->lasting >= 0) {
		gw_keepalive_http_start(r, op->lasting);
		r->ka.text = "{\"stream\":\"stdout\",\"data\":\"\"}\n";   /* a line the SDK accepts */
	}
	op->run(r, c);
}

/* fs/write: a gzip'd tar streamed in (compat_vercel_fs.c) */
void cv_h_fs_write_start(struct gw_req *r)
{
	struct cv_call *c = call_new(r, NULL, 1);
	if (c)
		cv_fs_write_start(r, c);
}

void cv_h_fs_write_data(struct gw_req *r, const void *p, size_t n)
{
	if (r->front.state)
		cv_fs_write_data(r, r->front.state, p, n);
}

void cv_h_fs_write_done(struct gw_req *r)
{
	if (r->front.state)
		cv_fs_write_done(r, r->front.state);
}

/* What the SDK can ask and this gateway does not do: 422 unsupported, the
 * body (if any) unread. */
static void unsupported(struct gw_req *r, const char *what)
{
	r->close_after = 1;
	gw_resp_error(r, 422, "unsupported", "%s: not supported by this gateway (docs/vercel.md)", what);
}

void cv_h_no_snapshots(struct gw_req *r)
{
	unsupported(r, "snapshots");
}

void cv_h_no_drives(struct gw_req *r)
{
	unsupported(r, "drives");
}

void cv_h_no_update(struct gw_req *r)
{
	unsupported(r, "updating a sandbox");
}

void cv_h_no_interactive(struct gw_req *r)
{
	unsupported(r, "interactive sessions");
}
