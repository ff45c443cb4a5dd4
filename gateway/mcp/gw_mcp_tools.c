/* The MCP tools. Each one is a sequence of operations of the service
 * layer (svc.h): the same checks, quotas, ownership and upstream code as
 * /v1, no second implementation. A tool turns an operation's answer into
 * its structured result (and a text copy of it); an error becomes a tool
 * result with isError, the API's code and status in _meta. The input schemas published in tools/list are the
 * ones arguments are checked against (gw_mcp_tool_check). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "gw_mcp.h"

struct gw_mcp_tool {
	const char *name, *title, *desc, *in, *out;
	void (*start)(struct gw_mcp_call *c);
	/* the answer of a step: the result, or NULL after starting another */
	cJSON *(*done)(struct gw_mcp_call *c, struct svc_answer *a);
	/* the argument (at any depth) whose strings are data, where a NUL is
	 * a byte like any other; in every other string it is refused */
	const char *data;
	/* a tool that is one operation names it instead of a start: op(call)
	 * (on sandbox_id's sandbox when on_sandbox, once admitted) */
	void (*op)(struct svc_call *c);
	int on_sandbox;
};

#define SID "\"sandbox_id\":{\"type\":\"string\",\"description\":\"the sandbox's id\"}"
#define SANDBOX_OUT "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"}," \
	"\"status\":{\"type\":\"string\"},\"routes\":{\"type\":\"array\",\"items\":{\"type\":\"object\"," \
	"\"properties\":{\"port\":{\"type\":\"integer\"},\"url\":{\"type\":\"string\"}}}}}," \
	"\"required\":[\"id\",\"status\"]}"
#define ENV "\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}," \
	"\"description\":\"environment variables (secrets: never shown back)\"}"

/* ---- argument checking: the subset of JSON Schema the schemas use ---- */

static int type_is(const cJSON *v, const char *t)
{
	if (!strcmp(t, "object")) return cJSON_IsObject(v);
	if (!strcmp(t, "array")) return cJSON_IsArray(v);
	if (!strcmp(t, "string")) return cJSON_IsString(v) || sbx_json_has_nul(v);
	if (!strcmp(t, "boolean")) return cJSON_IsBool(v);
	if (!strcmp(t, "number")) return cJSON_IsNumber(v);
	if (!strcmp(t, "integer"))
		return cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
		       fabs(v->valuedouble) <= 9007199254740991.0;
	return 0;
}

static int check(const cJSON *schema, const cJSON *v, const char *at, const char *data,
		 char *why, size_t n)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(schema, "type");
	const cJSON *e, *p;
	char sub[200];

	if (cJSON_IsString(t) && !type_is(v, t->valuestring))
		return snprintf(why, n, "%s must be of type %s", at, t->valuestring), -1;
	if (cJSON_IsArray(t)) {
		int ok = 0;
		cJSON_ArrayForEach(e, t)
			ok |= cJSON_IsString(e) && type_is(v, e->valuestring);
		if (!ok)
			return snprintf(why, n, "%s has the wrong type", at), -1;
	}
	if (sbx_json_has_nul(v) && !(data && v->string && !strcmp(v->string, data)))
		return snprintf(why, n, "%s must not contain NUL (\\u0000)", at), -1;
	if ((e = cJSON_GetObjectItemCaseSensitive(schema, "enum"))) {
		int ok = 0;
		cJSON_ArrayForEach(p, e)
			ok |= cJSON_Compare(p, v, 1);
		if (!ok)
			return snprintf(why, n, "%s is not one of the allowed values", at), -1;
	}
	if ((e = cJSON_GetObjectItemCaseSensitive(schema, "minimum")) && cJSON_IsNumber(v) &&
	    v->valuedouble < e->valuedouble)
		return snprintf(why, n, "%s must be at least %g", at, e->valuedouble), -1;
	if ((e = cJSON_GetObjectItemCaseSensitive(schema, "maximum")) && cJSON_IsNumber(v) &&
	    v->valuedouble > e->valuedouble)
		return snprintf(why, n, "%s must be at most %g", at, e->valuedouble), -1;
	if ((e = cJSON_GetObjectItemCaseSensitive(schema, "maxItems")) && cJSON_IsArray(v) &&
	    cJSON_GetArraySize(v) > e->valueint)
		return snprintf(why, n, "%s has more than %d items", at, e->valueint), -1;
	if (cJSON_IsArray(v) && (e = cJSON_GetObjectItemCaseSensitive(schema, "items"))) {
		int i = 0;
		cJSON_ArrayForEach(p, v) {
			snprintf(sub, sizeof sub, "%s[%d]", at, i++);
			if (check(e, p, sub, data, why, n))
				return -1;
		}
	}
	if (!cJSON_IsObject(v))
		return 0;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(schema, "required"))
		if (cJSON_IsString(e) && !cJSON_GetObjectItemCaseSensitive(v, e->valuestring))
			return snprintf(why, n, "%s.%s is required", at, e->valuestring), -1;
	const cJSON *props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
	const cJSON *extra = cJSON_GetObjectItemCaseSensitive(schema, "additionalProperties");
	cJSON_ArrayForEach(p, v) {
		const cJSON *ps = cJSON_GetObjectItemCaseSensitive(props, p->string);
		snprintf(sub, sizeof sub, "%s.%.60s", at, p->string);
		if (!ps && cJSON_IsFalse(extra))
			return snprintf(why, n, "%s is not an argument of this tool", sub), -1;
		if (!ps && cJSON_IsObject(extra))
			ps = extra;
		if (ps && check(ps, p, sub, data, why, n))
			return -1;
	}
	return 0;
}

/* ---- results ---- */

static cJSON *result(cJSON *structured)
{
	cJSON *res = cJSON_CreateObject(), *content = cJSON_AddArrayToObject(res, "content");
	cJSON *item = cJSON_CreateObject();
	char *s = sbx_json_print(structured);
	cJSON_AddStringToObject(item, "type", "text");
	cJSON_AddStringToObject(item, "text", s ? s : "");
	cJSON_free(s);
	cJSON_AddItemToArray(content, item);
	cJSON_AddItemToObject(res, "structuredContent", structured);
	return res;
}

static cJSON *tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static cJSON *tool_error(const char *fmt, ...)
{
	char msg[700];
	cJSON *res = cJSON_CreateObject(), *content = cJSON_AddArrayToObject(res, "content");
	cJSON *item = cJSON_CreateObject();
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	cJSON_AddStringToObject(item, "type", "text");
	cJSON_AddStringToObject(item, "text", msg);
	cJSON_AddItemToArray(content, item);
	cJSON_AddTrueToObject(res, "isError");
	return res;
}
/* A tool error from the service layer's error: the API's code first (as
 * "code: message"), and code and REST status in _meta, the same values
 * a REST client gets for the same refusal. */
static cJSON *svc_error(const struct svc_answer *a)
{
	const char *code = a->code ? a->code : "internal";
	cJSON *res = tool_error("%s: %s", code, a->msg ? a->msg : "bad answer");
	cJSON *meta = cJSON_AddObjectToObject(res, "_meta");
	cJSON_AddNumberToObject(meta, "status", a->status >= 400 ? a->status : 502);
	cJSON_AddStringToObject(meta, "code", code);
	return res;
}

/* The reply's JSON (taken from a), or NULL with *err set to a tool error. */
static cJSON *reply_json(struct svc_answer *a, cJSON **err)
{
	cJSON *o = a->json;
	if (a->status >= 400 || !cJSON_IsObject(o)) {
		*err = svc_error(a);
		return NULL;
	}
	a->json = NULL;
	return o;
}

static cJSON *done_plain(struct gw_mcp_call *c, struct svc_answer *a)
{
	cJSON *err = NULL, *o = reply_json(a, &err);
	(void)c;
	return o ? result(o) : err;
}

static const char *arg_str(const struct gw_mcp_call *c, const char *name)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c->args, name));
}

static struct gw_mcp_call *call_of(struct svc_call *s)
{
	return s->owner;
}

/* A step with no sandbox: the call, ready. */
static struct svc_call *step(struct gw_mcp_call *c)
{
	svc_collect_step(&c->k, gw_mcp_step_done);
	return &c->k.call;
}

/* A step on the sandbox of sandbox_id: go(s) once the key may use it
 * (svc_admit: the same 404 and 503 as REST); NULL after failing. */
static struct svc_call *sandbox_step(struct gw_mcp_call *c)
{
	const char *sid = arg_str(c, "sandbox_id");
	struct svc_call *s = step(c);
	size_t n = strspn(sid, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");

	if (!*sid || sid[n] || n >= sizeof s->sid) {
		svc_fail(s, 404, "not_found", "no sandbox %.80s", sid);
		return NULL;
	}
	snprintf(s->sid, sizeof s->sid, "%s", sid);
	return s;
}

/* The arguments without sandbox_id, as a REST body. */
static cJSON *body_of(const struct gw_mcp_call *c)
{
	cJSON *b = cJSON_Duplicate(c->args, 1);
	cJSON_DeleteItemFromObjectCaseSensitive(b, "sandbox_id");
	return b;
}

/* ---- sandboxes ---- */

static void create_start(struct gw_mcp_call *c)
{
	svc_create(step(c), cJSON_Duplicate(c->args, 1));
}

static void extend_go(struct svc_call *s)
{
	svc_extend(s, body_of(call_of(s)));
}

static void extend_start(struct gw_mcp_call *c)
{
	struct svc_call *s = sandbox_step(c);
	if (s)
		svc_admit(s, extend_go);
}

static void network_go(struct svc_call *s)
{
	svc_network(s, body_of(call_of(s)));
}

static void network_start(struct gw_mcp_call *c)
{
	struct svc_call *s = sandbox_step(c);
	if (s)
		svc_admit(s, network_go);
}

static cJSON *preview_done(struct gw_mcp_call *c, struct svc_answer *a)
{
	cJSON *err = NULL, *o = reply_json(a, &err), *rt, *out;
	const cJSON *port = cJSON_GetObjectItemCaseSensitive(c->args, "port");
	if (!o)
		return err;
	cJSON_ArrayForEach(rt, cJSON_GetObjectItemCaseSensitive(o, "routes")) {
		const cJSON *rp = cJSON_GetObjectItemCaseSensitive(rt, "port");
		if (cJSON_IsNumber(rp) && rp->valuedouble == port->valuedouble) {
			out = cJSON_CreateObject();
			cJSON_AddNumberToObject(out, "port", rp->valuedouble);
			cJSON_AddStringToObject(out, "url", cJSON_GetStringValue(
				cJSON_GetObjectItemCaseSensitive(rt, "url")));
			cJSON *tok = cJSON_DetachItemFromObjectCaseSensitive(o, "preview_token");
			if (tok)
				cJSON_AddItemToObject(out, "preview_token", tok);
			cJSON_Delete(o);
			return result(out);
		}
	}
	cJSON_Delete(o);
	return tool_error("invalid: port %d is not one of the sandbox's ports "
			  "(declare it in create_sandbox's ports)", port->valueint);
}

/* ---- commands ---- */

static void exec_go(struct svc_call *s, int detached)
{
	struct gw_mcp_call *c = call_of(s);
	cJSON *b = body_of(c);

	cJSON_AddBoolToObject(b, "detached", detached);
	if (!detached && c->progress)
		c->k.output = gw_mcp_progress;
	svc_exec(s, b);
}

static void run_go(struct svc_call *s)
{
	exec_go(s, 0);
}

static void start_go(struct svc_call *s)
{
	exec_go(s, 1);
}

static void run_start(struct gw_mcp_call *c)
{
	struct svc_call *s = sandbox_step(c);
	if (s)
		svc_admit(s, run_go);
}

static void start_start(struct gw_mcp_call *c)
{
	struct svc_call *s = sandbox_step(c);
	if (s)
		svc_admit(s, start_go);
}

/* command_output: stdout and stderr as they come, up to GW_MCP_READ_CAP
 * together; past it the output ends there and the rest comes from
 * next_since. */
static int output_chunk(struct svc_collect *k, int is_stderr, const void *p, size_t n)
{
	struct gw_mcp_call *c = k->call.owner;

	if (sbx_buf_append(is_stderr ? &c->data2 : &c->data, p, n))
		return -1;
	c->next_since = (double)(k->call.op.logs_off + n);
	return c->data.len + c->data2.len >= GW_MCP_READ_CAP ? -1 : 0;
}

static void output_go(struct svc_call *s)
{
	const cJSON *since = cJSON_GetObjectItemCaseSensitive(call_of(s)->args, "since");
	svc_logs(s, since ? (int64_t)since->valuedouble : 0, 0);
}

static void output_start(struct gw_mcp_call *c)
{
	const char *cid = arg_str(c, "command_id");
	const cJSON *since = cJSON_GetObjectItemCaseSensitive(c->args, "since");
	size_t n = strspn(cid, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");
	struct svc_call *s = sandbox_step(c);
	if (!s)
		return;
	if (!*cid || cid[n] || n >= sizeof s->cid) {
		svc_fail(s, 404, "not_found", "no command %.80s", cid);
		return;
	}
	snprintf(s->cid, sizeof s->cid, "%s", cid);
	sbx_buf_reset(&c->data);
	sbx_buf_reset(&c->data2);
	c->next_since = since ? since->valuedouble : 0;
	c->k.output = output_chunk;
	svc_admit(s, output_go);
}

static cJSON *output_done(struct gw_mcp_call *c, struct svc_answer *a)
{
	cJSON *exit = a->json, *res;
	char *s;

	if (a->status >= 400)
		return svc_error(a);
	res = cJSON_CreateObject();
	s = sbx_text_utf8(sbx_buf_head(&c->data), c->data.len);
	cJSON_AddStringToObject(res, "stdout", s ? s : "");
	free(s);
	s = sbx_text_utf8(sbx_buf_head(&c->data2), c->data2.len);
	cJSON_AddStringToObject(res, "stderr", s ? s : "");
	free(s);
	cJSON_AddNumberToObject(res, "next_since", c->next_since);
	cJSON_AddBoolToObject(res, "exited", exit != NULL);
	cJSON *ec = exit ? cJSON_DetachItemFromObjectCaseSensitive(exit, "exit_code") : NULL;
	cJSON *sg = exit ? cJSON_DetachItemFromObjectCaseSensitive(exit, "signal") : NULL;
	cJSON_AddItemToObject(res, "exit_code", ec ? ec : cJSON_CreateNull());
	cJSON_AddItemToObject(res, "signal", sg ? sg : cJSON_CreateNull());
	/* cut at the cap: the output goes on from next_since */
	cJSON_AddBoolToObject(res, "more", !exit && a->cut);
	cJSON_AddBoolToObject(res, "output_dropped", a->gap);
	return result(res);
}

static int b64val(int ch)
{
	if (ch >= 'A' && ch <= 'Z') return ch - 'A';
	if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9') return ch - '0' + 52;
	if (ch == '+') return 62;
	if (ch == '/') return 63;
	return -1;
}

/* Decode base64 s[0, len) (padding and whitespace skipped) onto b; -1
 * when invalid (a NUL is). */
static int unbase64(struct sbx_buf *b, const char *s, size_t len)
{
	uint32_t acc = 0;
	int bits = 0;
	for (const char *end = s + len; s < end; s++) {
		int v = b64val((unsigned char)*s);
		if (*s == '=' || *s == '\n' || *s == '\r' || *s == ' ')
			continue;
		if (v < 0)
			return -1;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			unsigned char ch = (unsigned char)(acc >> (bits - 8));
			bits -= 8;
			if (sbx_buf_append(b, &ch, 1))
				return -1;
		}
	}
	return 0;
}


/* ---- files ---- */

static void write_go(struct svc_call *s)
{
	struct gw_mcp_call *c = call_of(s);

	svc_write_file_start(s);
	if (!s->answered && c->data.len)
		svc_write_file_data(s, sbx_buf_head(&c->data), c->data.len);
	if (!s->answered)
		svc_write_file_done(s);
}

static void write_next(struct gw_mcp_call *c)
{
	cJSON *f = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c->args, "files"), c->step);
	const char *path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "path"));
	const char *enc = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "encoding"));
	const cJSON *mode = cJSON_GetObjectItemCaseSensitive(f, "mode");
	struct svc_call *s = sandbox_step(c);
	struct sbx_err err = { 0 };
	char *content = NULL;
	size_t clen = 0;

	if (!s)
		return;
	/* the schema check let a NUL through in content only: the path is whole */
	if (!path || !*path || strlen(path) >= sizeof s->path) {
		svc_fail(s, 422, "invalid", "files[%d].path: empty or too long", c->step);
		return;
	}
	snprintf(s->path, sizeof s->path, "%s", path);
	s->mode = mode ? (long)mode->valuedouble : 0644;
	if (s->mode < 0 || s->mode > 07777) {
		svc_fail(s, 422, "invalid", "files[%d].mode: 0..4095 (07777)", c->step);
		return;
	}
	/* the bytes whole: "ab\u0000cd" is five of them */
	if (sbx_json_get_bytes(f, "content", &content, &clen, &err) != 1) {
		/* the schema said it is a string: only memory can fail */
		svc_fail(s, 500, "internal", "files[%d]: %s", c->step, err.msg);
		return;
	}
	sbx_buf_reset(&c->data);
	if (enc && !strcmp(enc, "base64") ? unbase64(&c->data, content, clen) :
	    sbx_buf_append(&c->data, content, clen)) {
		free(content);
		svc_fail(s, 422, "invalid", "files[%d].content: not valid base64", c->step);
		return;
	}
	free(content);
	svc_admit(s, write_go);
}

static void write_start(struct gw_mcp_call *c)
{
	c->acc = cJSON_CreateObject();
	cJSON_AddArrayToObject(c->acc, "files");
	write_next(c);
}

static cJSON *write_done(struct gw_mcp_call *c, struct svc_answer *a)
{
	cJSON *err = NULL, *o = reply_json(a, &err);
	if (!o) {
		/* say which file failed; the ones before it were written */
		cJSON *e = tool_error("%s: files[%d]: %s (the files before it were written)",
				      a->code ? a->code : "internal", c->step,
				      a->msg ? a->msg : "write failed");
		cJSON_AddItemToObject(e, "_meta", cJSON_DetachItemFromObjectCaseSensitive(err, "_meta"));
		cJSON_Delete(err);
		return e;
	}
	cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(c->acc, "files"), o);
	if (++c->step < cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(c->args, "files"))) {
		write_next(c);
		return NULL;
	}
	cJSON *acc = c->acc;
	c->acc = NULL;
	return result(acc);
}

/* A step on one path of the sandbox (the schema requires "path"); NULL
 * after failing. */
static struct svc_call *path_step(struct gw_mcp_call *c)
{
	struct svc_call *s = sandbox_step(c);
	const char *path = arg_str(c, "path");
	if (!s)
		return NULL;
	if (strlen(path) >= sizeof s->path) {
		svc_fail(s, 422, "invalid", "path: longer than %zu bytes", sizeof s->path - 1);
		return NULL;
	}
	snprintf(s->path, sizeof s->path, "%s", path);
	return s;
}

static void read_start(struct gw_mcp_call *c)
{
	struct svc_call *s = path_step(c);
	if (!s)
		return;
	s->read_cap = GW_MCP_READ_CAP;
	svc_admit(s, svc_read_file);
}

static cJSON *read_done(struct gw_mcp_call *c, struct svc_answer *a)
{
	const char *enc = arg_str(c, "encoding");
	int b64 = enc && !strcmp(enc, "base64");
	cJSON *o;
	char *s;
	if (a->status >= 400)
		return svc_error(a);
	if (a->cut)
		return tool_error("internal: the read was cut short");
	s = b64 ? sbx_text_base64_str(a->bytes, a->len) : sbx_text_utf8(a->bytes, a->len);
	if (!s)
		return tool_error("internal: out of memory");
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "path", arg_str(c, "path"));
	cJSON_AddNumberToObject(o, "size", (double)a->len);
	cJSON_AddStringToObject(o, "encoding", b64 ? "base64" : "text");
	cJSON_AddStringToObject(o, "content", s);
	free(s);
	return result(o);
}

static void list_files_start(struct gw_mcp_call *c)
{
	struct svc_call *s = path_step(c);
	if (s)
		svc_admit(s, svc_list_files);
}

/* The image named "name" (the schema requires it) goes. */
static void delete_image_start(struct gw_mcp_call *c)
{
	struct svc_call *s = step(c);
	const char *name = arg_str(c, "name");
	if (strlen(name) >= sizeof s->cid) {
		svc_fail(s, 422, "invalid", "name: longer than %zu bytes", sizeof s->cid - 1);
		return;
	}
	snprintf(s->cid, sizeof s->cid, "%s", name);
	svc_image_delete(s);
}

/* ---- snapshots, fork (svc_snapshot.c, svc_pause.c) ---- */

static void snapshot_go(struct svc_call *s)
{
	svc_snapshot_take(s, body_of(call_of(s)));
}

static void snapshot_start(struct gw_mcp_call *c)
{
	struct svc_call *s = sandbox_step(c);
	if (s)
		svc_admit(s, snapshot_go);
}

static void fork_go(struct svc_call *s)
{
	svc_fork(s, body_of(call_of(s)));
}

static void fork_start(struct gw_mcp_call *c)
{
	struct svc_call *s = sandbox_step(c);
	if (s)
		svc_admit(s, fork_go);
}

static void delete_snapshot_start(struct gw_mcp_call *c)
{
	struct svc_call *s = step(c);
	snprintf(s->cid, sizeof s->cid, "%.79s", arg_str(c, "snapshot_id"));
	svc_snapshot_delete(s);
}

#define SNAPSHOT_OUT "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"}," \
	"\"sandbox_id\":{\"type\":\"string\"},\"image\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"}," \
	"\"created_at\":{\"type\":\"number\"},\"expires_at\":{\"type\":[\"number\",\"null\"]}}," \
	"\"required\":[\"id\",\"sandbox_id\"]}"

/* ---- the table ---- */

static const struct gw_mcp_tool tools[] = {
	{ "create_sandbox", "Create a sandbox",
	  "Create an isolated Linux sandbox owned by your API key. Declare the ports you want "
	  "to preview. Returns its id and preview routes.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"timeout_ms\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"lifetime (default 300000)\"},"
	  "\"idle_timeout_ms\":{\"type\":\"integer\",\"minimum\":0},"
	  "\"ports\":{\"type\":\"array\",\"items\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":65535}},"
	  "\"network\":{\"description\":\"deny-all (default), allow-all, or {allow:[names, *.wildcards], deny_cidrs:[cidrs]}\","
	  "\"type\":[\"string\",\"object\"]},"
	  "\"vcpus\":{\"type\":\"integer\",\"minimum\":1},\"memory_mb\":{\"type\":\"integer\",\"minimum\":1},"
	  "\"image\":{\"type\":\"string\"},\"preview_auth\":{\"type\":\"boolean\"}," ENV ","
	  "\"persistent\":{\"type\":\"boolean\",\"description\":\"when its timeout ends it is kept "
	  "(files; a gvisor one paused), and the next command or file call resumes it; "
	  "stop_sandbox keeps it too, delete_sandbox ends it for good\"},"
	  "\"snapshot_expires_in_ms\":{\"type\":\"integer\",\"minimum\":0},"
	  "\"snapshot_keep_last\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":100},"
	  "\"source\":{\"type\":\"object\",\"description\":\"start from a snapshot: {snapshot: id}\","
	  "\"properties\":{\"snapshot\":{\"type\":\"string\"}},\"required\":[\"snapshot\"],"
	  "\"additionalProperties\":false}},"
	  "\"additionalProperties\":false}",
	  SANDBOX_OUT, create_start, done_plain, NULL, NULL, 0 },
	{ "list_sandboxes", "List sandboxes", "The sandboxes of your API key.",
	  "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"sandboxes\":{\"type\":\"array\",\"items\":" SANDBOX_OUT "}},"
	  "\"required\":[\"sandboxes\"]}", NULL, done_plain, NULL, svc_list, 0 },
	{ "list_images", "List images",
	  "The images a sandbox can be created from (create_sandbox's image), with the OS and "
	  "the node and python versions in each.",
	  "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"images\":{\"type\":\"array\",\"items\":"
	  "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},\"os\":{\"type\":\"string\"},"
	  "\"created_at\":{\"type\":\"number\"},\"digest\":{\"type\":\"string\"},"
	  "\"size\":{\"type\":\"number\"},\"ref\":{\"type\":\"string\"},"
	  "\"runtimes\":{\"type\":\"object\"}},"
	  "\"required\":[\"name\"]}}},\"required\":[\"images\"]}", NULL, done_plain, NULL, svc_images, 0 },
	{ "delete_image", "Delete an image",
	  "Delete an image of list_images. Refused (conflict) while a sandbox uses it, and for "
	  "the default image.",
	  "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"description\":"
	  "\"the image's name\"}},\"required\":[\"name\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},"
	  "\"deleted\":{\"type\":\"boolean\"}},\"required\":[\"name\",\"deleted\"]}",
	  delete_image_start, done_plain, NULL, NULL, 0 },
	{ "stop_sandbox", "Stop a sandbox",
	  "Stop a sandbox and free its resources. A persistent one is kept (its files; a gvisor "
	  "one paused) and the next command or file call resumes it; delete_sandbox ends it "
	  "for good.",
	  "{\"type\":\"object\",\"properties\":{" SID "},\"required\":[\"sandbox_id\"],\"additionalProperties\":false}",
	  SANDBOX_OUT, NULL, done_plain, NULL, svc_stop_keep, 1 },
	{ "delete_sandbox", "Delete a sandbox",
	  "Stop a sandbox and destroy it for good, a persistent one's kept files too.",
	  "{\"type\":\"object\",\"properties\":{" SID "},\"required\":[\"sandbox_id\"],\"additionalProperties\":false}",
	  SANDBOX_OUT, NULL, done_plain, NULL, svc_stop, 1 },
	{ "snapshot_sandbox", "Snapshot a sandbox's files",
	  "Keep the sandbox's files (not its processes or memory) as a snapshot; "
	  "create_sandbox with source {snapshot: id} starts from it. The sandbox runs on.",
	  "{\"type\":\"object\",\"properties\":{" SID ",\"expires_in_ms\":{\"type\":\"integer\","
	  "\"minimum\":1},\"keep_last\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100,"
	  "\"description\":\"keep only the newest N snapshots of this sandbox\"}},"
	  "\"required\":[\"sandbox_id\"],\"additionalProperties\":false}",
	  SNAPSHOT_OUT, snapshot_start, done_plain, NULL, NULL, 0 },
	{ "fork_sandbox", "Fork a sandbox",
	  "Snapshot the sandbox and start count new sandboxes from it, with its settings and "
	  "without its env (give secrets again).",
	  "{\"type\":\"object\",\"properties\":{" SID ",\"count\":{\"type\":\"integer\","
	  "\"minimum\":1,\"maximum\":10}},\"required\":[\"sandbox_id\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"snapshot\":" SNAPSHOT_OUT ",\"sandboxes\":"
	  "{\"type\":\"array\",\"items\":" SANDBOX_OUT "}},\"required\":[\"snapshot\",\"sandboxes\"]}",
	  fork_start, done_plain, NULL, NULL, 0 },
	{ "pause_sandbox", "Pause a sandbox",
	  "Stop every process of the sandbox where it stands (memory kept) and its timeout "
	  "clock; commands and files answer paused until resume_sandbox.",
	  "{\"type\":\"object\",\"properties\":{" SID "},\"required\":[\"sandbox_id\"],\"additionalProperties\":false}",
	  SANDBOX_OUT, NULL, done_plain, NULL, svc_sandbox_pause, 1 },
	{ "resume_sandbox", "Resume a paused sandbox", "Let a paused sandbox run on.",
	  "{\"type\":\"object\",\"properties\":{" SID "},\"required\":[\"sandbox_id\"],\"additionalProperties\":false}",
	  SANDBOX_OUT, NULL, done_plain, NULL, svc_sandbox_resume, 1 },
	{ "list_snapshots", "List snapshots", "The snapshots of your API key.",
	  "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"snapshots\":{\"type\":\"array\",\"items\":"
	  SNAPSHOT_OUT "}},\"required\":[\"snapshots\"]}", NULL, done_plain, NULL, svc_snapshots, 0 },
	{ "delete_snapshot", "Delete a snapshot", "Delete a snapshot of your API key.",
	  "{\"type\":\"object\",\"properties\":{\"snapshot_id\":{\"type\":\"string\"}},"
	  "\"required\":[\"snapshot_id\"],\"additionalProperties\":false}",
	  SNAPSHOT_OUT, delete_snapshot_start, done_plain, NULL, NULL, 0 },
	{ "extend", "Extend a sandbox's lifetime", "Add duration_ms to a sandbox's timeout.",
	  "{\"type\":\"object\",\"properties\":{" SID ",\"duration_ms\":{\"type\":\"integer\",\"minimum\":1}},"
	  "\"required\":[\"sandbox_id\",\"duration_ms\"],\"additionalProperties\":false}",
	  SANDBOX_OUT, extend_start, done_plain, NULL, NULL, 0 },
	{ "set_network_policy", "Change a sandbox's network policy",
	  "Apply a network policy to a running sandbox's new connections: deny-all, allow-all, "
	  "or {allow:[names, *.wildcards], deny_cidrs:[cidrs]}. Open connections the new policy "
	  "refuses are closed.",
	  "{\"type\":\"object\",\"properties\":{" SID ",\"network\":{\"type\":[\"string\",\"object\"]}},"
	  "\"required\":[\"sandbox_id\",\"network\"],\"additionalProperties\":false}",
	  SANDBOX_OUT, network_start, done_plain, NULL, NULL, 0 },
	{ "preview_url", "Preview URL of a port",
	  "The public URL of a port the sandbox declared at creation (a server listening on "
	  "0.0.0.0 there).",
	  "{\"type\":\"object\",\"properties\":{" SID ",\"port\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":65535}},"
	  "\"required\":[\"sandbox_id\",\"port\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"url\":{\"type\":\"string\"},\"port\":{\"type\":\"integer\"},"
	  "\"preview_token\":{\"type\":\"string\"}},\"required\":[\"url\",\"port\"]}",
	  NULL, preview_done, NULL, svc_get, 1 },
	{ "run_command", "Run a command and wait",
	  "Run a command in the sandbox and wait for it to end; returns its exit code and "
	  "output (each stream capped at 1 MiB, with a truncated flag). For long jobs use "
	  "start_command and command_output.",
	  "{\"type\":\"object\",\"properties\":{" SID ",\"cmd\":{\"type\":\"string\"},"
	  "\"args\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},\"cwd\":{\"type\":\"string\"},"
	  "\"sudo\":{\"type\":\"boolean\"},\"timeout_ms\":{\"type\":\"integer\",\"minimum\":1}," ENV "},"
	  "\"required\":[\"sandbox_id\",\"cmd\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},\"exit_code\":{\"type\":[\"integer\",\"null\"]},"
	  "\"signal\":{},\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":\"string\"},"
	  "\"stdout_truncated\":{\"type\":\"boolean\"},\"stderr_truncated\":{\"type\":\"boolean\"},"
	  "\"duration_ms\":{\"type\":\"number\"}},"
	  "\"required\":[\"id\",\"exit_code\",\"stdout\",\"stderr\",\"stdout_truncated\",\"stderr_truncated\"]}",
	  run_start, done_plain, NULL, NULL, 0 },
	{ "start_command", "Start a command in the background",
	  "Start a command without waiting; read its output with command_output.",
	  "{\"type\":\"object\",\"properties\":{" SID ",\"cmd\":{\"type\":\"string\"},"
	  "\"args\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},\"cwd\":{\"type\":\"string\"},"
	  "\"sudo\":{\"type\":\"boolean\"},\"timeout_ms\":{\"type\":\"integer\",\"minimum\":1}," ENV "},"
	  "\"required\":[\"sandbox_id\",\"cmd\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},\"status\":{\"type\":\"string\"}},"
	  "\"required\":[\"id\",\"status\"]}", start_start, done_plain, NULL, NULL, 0 },
	{ "command_output", "Output of a started command",
	  "The output a command printed from byte offset since (both streams counted "
	  "together) up to now, and its exit once it ended. Call again with next_since.",
	  "{\"type\":\"object\",\"properties\":{" SID ",\"command_id\":{\"type\":\"string\"},"
	  "\"since\":{\"type\":\"integer\",\"minimum\":0}},"
	  "\"required\":[\"sandbox_id\",\"command_id\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":\"string\"},"
	  "\"next_since\":{\"type\":\"integer\"},\"exited\":{\"type\":\"boolean\"},"
	  "\"exit_code\":{\"type\":[\"integer\",\"null\"]},\"signal\":{},\"more\":{\"type\":\"boolean\"},"
	  "\"output_dropped\":{\"type\":\"boolean\"}},"
	  "\"required\":[\"stdout\",\"stderr\",\"next_since\",\"exited\"]}", output_start, output_done, NULL, NULL, 0 },
	{ "write_files", "Write files",
	  "Write files into the sandbox (created or replaced, owned by the sandbox user). "
	  "content is text, or base64 with encoding \"base64\".",
	  "{\"type\":\"object\",\"properties\":{" SID ",\"files\":{\"type\":\"array\",\"maxItems\":64,"
	  "\"items\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},"
	  "\"content\":{\"type\":\"string\"},\"encoding\":{\"enum\":[\"text\",\"base64\"]},"
	  "\"mode\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":4095,\"description\":\"e.g. 493 for 0755\"}},"
	  "\"required\":[\"path\",\"content\"],\"additionalProperties\":false}}},"
	  "\"required\":[\"sandbox_id\",\"files\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"files\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	  "\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]}}},\"required\":[\"files\"]}",
	  write_start, write_done, "content", NULL, 0 },
	{ "read_file", "Read a file",
	  "Read a file of the sandbox (at most 1 MiB): as text (invalid UTF-8 shown as U+FFFD) "
	  "or base64.",
	  "{\"type\":\"object\",\"properties\":{" SID ",\"path\":{\"type\":\"string\"},"
	  "\"encoding\":{\"enum\":[\"text\",\"base64\"]}},"
	  "\"required\":[\"sandbox_id\",\"path\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"},"
	  "\"encoding\":{\"type\":\"string\"},\"content\":{\"type\":\"string\"}},"
	  "\"required\":[\"path\",\"size\",\"encoding\",\"content\"]}", read_start, read_done, NULL, NULL, 0 },
	{ "list_files", "List a directory", "The entries of a directory of the sandbox.",
	  "{\"type\":\"object\",\"properties\":{" SID ",\"path\":{\"type\":\"string\"}},"
	  "\"required\":[\"sandbox_id\",\"path\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"entries\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	  "\"properties\":{\"name\":{\"type\":\"string\"},\"type\":{\"type\":\"string\"}}}}},"
	  "\"required\":[\"entries\"]}", list_files_start, done_plain, NULL, NULL, 0 },
};
#define NTOOLS (sizeof tools / sizeof tools[0])

static cJSON *schema(const char *s)
{
	cJSON *o = cJSON_Parse(s);
	return o ? o : cJSON_CreateObject();   /* a bad literal fails the suite */
}

cJSON *gw_mcp_tools_list(void)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < NTOOLS; i++) {
		cJSON *t = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "name", tools[i].name);
		cJSON_AddStringToObject(t, "title", tools[i].title);
		cJSON_AddStringToObject(t, "description", tools[i].desc);
		cJSON_AddItemToObject(t, "inputSchema", schema(tools[i].in));
		cJSON_AddItemToObject(t, "outputSchema", schema(tools[i].out));
		cJSON_AddItemToArray(a, t);
	}
	return a;
}

const struct gw_mcp_tool *gw_mcp_tool_find(const char *name)
{
	for (size_t i = 0; i < NTOOLS; i++)
		if (!strcmp(tools[i].name, name))
			return &tools[i];
	return NULL;
}

const char *gw_mcp_tool_check(const struct gw_mcp_tool *t, const cJSON *args,
			      char *why, size_t whylen)
{
	cJSON *s = schema(t->in);
	int rc = check(s, args, "arguments", t->data, why, whylen);
	cJSON_Delete(s);
	return rc ? why : NULL;
}

const char *gw_mcp_tool_name(const struct gw_mcp_tool *t)
{
	return t->name;
}

int gw_mcp_tool_streams(const struct gw_mcp_tool *t)
{
	return t->start == run_start;
}

void gw_mcp_tool_start(struct gw_mcp_call *c)
{
	const struct gw_mcp_tool *t = c->tool;
	struct svc_call *s;

	if (t->start)
		t->start(c);
	else if (!t->on_sandbox)
		t->op(step(c));
	else if ((s = sandbox_step(c)))
		svc_admit(s, t->op);
}

cJSON *gw_mcp_tool_step(struct gw_mcp_call *c, struct svc_answer *a)
{
	return c->tool->done(c, a);
}
