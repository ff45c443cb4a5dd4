/* The "http" protocol callback: thin, it turns lws events into calls on the
 * request (gw_route.c) and its response writer (gw_resp.c). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "../http/gw_req.h"
#include "../core/gw_fdguard.h"

static const struct { enum lws_token_indexes tok; const char *name; } methods[] = {
	{ WSI_TOKEN_GET_URI, "GET" }, { WSI_TOKEN_POST_URI, "POST" },
	{ WSI_TOKEN_PUT_URI, "PUT" }, { WSI_TOKEN_DELETE_URI, "DELETE" },
	{ WSI_TOKEN_OPTIONS_URI, "OPTIONS" }, { WSI_TOKEN_PATCH_URI, "PATCH" },
	{ WSI_TOKEN_HEAD_URI, "HEAD" },
};

static void start(struct gw_req *r, struct gw_vh *vh, struct lws *wsi,
		  const char *in, size_t len)
{
	r->vh = vh;
	r->wsi = wsi;
	gw_req_reset(r);
	r->active = 1;
	r->t0_us = (int64_t)lws_now_usecs();
	strcpy(r->method, "?");
	for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
		if (lws_hdr_total_length(wsi, methods[i].tok) > 0) {
			strcpy(r->method, methods[i].name);
			break;
		}
	if (len >= sizeof r->uri) {
		strcpy(r->uri, "/");
		gw_resp_error(r, 414, "too_large", "URI longer than %zu bytes", sizeof r->uri - 1);
		r->close_after = 1;
		return;
	}
	memcpy(r->uri, in, len);
	r->uri[len] = '\0';
	gw_route(r);
}

/* What lws does after the head, as lws_http_action decides it: 2 it
 * reads a body (a Content-Length above 0; a POST, PUT or PATCH without
 * a readable one counts as 100 MiB), 1 it calls BODY and BODY_COMPLETION
 * with nothing (a POST's Content-Length that reads as 0), 0 neither. */
/* The WebSocket sessions' callbacks: the stream layer's (set by main). */
static gw_http_ws_cb ws_cb;

void gw_http_set_ws(gw_http_ws_cb ws)
{
	ws_cb = ws;
}

static int body_follows(struct lws *wsi)
{
	char cl[31];   /* lws's own copy: 32 bytes less one */
	int post = lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) > 0;
	long long n = post || lws_hdr_total_length(wsi, WSI_TOKEN_PUT_URI) > 0 ||
		      lws_hdr_total_length(wsi, WSI_TOKEN_PATCH_URI) > 0;

	if (lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH) &&
	    lws_hdr_copy(wsi, cl, sizeof cl, WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0) {
		n = atoll(cl);
		if (!n)
			return post;
	}
	return n > 0 ? 2 : 0;
}

static int upgrade_ok(struct lws *wsi)
{
	char up[16];
	return lws_hdr_copy(wsi, up, sizeof up, WSI_TOKEN_UPGRADE) > 0 &&
	       !strcasecmp(up, "websocket");
}

/* LWS_CALLBACK_HTTP: a request's head is in. */
static int begin(struct gw_req *r, struct gw_vh *vh, struct lws *wsi, const char *uri)
{
	int body = body_follows(wsi);
	struct gw_pipe *p = gw_pipe_begin(wsi);

	if (!p)
		return gw_http_refuse(wsi, 503, "no_capacity", "out of memory", 0);
	/* lws would read such a request's own head again as its body, and
	 * then loop (gw_pipeline.c): refuse it before lws gets there */
	if (body == 2 && gw_pipe_read_ahead(p, wsi)) {
		vh->m.http_requests++;
		vh->m.http_4xx++;
		return gw_http_refuse(wsi, 400, "bad_request",
				      "a request with a body must wait for the response before it "
				      "(pipelined requests with bodies are not served)", 0);
	}
	p->in_body = body > 0;
	start(r, vh, wsi, uri, uri ? strlen(uri) : 0);
	if (!body)
		gw_pipe_all_in(wsi);
	return 0;
}

/* LWS_CALLBACK_HTTP_BODY: lws delivers a body only to a transaction in
 * progress. */
static int body_chunk(struct gw_req *r, struct lws *wsi, const void *in, size_t len)
{
	struct gw_pipe *p = lws_get_opaque_user_data(wsi);

	if (!r || !r->active || !p || !p->in_body)
		return -1;
	gw_route_body(r, in, len);
	return 0;
}

/* LWS_CALLBACK_HTTP_BODY_COMPLETION: once per request; lws repeats it
 * while it hands back the bytes behind the request, which it will parse
 * once the response has gone: nothing to do then until there is
 * something to write. */
static int body_end(struct gw_req *r, struct lws *wsi)
{
	struct gw_pipe *p = lws_get_opaque_user_data(wsi);

	if (!r || !r->active || !p)
		return -1;
	if (!p->in_body) {
		gw_pipe_idle(wsi);
		return 0;
	}
	gw_pipe_all_in(wsi);
	gw_route_body_done(r);
	return 0;
}

static int writeable(struct gw_req *r, struct lws *wsi)
{
	if (!r)
		return 0;
	/* before the write: a write that ends the transaction may free r
	 * with the connection */
	if (r->active)
		gw_keepalive_http_progress(r);
	gw_pipe_writeable(wsi);
	if (gw_resp_writeable(r))
		return -1;
	gw_pipe_idle(wsi);
	return 0;
}

/* A connection a WebSocket session owns: every callback is the
 * session's, its end included; the connection's own state goes last. */
static int session_callback(struct lws *wsi, enum lws_callback_reasons reason,
			    void *user, struct gw_vh *vh, void *in, size_t len)
{
	switch (reason) {
	case LWS_CALLBACK_WSI_CREATE:
		return 0;
	case LWS_CALLBACK_WSI_DESTROY:
		gw_fd_wsi(-1);
		ws_cb(wsi, reason, user, vh, in, len);
		gw_pipe_free(wsi);
		return 0;
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		if (vh)
			gw_discovery_collect(vh);
		return 0;
	default:
		return ws_cb(wsi, reason, user, vh, in, len);
	}
}

/* LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: the stream layer admits the
 * upgrade or refuses it; admitted, its session owns the connection. */
static int upgrade(struct lws *wsi, struct gw_req *r, struct gw_vh *vh, void *in, size_t len)
{
	struct gw_pipe *p = lws_get_opaque_user_data(wsi);

	if (!ws_cb || !p)
		return gw_http_refuse(wsi, 503, "no_capacity", "out of memory", 0);
	if (ws_cb(wsi, LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION, r, vh, in, len))
		return -1;
	p->upgraded = 1;
	return 0;
}

int gw_http_callback(struct lws *wsi, enum lws_callback_reasons reason,
		     void *user, void *in, size_t len)
{
	struct gw_req *r = user;
	struct gw_vh **pvh = lws_protocol_vh_priv_get(lws_get_vhost(wsi),
						      lws_get_protocol(wsi));
	struct gw_vh *vh = pvh ? *pvh : NULL;
	/* lws calls this protocol for every wsi (WSI_CREATE, WSI_DESTROY,
	 * EVENT_WAIT_CANCELLED): only an API connection's opaque data is ours */
	int ours = lws_get_protocol(wsi) && lws_get_protocol(wsi)->callback == gw_http_callback;
	struct gw_pipe *p = ours ? lws_get_opaque_user_data(wsi) : NULL;

	if (p && p->upgraded)
		return session_callback(wsi, reason, user, vh, in, len);
	switch (reason) {
	case LWS_CALLBACK_HTTP:
		if (!vh || !r)
			return -1;
		return begin(r, vh, wsi, in);
	case LWS_CALLBACK_HTTP_BODY:
		return body_chunk(r, wsi, in, len);
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		return body_end(r, wsi);
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return writeable(r, wsi);
	case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
		/* lws 4.1.6 answers an Upgrade other than websocket or h2c
		 * with 403 and ends the transaction, which frees the header
		 * table, then goes on reading the Upgrade value from it
		 * (in is that freed value): read it again from the table,
		 * and hang up on anything but websocket (h2c included) */
		return upgrade_ok(wsi) ? 0 : -1;
	case LWS_CALLBACK_RAW_ADOPT:
	case LWS_CALLBACK_RAW_RX:
		/* a CONNECT request: lws turns the connection into a raw one
		 * bound to this protocol, which nobody would ever close */
		return -1;
	case LWS_CALLBACK_HTTP_BIND_PROTOCOL:
		gw_pipe_mark(wsi);
		break;   /* and lws's own handling */
	case LWS_CALLBACK_TIMER:   /* only gw_keepalive.c sets one */
		return r ? gw_keepalive_http_timer(r) : 0;
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		return upgrade(wsi, r, vh, in, len);
	case LWS_CALLBACK_ESTABLISHED:
	case LWS_CALLBACK_RECEIVE:
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return -1;   /* a WebSocket no session owns */
	case LWS_CALLBACK_WSI_CREATE:    /* every wsi, whatever its protocol */
		gw_fd_wsi(1);
		break;
	case LWS_CALLBACK_WSI_DESTROY:
		gw_fd_wsi(-1);
		if (ours)
			gw_pipe_free(wsi);
		break;
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		/* lws_cancel_service: a signal, or the DNS thread's result */
		if (vh)
			gw_discovery_collect(vh);
		return 0;
	case LWS_CALLBACK_CLOSED_HTTP:
		if (r && r->vh) {
			gw_req_reset(r);
			r->vh = NULL;
		}
		return 0;
	default:
		break;
	}
	return lws_callback_http_dummy(wsi, reason, user, in, len);
}
