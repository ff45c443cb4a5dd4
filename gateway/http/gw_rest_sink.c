/* The HTTP side of the service layer: a request's operation
 * is r->call, and its answers become the HTTP response through one of
 * three sinks: JSON (most routes), a file's bytes (GET .../files), and
 * ndjson lines (GET .../logs). Backpressure both ways: the upstream is
 * not read while the response queue is full, and a streamed body is not
 * read while the upstream's queue is. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../http/gw_req.h"
#include "../svc/svc.h"
#include "gw_rest_sink.h"

static struct gw_req *req_of(struct svc_call *c)
{
	return c->owner;
}

void gw_rest_reply(struct svc_call *c, int status, cJSON *body)
{
	if (status == 204) {   /* no content: the body is for other front ends */
		cJSON_Delete(body);
		gw_resp_empty(req_of(c), 204);
		return;
	}
	gw_resp_json(req_of(c), status, body);
}

/* A failure after a streamed answer began ends it where it is; a body
 * still coming is not read (the connection closes after the answer). */
void gw_rest_fail(struct svc_call *c, int status, const char *code, const char *msg)
{
	struct gw_req *r = req_of(c);

	if (r->resp_ready) {
		r->close_after = 1;
		r->resp_done = 1;
		gw_req_wake(r);
		return;
	}
	if (r->body_stream && !r->body_done)
		r->close_after = 1;
	gw_resp_error(r, status, code, "%s", msg);
	gw_route_admit_failed(r);
}

int gw_rest_full(struct svc_call *c)
{
	return req_of(c)->resp.len >= GW_QUEUE_HIGH;
}

/* the upstream took a streamed body: read the client again */
void gw_rest_drained(struct svc_call *c)
{
	struct gw_req *r = req_of(c);
	if (r->http_rx_paused && r->wsi) {
		r->http_rx_paused = 0;
		lws_rx_flow_control(r->wsi, 1 | LWS_RXFLOW_REASON_FLAG_PROCESS_NOW);
	}
}

void gw_rest_end(struct svc_call *c, int cut)
{
	struct gw_req *r = req_of(c);
	if (!r->resp_ready)   /* nothing came of a size 0: all here */
		gw_resp_start_stream(r, 200, "application/octet-stream", (int64_t)r->resp.len);
	if (cut)
		r->close_after = 1;   /* the client must see it cut */
	r->resp_done = 1;
	gw_req_wake(r);
}

static int j_begin(struct svc_call *c, int64_t size)
{
	(void)c;
	(void)size;
	return 0;
}

const struct svc_sink gw_rest_json_sink = {
	.reply = gw_rest_reply, .fail = gw_rest_fail, .begin = j_begin,
	.end = gw_rest_end,
	.full = gw_rest_full, .drained = gw_rest_drained,
};

/* A file: the size the agent gave is the Content-Length; with none, the
 * bytes go out as they come, without one (the connection then closes). */
static int f_begin(struct svc_call *c, int64_t size)
{
	if (size > 0)
		gw_resp_start_stream(req_of(c), 200, "application/octet-stream", size);
	return 0;
}

static int f_data(struct svc_call *c, int stream, const void *p, size_t n)
{
	struct gw_req *r = req_of(c);
	(void)stream;
	if (!r->resp_ready)
		gw_resp_start_stream(r, 200, "application/octet-stream", -1);
	if (sbx_buf_append(&r->resp, p, n))
		return -1;
	gw_req_wake(r);
	return 0;
}

const struct svc_sink gw_rest_file_sink = {
	.reply = gw_rest_reply, .fail = gw_rest_fail, .begin = f_begin, .data = f_data, .end = gw_rest_end,
	.full = gw_rest_full, .drained = gw_rest_drained,
};

/* ndjson logs (docs/api.md): {"stream":"stdout","data":"..","offset":N}
 * per chunk, built here rather than with cJSON so that NUL bytes survive
 * (as \u0000); text mode writes bytes that are not UTF-8 as U+FFFD,
 * base64 keeps them exact. */
static int l_begin(struct svc_call *c, int64_t size)
{
	(void)size;
	gw_resp_start_stream(req_of(c), 200, "application/x-ndjson", -1);
	return 0;
}

static int l_data(struct svc_call *c, int stream, const void *p, size_t n)
{
	struct gw_req *r = req_of(c);
	char tail[64];

	if (sbx_buf_append(&r->resp, stream == SVC_STDOUT ? "{\"stream\":\"stdout\",\"data\":\"" :
			   "{\"stream\":\"stderr\",\"data\":\"", 27) ||
	    (c->op.b64 ? sbx_text_base64(&r->resp, p, n) : sbx_text_json(&r->resp, p, n)))
		return -1;
	snprintf(tail, sizeof tail, "\",\"offset\":%llu}\n", (unsigned long long)c->op.logs_off);
	if (sbx_buf_append(&r->resp, tail, strlen(tail)))
		return -1;
	gw_keepalive_lines_sent(r);
	gw_req_wake(r);
	return 0;
}

static int l_event(struct svc_call *c, const char *type, const cJSON *o)
{
	struct gw_req *r = req_of(c);
	char *s = sbx_json_print(o);
	int rc = s && !sbx_buf_append(&r->resp, s, strlen(s)) && !sbx_buf_append(&r->resp, "\n", 1) ? 0 : -1;

	(void)type;
	cJSON_free(s);
	gw_keepalive_lines_sent(r);
	gw_req_wake(r);
	return rc;
}

const struct svc_sink gw_rest_logs_sink = {
	.reply = gw_rest_reply, .fail = gw_rest_fail, .begin = l_begin, .data = l_data, .event = l_event,
	.end = gw_rest_end, .full = gw_rest_full, .drained = gw_rest_drained,
};

struct svc_call *gw_rest_call(struct gw_req *r, const struct svc_sink *sink)
{
	struct svc_call *c = r->call;

	if (!c) {
		if (!(c = r->call = malloc(sizeof *c)))
			return NULL;
		svc_call_init(c, r->vh, r->wsi, sink, r, r->key);
		snprintf(c->sid, sizeof c->sid, "%s", r->sid);
		snprintf(c->cid, sizeof c->cid, "%s", r->cid);
	}
	c->sink = sink;
	return c;
}

void gw_rest_call_free(struct gw_req *r)
{
	if (r->call) {
		svc_call_reset(r->call);
		free(r->call);
		r->call = NULL;
	}
}
