/* Request routing: path -> handler, auth and ownership, request bodies
 * (JSON capped at GW_JSON_BODY_CAP and answered 413 from Content-Length
 * without reading them; file uploads streamed to the agent). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gw.h"

enum {
	R_NONE, R_SBX_CREATE, R_SBX_LIST, R_SBX_GET, R_SBX_DELETE, R_SBX_EXTEND,
	R_CMD_EXEC, R_CMD_LIST, R_CMD_GET, R_CMD_KILL, R_CMD_STDIN,
	R_FILE_PUT, R_FILE_GET, R_FILE_MKDIR, R_FILE_LIST, R_CMD_LOGS, R_WS_ONLY, R_TOKEN,
	R_CAPABILITIES,
};

static int is_id_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
	       (c >= 'A' && c <= 'Z') || c == '-';
}

/* Copy the next path segment of *p into out; 0 on success. */
static int segment(const char **p, char *out, size_t outlen)
{
	const char *s = *p;
	size_t n = 0;
	if (*s != '/')
		return -1;
	s++;
	while (s[n] && s[n] != '/' && s[n] != '?') {
		if (!is_id_char(s[n]) || n + 1 >= outlen)
			return -1;
		out[n] = s[n];
		n++;
	}
	if (!n)
		return -1;
	out[n] = '\0';
	*p = s + n;
	return 0;
}

static int m(struct gw_req *r, const char *meth)
{
	return !strcmp(r->method, meth);
}

static int pick(struct gw_req *r)
{
	const char *p = r->uri;
	char seg[80];
	if (!strncmp(p, "/v1/capabilities", 16) && (!p[16] || p[16] == '?'))
		return m(r, "GET") ? R_CAPABILITIES : -2;
	if (strncmp(p, "/v1/sandboxes", 13))
		return -1;
	p += 13;
	if (!*p || *p == '?')
		return m(r, "POST") ? R_SBX_CREATE : m(r, "GET") ? R_SBX_LIST : -2;
	if (segment(&p, r->sid, sizeof r->sid))
		return -1;
	if (!*p || *p == '?')
		return m(r, "GET") ? R_SBX_GET : m(r, "DELETE") ? R_SBX_DELETE : -2;
	if (segment(&p, seg, sizeof seg))
		return -1;
	int end = !*p || *p == '?';
	if (!strcmp(seg, "extend") && end)
		return m(r, "POST") ? R_SBX_EXTEND : -2;
	if (!strcmp(seg, "pty") && end)
		return R_WS_ONLY;
	if (!strcmp(seg, "token") && end)
		return m(r, "POST") ? R_TOKEN : -2;
	if (!strcmp(seg, "files")) {
		if (end)
			return m(r, "PUT") ? R_FILE_PUT : m(r, "GET") ? R_FILE_GET : -2;
		if (segment(&p, seg, sizeof seg) || (*p && *p != '?'))
			return -1;
		if (!strcmp(seg, "mkdir"))
			return m(r, "POST") ? R_FILE_MKDIR : -2;
		if (!strcmp(seg, "list"))
			return m(r, "GET") ? R_FILE_LIST : -2;
		return -1;
	}
	if (strcmp(seg, "commands"))
		return -1;
	if (end)
		return m(r, "POST") ? R_CMD_EXEC : m(r, "GET") ? R_CMD_LIST : -2;
	if (segment(&p, r->cid, sizeof r->cid))
		return -1;
	if (!*p || *p == '?')
		return m(r, "GET") ? R_CMD_GET : -2;
	if (segment(&p, seg, sizeof seg) || (*p && *p != '?'))
		return -1;
	if (!strcmp(seg, "kill"))
		return m(r, "POST") ? R_CMD_KILL : -2;
	if (!strcmp(seg, "stdin"))
		return m(r, "POST") ? R_CMD_STDIN : -2;
	if (!strcmp(seg, "logs"))
		return m(r, "GET") ? R_CMD_LOGS : -2;
	if (!strcmp(seg, "stream"))
		return R_WS_ONLY;
	return -1;
}

static int64_t content_length(struct gw_req *r)
{
	char b[32];
	if (lws_hdr_copy(r->wsi, b, sizeof b, WSI_TOKEN_HTTP_CONTENT_LENGTH) <= 0)
		return 0;
	return strtoll(b, NULL, 10);
}

/* The scopes a token request names: {"scopes":["read","write","terminal"]},
 * read alone when it names none. 0 after answering 422. */
static unsigned token_scopes(struct gw_req *r, const cJSON *body)
{
	static const struct { const char *name; unsigned bit; } names[] = {
		{ "read", GW_SCOPE_READ }, { "write", GW_SCOPE_WRITE },
		{ "terminal", GW_SCOPE_TERMINAL },
	};
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(body, "scopes"), *e;
	unsigned scope = 0;

	if (!a)
		return GW_SCOPE_READ;
	if (!cJSON_IsArray(a) || !cJSON_GetArraySize(a)) {
		gw_resp_error(r, 422, "invalid", "scopes must be a non-empty array of \"read\", \"write\", \"terminal\"");
		return 0;
	}
	cJSON_ArrayForEach(e, a) {
		size_t i = 0;
		while (i < sizeof names / sizeof names[0] &&
		       !(cJSON_IsString(e) && !strcmp(e->valuestring, names[i].name)))
			i++;
		if (i == sizeof names / sizeof names[0]) {
			gw_resp_error(r, 422, "invalid", "unknown scope (read, write, terminal)");
			return 0;
		}
		scope |= names[i].bit;
	}
	return scope;
}

/* POST .../token: a stream token for WebSocket URLs (docs/api.md) */
static void token(struct gw_req *r, cJSON *body)
{
	char t[128];
	int64_t exp = gw_now_ms() + GW_TOKEN_TTL_MS;
	unsigned scope = token_scopes(r, body);
	cJSON *o, *a;

	cJSON_Delete(body);
	if (!scope)
		return;
	if (gw_token_make(r->vh, r->key, r->sid, exp, scope, t, sizeof t)) {
		gw_resp_error(r, 500, "internal", "cannot make a token");
		return;
	}
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "token", t);
	cJSON_AddNumberToObject(o, "expires_at", (double)exp);
	a = cJSON_AddArrayToObject(o, "scopes");
	if (scope & GW_SCOPE_READ)
		cJSON_AddItemToArray(a, cJSON_CreateString("read"));
	if (scope & GW_SCOPE_WRITE)
		cJSON_AddItemToArray(a, cJSON_CreateString("write"));
	if (scope & GW_SCOPE_TERMINAL)
		cJSON_AddItemToArray(a, cJSON_CreateString("terminal"));
	gw_resp_json(r, 201, o);
}

static void dispatch(struct gw_req *r, cJSON *body)
{
	switch (r->route) {
	case R_SBX_CREATE: gw_sandbox_create(r, body); return;
	case R_SBX_EXTEND: gw_sandbox_extend(r, body); return;
	case R_CMD_EXEC: gw_cmd_exec(r, body); return;
	case R_CMD_KILL: gw_cmd_kill(r, body); return;
	case R_FILE_MKDIR: gw_files_mkdir(r, body); return;
	case R_TOKEN: token(r, body); return;
	default: break;
	}
	cJSON_Delete(body);
	switch (r->route) {
	case R_SBX_LIST: gw_sandbox_list(r); return;
	case R_CAPABILITIES: gw_sandbox_capabilities(r); return;
	case R_SBX_GET: gw_sandbox_get(r); return;
	case R_SBX_DELETE: gw_sandbox_delete(r); return;
	case R_CMD_LIST:
		gw_cmd_simple(r, cJSON_CreateObject(), NULL);
		return;
	case R_CMD_GET: {
		int wait = 0;
		if (gw_query_bool(r, "wait", &wait) < 0)
			return;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "op", wait ? "wait" : "status");
		if (wait)
			gw_keepalive_http_start(r, 0);   /* as long as the command runs */
		cJSON_AddStringToObject(o, "id", r->cid);
		gw_cmd_simple(r, o, "command");
		return;
	}
	case R_FILE_GET:
		gw_keepalive_http_download(r);
		gw_files_get(r);
		return;
	case R_CMD_LOGS:
		gw_keepalive_http_start(r, 1);
		gw_logs_start(r);
		return;
	case R_WS_ONLY:
		gw_resp_error(r, 426, "upgrade_required", "this endpoint is a WebSocket (send Upgrade: websocket)");
		return;
	case R_FILE_LIST: gw_files_list(r); return;
	default:
		gw_resp_error(r, 404, "not_found", "no such endpoint");
	}
}

static int needs_json_body(int route)
{
	return route == R_SBX_CREATE || route == R_SBX_EXTEND || route == R_CMD_EXEC ||
	       route == R_CMD_KILL || route == R_FILE_MKDIR || route == R_TOKEN;
}

/* The query arguments each endpoint takes; any other is refused. */
static const char *const *route_args(int route)
{
	static const char *const none[] = { NULL };
	static const char *const put[] = { "path", "mode", NULL };
	static const char *const path[] = { "path", NULL };
	static const char *const wait[] = { "wait", NULL };
	static const char *const eof[] = { "eof", NULL };
	static const char *const logs[] = { "since", "follow", "encoding", NULL };

	switch (route) {
	case R_FILE_PUT: return put;
	case R_FILE_GET: case R_FILE_LIST: return path;
	case R_CMD_GET: return wait;
	case R_CMD_STDIN: return eof;
	case R_CMD_LOGS: return logs;
	default: return none;
	}
}

void gw_route(struct gw_req *r)
{
	if (!strcmp(r->uri, "/healthz") || !strncmp(r->uri, "/healthz?", 9)) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "status", "ok");
		gw_resp_json(r, 200, o);
		return;
	}
	if (!strcmp(r->uri, "/metrics") || !strncmp(r->uri, "/metrics?", 9)) {
		/* every tenant's counters: only for the metrics key */
		if (!gw_auth_metrics(r->vh, r->wsi)) {
			gw_resp_error(r, 401, "unauthorized", r->vh->metrics_key[0] ?
				      "metrics need the metrics key (Authorization: Bearer <metrics key>)" :
				      "metrics are off: start the gateway with --metrics-key-file or SANDBOX_METRICS_KEY");
			return;
		}
		gw_metrics_reply(r);
		return;
	}
	if (gw_mcp_is_path(r->uri)) {
		gw_mcp_route(r);
		return;
	}
	if (gw_static_try(r))
		return;
	int route = pick(r);
	if (route == -1) {
		gw_resp_error(r, 404, "not_found", "no such endpoint");
		return;
	}
	r->key = gw_auth_check(r->vh, r->wsi, 0, NULL, &r->scope);
	if (r->key < 0) {
		gw_resp_error(r, 401, "unauthorized", "missing or unknown API key (Authorization: Bearer <key>)");
		return;
	}
	if (route == -2) {
		gw_resp_error(r, 405, "method_not_allowed", "method %s not allowed here", r->method);
		return;
	}
	r->route = route;
	if (r->sid[0] && gw_owner_get(r->vh, r->sid) != r->key) {
		gw_resp_error(r, 404, "not_found", "no sandbox %s", r->sid);
		return;
	}
	if (route != R_WS_ONLY) {
		char why[160];
		if (gw_query_known(r->wsi, route_args(route), why, sizeof why)) {
			r->close_after = 1;
			gw_resp_error(r, 422, "invalid", "%s", why);
			return;
		}
	}
	r->body_expected = content_length(r);
	if (r->body_expected < 0) {
		r->close_after = 1;
		gw_resp_error(r, 400, "bad_request", "bad Content-Length");
		return;
	}
	if (lws_hdr_total_length(r->wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0) {
		/* lws 4.1 gives no body completion for chunked requests */
		r->close_after = 1;
		gw_resp_error(r, 411, "length_required", "send a Content-Length (chunked bodies are not accepted)");
		return;
	}
	if (route == R_FILE_PUT || route == R_CMD_STDIN) {
		if (r->body_expected > (int64_t)(route == R_FILE_PUT ? GW_FILE_BODY_CAP : SBX_FRAME_MAX)) {
			r->close_after = 1;
			gw_resp_error(r, 413, "too_large", "body over %u bytes",
				      route == R_FILE_PUT ? GW_FILE_BODY_CAP : SBX_FRAME_MAX);
			return;
		}
		r->body_stream = 1;
		if (route == R_FILE_PUT)
			gw_files_put_start(r);
		else
			gw_cmd_stdin_start(r);
		if (!r->body_expected && !r->resp_ready) {
			r->body_done = 1;
			if (route == R_FILE_PUT)
				gw_files_put_done(r);
			else
				gw_cmd_stdin_done(r);
		}
		return;
	}
	if (r->body_expected > GW_JSON_BODY_CAP) {
		r->close_after = 1;
		gw_resp_error(r, 413, "too_large", "body over %d bytes", GW_JSON_BODY_CAP);
		return;
	}
	if (!r->body_expected || !needs_json_body(route)) {
		r->body_done = 1;
		dispatch(r, needs_json_body(route) ? cJSON_CreateObject() : NULL);
		return;
	}
	sbx_buf_init(&r->body, GW_JSON_BODY_CAP);
}

void gw_route_body(struct gw_req *r, const void *in, size_t len)
{
	if (r->resp_ready || r->body_done)
		return;
	r->body_seen += len;
	if (r->body_stream) {
		if (r->route == R_FILE_PUT)
			gw_files_put_data(r, in, len);
		else
			gw_cmd_stdin_data(r, in, len);
		if (r->up && r->up_out.len >= GW_QUEUE_HIGH && !r->http_rx_paused) {
			r->http_rx_paused = 1;
			lws_rx_flow_control(r->wsi, 0);
		}
		return;
	}
	if (sbx_buf_append(&r->body, in, len)) {
		r->close_after = 1;
		gw_resp_error(r, 413, "too_large", "body over %d bytes", GW_JSON_BODY_CAP);
	}
}

void gw_route_body_done(struct gw_req *r)
{
	struct sbx_err err = { 0 };
	if (r->resp_ready || r->body_done)
		return;
	r->body_done = 1;
	if (r->body_stream) {
		if (r->route == R_FILE_PUT)
			gw_files_put_done(r);
		else
			gw_cmd_stdin_done(r);
		return;
	}
	if (r->mcp) {
		gw_mcp_body_done(r);
		return;
	}
	cJSON *o = sbx_json_parse_object(sbx_buf_head(&r->body), r->body.len, &err);
	if (!o) {
		gw_resp_error(r, 400, "bad_request", "%s", err.msg);
		return;
	}
	dispatch(r, o);
}
