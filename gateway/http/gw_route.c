/* Request routing: the route table (gw_route.h; its rows are the
 * composition root's, gw_routes.c) and the one path every HTTP request
 * takes through it: path, key, method, ownership, query
 * arguments, Content-Length and body (JSON capped and answered 413 from
 * Content-Length without reading it; file uploads and stdin streamed to
 * the agent). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../http/gw_req.h"
#include "gw_route.h"
#include "gw_rest_sink.h"

static const struct gw_route *routes;
static size_t nroutes;

void gw_route_table(const struct gw_route *rows, size_t n)
{
	routes = rows;
	nroutes = n;
}


static int is_id_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
	       (c >= 'A' && c <= 'Z') || c == '-';
}

/* 1 when path (up to its end or a '?') fits the pattern, with {sid} and
 * {cid} copied into sid and cid (80 bytes each). */
static int match(const struct gw_route *rt, const char *path, char *sid, char *cid)
{
	const char *pat = rt->pattern;

	while (*pat) {
		if (*pat == '{') {
			char *dst = pat[1] == 's' ? sid : cid;
			size_t n = 0;
			while (is_id_char(path[n])) {
				if (n + 1 >= 80)
					return 0;
				dst[n] = path[n];
				n++;
			}
			if (!n)
				return 0;
			dst[n] = '\0';
			path += n;
			pat = strchr(pat, '}') + 1;
		} else if (*pat++ != *path++) {
			return 0;
		}
	}
	return rt->prefix || !*path || *path == '?';
}

const struct gw_route *gw_route_ws(const char *path, char *sid, char *cid)
{
	for (size_t i = 0; i < nroutes; i++)
		if (routes[i].ws && match(&routes[i], path, sid, cid))
			return &routes[i];
	return NULL;
}

/* The row for r's path and method, or NULL; *first is the path's first
 * row (NULL: no row has this path), whose parameters r gets and whose
 * auth holds for the whole path; allow lists the path's methods. */
static const struct gw_route *find(struct gw_req *r, const struct gw_route **first,
				   char *allow, size_t n)
{
	const struct gw_route *hit = NULL;
	char sid[80], cid[80];

	*first = NULL;
	allow[0] = '\0';
	for (size_t i = 0; i < nroutes; i++) {
		const struct gw_route *rt = &routes[i];
		size_t k = strlen(allow);
		if (!match(rt, r->uri, sid, cid))
			continue;
		if (!*first) {
			*first = rt;
			if (strstr(rt->pattern, "{sid}"))
				snprintf(r->sid, sizeof r->sid, "%s", sid);
			if (strstr(rt->pattern, "{cid}"))
				snprintf(r->cid, sizeof r->cid, "%s", cid);
		}
		if (rt->method && k + strlen(rt->method) + 3 < n)
			snprintf(allow + k, n - k, "%s%s", k ? ", " : "", rt->method);
		if (!hit && (!rt->method || !strcmp(rt->method, r->method)))
			hit = rt;
	}
	return hit;
}

static int64_t content_length(struct gw_req *r)
{
	char b[32];
	if (lws_hdr_copy(r->wsi, b, sizeof b, WSI_TOKEN_HTTP_CONTENT_LENGTH) <= 0)
		return 0;
	return strtoll(b, NULL, 10);
}

/* Key, then method: 0 to go on, -1 after answering. */
static int admit(struct gw_req *r, const struct gw_route *first, const struct gw_route *rt,
		 const char *allow)
{
	if (first->auth == GW_AUTH_KEY_OR_OPERATOR && gw_auth_metrics(r->vh, r->wsi)) {
		/* the operator: no key of its own (r->key stays -1) */
	} else if (first->auth != GW_AUTH_NONE) {
		r->key = gw_auth_check(r->vh, r->wsi, 0, NULL, &r->scope);
		if (r->key < 0) {
			if (first->auth == GW_AUTH_KEY_CHALLENGE) {
				r->xhdr.name = "www-authenticate:";
				snprintf(r->xhdr.val, sizeof r->xhdr.val, "Bearer");
			}
			gw_resp_error(r, 401, "unauthorized", "missing or unknown API key (Authorization: Bearer <key>)");
			return -1;
		}
	}
	if (!rt) {
		r->xhdr.name = "allow:";
		snprintf(r->xhdr.val, sizeof r->xhdr.val, "%s", allow);
		gw_resp_error(r, 405, "method_not_allowed", "method %s not allowed here", r->method);
		return -1;
	}
	return 0;
}

/* Query arguments, Content-Length: 0 to go on, -1 after answering. */
static int check(struct gw_req *r, const struct gw_route *rt, size_t cap)
{
	char why[160];

	if (rt->ws) {
		gw_resp_error(r, 426, "upgrade_required", "this endpoint is a WebSocket (send Upgrade: websocket)");
		return -1;
	}
	if (rt->args && gw_query_known(r->wsi, rt->args, why, sizeof why)) {
		r->close_after = 1;
		gw_resp_error(r, 422, "invalid", "%s", why);
		return -1;
	}
	if (lws_hdr_total_length(r->wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0) {
		/* lws 4.1 gives no body completion for chunked requests */
		r->close_after = 1;
		gw_resp_error(r, 411, "length_required", "send a Content-Length (chunked bodies are not accepted)");
		return -1;
	}
	r->body_expected = content_length(r);
	if (r->body_expected < 0) {
		r->close_after = 1;
		gw_resp_error(r, 400, "bad_request", "bad Content-Length");
		return -1;
	}
	if (r->body_expected > (int64_t)cap) {
		r->close_after = 1;
		gw_resp_error(r, 413, "too_large", "body over %zu bytes", cap);
		return -1;
	}
	return 0;
}

static void proceed(struct gw_req *r);

/* What came of the body while the owner was asked goes the usual way;
 * reading again also after an answer: lws 4.1 writes no response on a
 * connection whose body it may not read (the rest is discarded). */
static void release_held(struct gw_req *r, int waited)
{
	if (waited && r->hold.body.len && !r->resp_ready)
		gw_route_body(r, sbx_buf_head(&r->hold.body), r->hold.body.len);
	if (waited && r->hold.done && !r->resp_ready)
		gw_route_body_done(r);
	sbx_buf_free(&r->hold.body);
	if (r->hold.paused && r->wsi) {
		r->hold.paused = 0;
		lws_rx_flow_control(r->wsi, 1 | LWS_RXFLOW_REASON_FLAG_PROCESS_NOW);
	}
	if (waited)
		gw_req_wake(r);
}

void gw_route_admit_failed(struct gw_req *r)
{
	if (!r->hold.pending)
		return;
	r->hold.pending = 0;
	if (r->body_expected > 0 && !r->hold.done)
		r->close_after = 1;   /* the rest of the body is not read */
	release_held(r, 1);
}

/* The key may use the route's sandbox (svc_admit): its checks, then its
 * handler. */
static void admitted(struct svc_call *c)
{
	struct gw_req *r = c->owner;
	int waited = r->hold.pending;

	r->hold.pending = 0;
	proceed(r);
	release_held(r, waited);
}

void gw_route(struct gw_req *r)
{
	char allow[64];
	const struct gw_route *first, *rt = find(r, &first, allow, sizeof allow);

	if (!first) {
		if (!gw_static_try(r))
			gw_resp_error(r, 404, "not_found", "no such endpoint");
		return;
	}
	if (admit(r, first, rt, allow))
		return;
	r->rt = rt;
	if (!r->sid[0]) {
		proceed(r);
		return;
	}
	/* the sandbox in the path: the key's, or 404 (svc_admit) */
	struct svc_call *c = gw_rest_call(r, &gw_rest_json_sink);
	if (!c) {
		gw_resp_error(r, 500, "internal", "out of memory");
		return;
	}
	int known = svc_admit_known(c);
	if (known)   /* answered 404, or the key's */
		return known > 0 ? proceed(r) : (void)0;
	r->body_expected = content_length(r);   /* for gw_route_admit_failed's close */
	sbx_buf_init(&r->hold.body, GW_JSON_BODY_CAP);
	r->hold.pending = 1;
	svc_admit(c, admitted);
}

/* After the owner check: the route's checks, then its handler. */
static void proceed(struct gw_req *r)
{
	const struct gw_route *rt = r->rt;
	size_t cap = rt->body_cap ? rt->body_cap : GW_JSON_BODY_CAP;

	if (check(r, rt, cap))
		return;
	switch (rt->body) {
	case GW_BODY_NONE:
		r->body_done = 1;
		rt->start(r);
		return;
	case GW_BODY_JSON:
		if (!r->body_expected) {
			r->body_done = 1;
			rt->json(r, cJSON_CreateObject());
			return;
		}
		sbx_buf_init(&r->body, cap);
		return;
	case GW_BODY_RAW:
		sbx_buf_init(&r->body, cap);
		rt->start(r);
		if (!r->body_expected && !r->resp_ready) {
			r->body_done = 1;
			rt->done(r);
		}
		return;
	case GW_BODY_STREAM:
		r->body_stream = 1;
		rt->start(r);
		if (!r->body_expected && !r->resp_ready) {
			r->body_done = 1;
			rt->done(r);
		}
		return;
	}
}

void gw_route_body(struct gw_req *r, const void *in, size_t len)
{
	if (r->hold.pending) {   /* held until the owner is known (svc_admit) */
		if (sbx_buf_append(&r->hold.body, in, len)) {
			r->hold.pending = 0;
			if (r->call)
				gw_owner_lookup_cancel(&r->call->own_wait);
			r->close_after = 1;
			gw_resp_error(r, 503, "no_capacity", "the sandbox's owner is being looked up; "
				      "send the body again");
			return;
		}
		if (!r->hold.paused && r->wsi) {
			r->hold.paused = 1;
			lws_rx_flow_control(r->wsi, 0);
		}
		return;
	}
	if (r->resp_ready || r->body_done || !r->rt)
		return;
	r->body_seen += len;
	if (r->body_stream) {
		r->rt->data(r, in, len);
		if (r->call && r->call->up.wsi && gw_up_queued(&r->call->up) >= GW_QUEUE_HIGH &&
		    !r->http_rx_paused) {
			r->http_rx_paused = 1;
			lws_rx_flow_control(r->wsi, 0);
		}
		return;
	}
	if (sbx_buf_append(&r->body, in, len)) {
		r->close_after = 1;
		gw_resp_error(r, 413, "too_large", "body over %zu bytes", r->body.cap);
	}
}

void gw_route_body_done(struct gw_req *r)
{
	struct sbx_err err = { 0 };
	if (r->hold.pending) {
		r->hold.done = 1;
		return;
	}
	if (r->resp_ready || r->body_done || !r->rt)
		return;
	r->body_done = 1;
	if (r->rt->body != GW_BODY_JSON) {
		r->rt->done(r);
		return;
	}
	cJSON *o = sbx_json_parse_object(sbx_buf_head(&r->body), r->body.len, &err);
	if (!o) {
		gw_resp_error(r, 400, "bad_request", "%s", err.msg);
		return;
	}
	r->rt->json(r, o);
}
