/* POST /mcp: the Model Context Protocol's Streamable HTTP transport
 * (JSON-RPC 2.0, one message per POST, answered with application/json;
 * no server-to-client SSE stream: GET /mcp is 405, which the transport
 * allows). Auth is the API key, as on /v1. The tools (gw_mcp_tools.c) are
 * operations of the service layer (svc.h), so an MCP call goes through
 * the same code, limits and ownership as REST, asynchronously in the lws
 * loop; each step's answer comes whole to gw_mcp_step_done. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "gw_mcp.h"
#include "gw_mcp_origin.h"
#include "sbx_log.h"

static const char *const versions[] = { "2025-11-25", "2025-06-18", "2025-03-26" };
#define NVERSIONS (sizeof versions / sizeof versions[0])

static int header(struct gw_req *r, const char *name, char *buf, size_t size)
{
	int n = lws_hdr_custom_length(r->wsi, name, (int)strlen(name));
	if (n <= 0)
		return 0;
	if ((size_t)n >= size)
		return -1;
	if (lws_hdr_custom_copy(r->wsi, buf, (int)size, name, (int)strlen(name)) < 0)
		return -1;
	return 1;
}

static cJSON *rpc_error(const cJSON *id, int code, const char *msg)
{
	cJSON *o = cJSON_CreateObject(), *e;
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddItemToObject(o, "id", id ? cJSON_Duplicate(id, 1) : cJSON_CreateNull());
	e = cJSON_AddObjectToObject(o, "error");
	cJSON_AddNumberToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", msg);
	return o;
}

/* The same with the API's code and REST status in error.data, for an
 * error a REST client gets too (a malformed body, an invalid argument). */
static cJSON *rpc_error_api(const cJSON *id, int code, const char *msg, const char *api_code,
			    int status)
{
	cJSON *o = rpc_error(id, code, msg);
	cJSON *d = cJSON_AddObjectToObject(cJSON_GetObjectItemCaseSensitive(o, "error"), "data");
	cJSON_AddStringToObject(d, "code", api_code);
	cJSON_AddNumberToObject(d, "status", status);
	return o;
}

static cJSON *rpc_result(const cJSON *id, cJSON *result)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddItemToObject(o, "id", cJSON_Duplicate(id, 1));
	cJSON_AddItemToObject(o, "result", result);
	return o;
}

static void mcp_call_free(struct gw_mcp_call *c)
{
	svc_collect_free(&c->k);   /* closes its upstream */
	sbx_buf_free(&c->data);
	sbx_buf_free(&c->data2);
	cJSON_Delete(c->id);
	cJSON_Delete(c->args);
	cJSON_Delete(c->acc);
	cJSON_Delete(c->progress);
	free(c);
}

static void call_free(void *front)
{
	mcp_call_free(front);
}

/* The spec asks servers to check Origin against DNS rebinding: a browser
 * page may call /mcp only from one of the gateway's own origins
 * (gw_mcp_origin.c), never from one that merely equals the Host header,
 * which a rebinding page sends too. Clients that are not browsers send no
 * Origin. 1 when acceptable. */
static int origin_ok(struct gw_req *r)
{
	char origin[300];
	int n = lws_hdr_copy(r->wsi, origin, sizeof origin, WSI_TOKEN_ORIGIN);
	if (n <= 0)
		return lws_hdr_total_length(r->wsi, WSI_TOKEN_ORIGIN) <= 0;
	return gw_mcp_origin_ok(origin, (size_t)n, r->vh->tls, r->vh->port);
}

/* What POST and DELETE check after the key (the route table's): the
 * Origin and the protocol version. 0, or -1 after answering. */
static int admit(struct gw_req *r)
{
	char v[64];

	if (!origin_ok(r)) {
		gw_resp_error(r, 403, "forbidden", "Origin is not one of this gateway's origins (its own URL, --public-url, --mcp-allowed-origins)");
		return -1;
	}
	if (header(r, "mcp-protocol-version:", v, sizeof v)) {
		size_t i = 0;
		while (i < NVERSIONS && strcmp(v, versions[i]))
			i++;
		if (i == NVERSIONS) {
			gw_resp_error(r, 400, "bad_request", "unsupported MCP-Protocol-Version (this server: %s, %s, %s)",
				      versions[0], versions[1], versions[2]);
			return -1;
		}
	}
	return 0;
}

/* DELETE /mcp: end a session */
void gw_mcp_delete(struct gw_req *r)
{
	char sid[64];

	if (admit(r))
		return;
	if (header(r, "mcp-session-id:", sid, sizeof sid) != 1) {
		gw_resp_error(r, 400, "bad_request", "Mcp-Session-Id is required");
		return;
	}
	if (!gw_mcp_session_end(sid, r->key)) {
		gw_resp_error(r, 404, "not_found", "no such MCP session");
		return;
	}
	gw_resp_empty(r, 200);
}

/* POST /mcp: its body (up to GW_MCP_BODY_CAP, read by the router) is one
 * JSON-RPC message, answered by gw_mcp_body_done. No server-initiated SSE
 * stream: other methods are 405 (the transport allows that). */
void gw_mcp_post(struct gw_req *r)
{
	if (admit(r))
		return;
	struct gw_mcp_call *c = calloc(1, sizeof *c);
	if (!c) {
		gw_resp_error(r, 500, "internal", "out of memory");
		return;
	}
	r->front.state = c;
	r->front.free = call_free;
	c->r = r;
	svc_collect_init(&c->k, r->vh, r->wsi, c, r->key);
	sbx_buf_init(&c->data, 0);
	sbx_buf_init(&c->data2, 0);
}

static void answer(struct gw_req *r, int status, cJSON *o)
{
	gw_resp_json(r, status, o);
}

/* One SSE event carrying a JSON-RPC message on a streamed answer. */
static void sse_event(struct gw_req *r, cJSON *o)
{
	char *s = sbx_json_print(o);
	cJSON_Delete(o);
	if (!s || sbx_buf_append(&r->resp, "event: message\ndata: ", 21) ||
	    sbx_buf_append(&r->resp, s, strlen(s)) || sbx_buf_append(&r->resp, "\n\n", 2)) {
		/* the stream is broken: end it, the client sees the cut */
		r->resp_done = 1;
		r->close_after = 1;
	}
	cJSON_free(s);
	gw_req_wake(r);
}

int gw_mcp_progress(struct svc_collect *k, int is_stderr, const void *p, size_t n)
{
	struct gw_mcp_call *c = k->call.owner;
	struct gw_req *r = c->r;
	cJSON *o, *params;
	char *text;

	if (!c->sse || r->resp_done || c->progress_bytes + (double)n > GW_MCP_PROGRESS_CAP)
		return 0;   /* past the cap the final result still has the output */
	/* a character split across chunks shows as U+FFFD here; the result is exact */
	if (!(text = sbx_text_utf8(p, n)))
		return 0;
	c->progress_bytes += (double)n;
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddStringToObject(o, "method", "notifications/progress");
	params = cJSON_AddObjectToObject(o, "params");
	cJSON_AddItemToObject(params, "progressToken", cJSON_Duplicate(c->progress, 1));
	cJSON_AddNumberToObject(params, "progress", c->progress_bytes);
	cJSON_AddStringToObject(params, "message", text);
	cJSON_AddStringToObject(cJSON_AddObjectToObject(params, "_meta"), "stream",
				is_stderr ? "stderr" : "stdout");
	free(text);
	sse_event(r, o);
	return 0;
}

static cJSON *initialize(struct gw_req *r, const cJSON *params)
{
	const cJSON *pv = cJSON_GetObjectItemCaseSensitive(params, "protocolVersion");
	const char *ver = versions[0];
	char sid[33];
	cJSON *res, *caps, *info;

	/* the client's version when we speak it, else our latest (the client
	 * then decides whether to go on) */
	for (size_t i = 0; cJSON_IsString(pv) && i < NVERSIONS; i++)
		if (!strcmp(pv->valuestring, versions[i]))
			ver = versions[i];
	if (gw_mcp_session_new(r->key, ver, sid))
		return NULL;
	r->xhdr.name = "mcp-session-id:";
	snprintf(r->xhdr.val, sizeof r->xhdr.val, "%s", sid);
	res = cJSON_CreateObject();
	cJSON_AddStringToObject(res, "protocolVersion", ver);
	caps = cJSON_AddObjectToObject(res, "capabilities");
	cJSON_AddFalseToObject(cJSON_AddObjectToObject(caps, "tools"), "listChanged");
	info = cJSON_AddObjectToObject(res, "serverInfo");
	cJSON_AddStringToObject(info, "name", "sandbox-gateway");
	cJSON_AddStringToObject(info, "version", "1.0.0");
	cJSON_AddStringToObject(res, "instructions",
		"Isolated Linux sandboxes: create_sandbox, then write_files, run_command "
		"(or start_command and command_output for long jobs), read_file, preview_url "
		"for a declared port, stop_sandbox when done.");
	return res;
}

/* args: params.arguments, taken over */
static void tools_call(struct gw_req *r, const cJSON *id, const cJSON *params, cJSON *args)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(params, "name");
	const struct gw_mcp_tool *t;
	char why[300], msg[400];
	struct gw_mcp_call *c = r->front.state;

	if (!cJSON_IsString(name)) {
		cJSON_Delete(args);
		answer(r, 200, rpc_error(id, RPC_INVALID_PARAMS, "params.name must be a tool's name"));
		return;
	}
	if (!(t = gw_mcp_tool_find(name->valuestring))) {
		cJSON_Delete(args);
		snprintf(msg, sizeof msg, "unknown tool: %.200s", name->valuestring);
		answer(r, 200, rpc_error(id, RPC_INVALID_PARAMS, msg));
		return;
	}
	if (!args)
		args = cJSON_CreateObject();
	if (gw_mcp_tool_check(t, args, why, sizeof why)) {
		cJSON_Delete(args);
		snprintf(msg, sizeof msg, "invalid arguments for %s: %s", name->valuestring, why);
		answer(r, 200, rpc_error_api(id, RPC_INVALID_PARAMS, msg, "invalid", 422));
		return;
	}
	c->id = cJSON_Duplicate(id, 1);
	c->tool = t;
	c->args = args;
	const cJSON *tok = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(params, "_meta"), "progressToken");
	if ((cJSON_IsString(tok) || cJSON_IsNumber(tok)) && gw_mcp_tool_streams(t)) {
		/* progress asked for: the answer becomes an SSE stream of
		 * notifications, then the result (ends with the connection) */
		c->progress = cJSON_Duplicate(tok, 1);
		c->sse = 1;
		sbx_buf_init(&r->resp, 0);
		gw_resp_start_stream(r, 200, "text/event-stream", -1);
	}
	gw_mcp_tool_start(c);
}

static int session_ok(struct gw_req *r, const cJSON *id)
{
	char sid[64];
	int rc = header(r, "mcp-session-id:", sid, sizeof sid);
	if (rc != 1) {
		answer(r, 400, rpc_error(id, RPC_INVALID_REQUEST, "Mcp-Session-Id is required (send initialize first)"));
		return 0;
	}
	if (!gw_mcp_session_check(sid, r->key)) {
		answer(r, 404, rpc_error(id, RPC_INVALID_REQUEST, "no such MCP session (initialize again)"));
		return 0;
	}
	return 1;
}

/* 1 after answering invalid params: a string of params holds NUL. Every
 * one is a name (a tool's arguments were taken out: its schema check goes
 * through them, and write_files' contents may hold NUL). */
static int params_nul(struct gw_req *r, const cJSON *id, const cJSON *params)
{
	char at[200], m[300];

	if (!sbx_json_find_nul(params, at, sizeof at))
		return 0;
	snprintf(m, sizeof m, "params.%s must not contain NUL (\\u0000)", at);
	answer(r, 200, rpc_error_api(id, RPC_INVALID_PARAMS, m, "invalid", 422));
	return 1;
}

void gw_mcp_body_done(struct gw_req *r)
{
	struct sbx_err err = { 0 };
	cJSON *msg = sbx_json_parse(sbx_buf_head(&r->body), r->body.len, &err);
	const cJSON *id, *method, *jv;
	cJSON *params, *args = NULL;
	char at[200], m[600];

	r->body_done = 1;
	if (!msg) {
		snprintf(m, sizeof m, "parse error: %s", err.msg);
		answer(r, 400, rpc_error_api(NULL, RPC_PARSE, m, "bad_request", 400));
		return;
	}
	if (cJSON_IsArray(msg)) {
		cJSON_Delete(msg);
		answer(r, 400, rpc_error(NULL, RPC_INVALID_REQUEST,
			"JSON-RPC batches are not supported (MCP removed them in 2025-06-18): send one message per POST"));
		return;
	}
	id = cJSON_GetObjectItemCaseSensitive(msg, "id");
	method = cJSON_GetObjectItemCaseSensitive(msg, "method");
	jv = cJSON_GetObjectItemCaseSensitive(msg, "jsonrpc");
	/* params and the arguments in it are checked on their own (below) */
	params = cJSON_DetachItemFromObjectCaseSensitive(msg, "params");
	if (cJSON_IsObject(params))
		args = cJSON_DetachItemFromObjectCaseSensitive(params, "arguments");
	if (id && !cJSON_IsString(id) && !cJSON_IsNumber(id))
		id = NULL;
	if (sbx_json_find_nul(msg, at, sizeof at)) {
		/* jsonrpc, method, id: "ping\u0000x" is no ping */
		snprintf(m, sizeof m, "invalid JSON-RPC 2.0 message: %s must not contain NUL (\\u0000)",
			 at[0] ? at : "the message");
		answer(r, 400, rpc_error(id, RPC_INVALID_REQUEST, m));
		goto out;
	}
	if (!cJSON_IsObject(msg) || !cJSON_IsString(jv) || strcmp(jv->valuestring, "2.0") ||
	    (method && !cJSON_IsString(method)) || (params && !cJSON_IsObject(params)) ||
	    (!method && !cJSON_GetObjectItemCaseSensitive(msg, "result") &&
	     !cJSON_GetObjectItemCaseSensitive(msg, "error")) ||
	    (cJSON_GetObjectItemCaseSensitive(msg, "id") && !id)) {
		answer(r, 400, rpc_error(id, RPC_INVALID_REQUEST,
			"invalid JSON-RPC 2.0 message (jsonrpc \"2.0\", method a string, id a string or number, params an object)"));
		goto out;
	}
	if (method && !strcmp(method->valuestring, "initialize") && id) {
		if (!params_nul(r, id, params)) {
			cJSON *res = initialize(r, params);
			answer(r, 200, res ? rpc_result(id, res) : rpc_error(id, RPC_INTERNAL, "cannot make a session"));
		}
		goto out;
	}
	if (!session_ok(r, id))
		goto out;
	if (!method || !id) {
		/* a notification or a response to us: nothing to answer */
		gw_resp_empty(r, 202);
	} else if (params_nul(r, id, params)) {
		/* answered */
	} else if (!strcmp(method->valuestring, "ping")) {
		answer(r, 200, rpc_result(id, cJSON_CreateObject()));
	} else if (!strcmp(method->valuestring, "tools/list")) {
		cJSON *res = cJSON_CreateObject();
		cJSON_AddItemToObject(res, "tools", gw_mcp_tools_list());
		answer(r, 200, rpc_result(id, res));
	} else if (!strcmp(method->valuestring, "tools/call")) {
		tools_call(r, id, params, args);
		args = NULL;
	} else {
		snprintf(m, sizeof m, "method not found: %.200s", method->valuestring);
		answer(r, 200, rpc_error(id, RPC_NO_METHOD, m));
	}
out:
	cJSON_Delete(args);
	cJSON_Delete(params);
	cJSON_Delete(msg);
}

void gw_mcp_step_done(struct svc_collect *k, struct svc_answer *a)
{
	struct gw_mcp_call *c = k->call.owner;
	struct gw_req *r = c->r;
	cJSON *res;

	/* the same audit line as a REST request, naming the tool: the POST
	 * /mcp line alone would not say what was done to which sandbox */
	const cJSON *sid = cJSON_GetObjectItemCaseSensitive(c->args, "sandbox_id");
	const char *sv = cJSON_IsString(sid) ? sid->valuestring : "-";
	if (strlen(sv) > 64 || sv[strspn(sv, "abcdefghijklmnopqrstuvwxyz0123456789_-")])
		sv = "(not an id)";   /* the client's text never reaches the log raw */
	sbx_info("access mcp %s sandbox=%s %d %s key=%d", gw_mcp_tool_name(c->tool),
		 sv, a->status, a->code ? a->code : "ok", r->key);
	if (!(res = gw_mcp_tool_step(c, a)))
		return;   /* the next step is under way */
	if (c->sse) {
		sse_event(r, rpc_result(c->id, res));
		r->resp_done = 1;
	} else {
		answer(r, 200, rpc_result(c->id, res));
	}
}
