/* HTTP responses. Handlers only fill r->resp and ask for a WRITEABLE
 * callback; gw_resp_writeable() sends the headers in one write, then the
 * body in GW_CHUNK pieces, one lws_write per callback. Errors are mapped to
 * the API's JSON error bodies here and nowhere else. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "../http/gw_req.h"
#include "../core/gw_refusal.h"
#include "gw_rest_sink.h"
#include "sbx_log.h"

void gw_req_reset(struct gw_req *r)
{
	struct gw_vh *vh = r->vh;
	struct lws *wsi = r->wsi;
	gw_rest_call_free(r);
	sbx_buf_free(&r->hold.body);
	sbx_buf_free(&r->body);
	sbx_buf_free(&r->resp);
	if (r->front.state)
		r->front.free(r->front.state);
	memset(r, 0, sizeof *r);
	r->vh = vh;
	r->wsi = wsi;
	r->key = -1;
}

void gw_req_wake(struct gw_req *r)
{
	if (r->wsi)
		gw_pipe_want_write(r->wsi);
}

static void ready(struct gw_req *r)
{
	r->resp_ready = 1;
	gw_req_wake(r);
}

/* r->resp holds a whole JSON body: send it with status. */
static void finish_json(struct gw_req *r, int status)
{
	r->status = status;
	r->ctype = "application/json";
	r->content_len = (int64_t)r->resp.len;
	r->resp_done = 1;
	ready(r);
}

void gw_resp_empty(struct gw_req *r, int status)
{
	if (r->resp_ready)
		return;
	sbx_buf_reset(&r->resp);
	finish_json(r, status);
}

void gw_resp_json(struct gw_req *r, int status, cJSON *body)
{
	char *s = body ? sbx_json_print(body) : NULL;
	cJSON_Delete(body);
	if (r->resp_ready) {
		cJSON_free(s);
		return;
	}
	sbx_buf_reset(&r->resp);
	if (!s || sbx_buf_append(&r->resp, s, strlen(s)) ||
	    sbx_buf_append(&r->resp, "\n", 1)) {
		cJSON_free(s);
		gw_resp_error(r, 500, "internal", "out of memory");
		return;
	}
	cJSON_free(s);
	finish_json(r, status);
}

int gw_resp_error(struct gw_req *r, int status, const char *code,
		  const char *fmt, ...)
{
	char msg[600];
	va_list ap;
	if (r->resp_ready)
		return -1;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	cJSON *o = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(o, "error");
	cJSON_AddStringToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", msg);
	char *s = sbx_json_print(o);
	cJSON_Delete(o);
	sbx_buf_reset(&r->resp);
	if (s)
		sbx_buf_append(&r->resp, s, strlen(s));
	sbx_buf_append(&r->resp, "\n", 1);
	cJSON_free(s);
	finish_json(r, status);
	return -1;
}

void gw_resp_start_stream(struct gw_req *r, int status, const char *ctype,
			  int64_t content_len)
{
	r->status = status;
	r->ctype = ctype;
	r->content_len = content_len;
	if (content_len < 0)
		r->close_after = 1;
	ready(r);
}

static void access_log(struct gw_req *r)
{
	struct gw_vh *vh = r->vh;
	char path[256];
	/* the query may carry access_token: log the path only */
	snprintf(path, sizeof path, "%.*s", (int)strcspn(r->uri, "?"), r->uri);
	sbx_info("access %s %s %d %llu bytes %lld ms key=%d", r->method, path,
		 r->status, (unsigned long long)r->resp_bytes,
		 (long long)((lws_now_usecs() - (lws_usec_t)r->t0_us) / 1000), r->key);
	vh->m.http_requests++;
	if (r->status >= 500)
		vh->m.http_5xx++;
	else if (r->status >= 400)
		vh->m.http_4xx++;
}

/* Returns -1 to close the connection, 0 otherwise. */
int gw_resp_writeable(struct gw_req *r)
{
	unsigned char buf[LWS_PRE + GW_CHUNK];
	unsigned char *start = buf + LWS_PRE, *p = start, *end = buf + sizeof buf;

	if (!r->active || !r->resp_ready)
		return 0;
	if (!r->hdr_sent) {
		if (lws_add_http_common_headers(r->wsi, (unsigned int)r->status, r->ctype,
				r->content_len < 0 ? LWS_ILLEGAL_HTTP_CONTENT_LEN :
				(lws_filepos_t)r->content_len, &p, end))
			return -1;
		if (r->close_after &&
		    lws_add_http_header_by_token(r->wsi, WSI_TOKEN_CONNECTION,
				(const unsigned char *)"close", 5, &p, end))
			return -1;
		/* a body of unknown length is a live stream (ndjson logs):
		 * nginx would otherwise hold it in its buffers */
		if (r->content_len < 0 &&
		    lws_add_http_header_by_name(r->wsi, (const unsigned char *)"x-accel-buffering:",
				(const unsigned char *)"no", 2, &p, end))
			return -1;
		if (r->xhdr.name &&
		    lws_add_http_header_by_name(r->wsi, (const unsigned char *)r->xhdr.name,
				(const unsigned char *)r->xhdr.val, (int)strlen(r->xhdr.val), &p, end))
			return -1;
		if (r->call && r->call->resumed &&
		    lws_add_http_header_by_name(r->wsi, (const unsigned char *)"x-sandbox-resumed:",
				(const unsigned char *)"1", 1, &p, end))
			return -1;
		if (lws_finalize_write_http_header(r->wsi, start, &p, end))
			return -1;
		r->hdr_sent = 1;
		if (r->resp.len || !r->resp_done)
			gw_pipe_want_write(r->wsi);
		else
			goto complete;
		return 0;
	}
	if (r->resp.len) {
		size_t n = r->resp.len < GW_CHUNK ? r->resp.len : GW_CHUNK;
		memcpy(start, sbx_buf_head(&r->resp), n);
		sbx_buf_consume(&r->resp, n);
		int fin = r->resp_done && !r->resp.len;
		if (lws_write(r->wsi, start, n, fin ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) < (int)n)
			return -1;
		r->resp_bytes += n;
		if (r->resp.len < GW_QUEUE_HIGH / 2 && r->call)
			svc_resume(r->call);
		if (!fin) {
			if (r->resp.len)
				gw_pipe_want_write(r->wsi);
			return 0;
		}
	} else if (!r->resp_done) {
		return 0;
	}
complete:
	/* lws keeps what the kernel did not take and would complete the
	 * transaction only once that drained, reading on meanwhile unseen
	 * (gw_pipeline.c counts what it read at the completion): wait */
	if (lws_partial_buffered(r->wsi)) {
		gw_pipe_want_write(r->wsi);
		return 0;
	}
	access_log(r);
	int close = r->close_after;
	gw_req_reset(r);
	if (close)
		return -1;
	return gw_pipe_complete(r->wsi);
}
