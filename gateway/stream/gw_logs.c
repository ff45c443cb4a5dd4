/* GET .../commands/{cid}/logs?since=N&follow=1&encoding=base64: the
 * command's output as ndjson, one line per chunk
 * {"stream":"stdout","data":"..","offset":N} (offset: where the chunk's
 * first byte is in the output of both streams), then
 * {"exit_code":..,"signal":..} once it ended. Without follow the lines stop
 * at what existed when the request came. Text mode writes bytes that are
 * not UTF-8 as U+FFFD; base64 keeps them exact. Lines are built here
 * rather than with cJSON so that NUL bytes survive (as \u0000). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/gw.h"
#include "sbx_text.h"


static int chunk_line(struct gw_req *r, const struct sbx_frame *f)
{
	char tail[64];

	if (sbx_buf_append(&r->resp, f->type == SBX_FRAME_STDOUT ? "{\"stream\":\"stdout\",\"data\":\"" :
		"{\"stream\":\"stderr\",\"data\":\"", 27) ||
	    (r->op.b64 ? sbx_text_base64(&r->resp, f->payload, f->len) :
			   sbx_text_json(&r->resp, f->payload, f->len)))
		return -1;
	snprintf(tail, sizeof tail, "\",\"offset\":%llu}\n", (unsigned long long)r->op.logs_off);
	r->op.logs_off += f->len;
	r->vh->m.bytes_streamed += f->len;
	return sbx_buf_append(&r->resp, tail, strlen(tail));
}

static int json_line(struct gw_req *r, cJSON *o)
{
	char *s = sbx_json_print(o);
	int rc = s && !sbx_buf_append(&r->resp, s, strlen(s)) && !sbx_buf_append(&r->resp, "\n", 1) ? 0 : -1;

	cJSON_free(s);
	cJSON_Delete(o);
	return rc;
}

static int on_frame(struct gw_req *r, const struct sbx_frame *f)
{
	const cJSON *t;
	cJSON *o;
	int rc = 0;

	if (r->op.phase == GW_OP_STREAMING && (f->type == SBX_FRAME_STDOUT || f->type == SBX_FRAME_STDERR)) {
		if (r->logs_chunk) {
			r->op.logs_off += f->len;
			r->vh->m.bytes_streamed += f->len;
			rc = r->logs_chunk(r, f->type == SBX_FRAME_STDERR, f->payload, f->len);
		} else {
			rc = chunk_line(r, f);
		}
		goto out;
	}
	if (!(o = gw_reply_json(r, f, r->op.phase == GW_OP_FIRST, "frame from the sandbox")))
		return -1;
	if (r->op.phase == GW_OP_FIRST) {
		const cJSON *off = cJSON_GetObjectItemCaseSensitive(o, "offset");
		r->op.logs_off = cJSON_IsNumber(off) ? (uint64_t)off->valuedouble : 0;
		r->op.phase = GW_OP_STREAMING;
		cJSON_Delete(o);
		gw_resp_start_stream(r, 200, "application/x-ndjson", -1);
		return 0;
	}
	t = cJSON_GetObjectItemCaseSensitive(o, "type");
	if (cJSON_IsString(t) && !strcmp(t->valuestring, "exit")) {
		cJSON_DeleteItemFromObjectCaseSensitive(o, "type");
		if (r->logs_exit) {
			rc = r->logs_exit(r, o);
			cJSON_Delete(o);
		} else {
			rc = json_line(r, o);
		}
		r->resp_done = 1;
		gw_req_wake(r);
		return rc ? -1 : 1;
	}
	if (cJSON_IsString(t) && !strcmp(t->valuestring, "end")) {
		cJSON_Delete(o);
		r->resp_done = 1;
		gw_req_wake(r);
		return 1;
	}
	if (cJSON_IsString(t) && !strcmp(t->valuestring, "truncated")) {
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "bytes");
		if (cJSON_IsNumber(b))
			r->op.logs_off += (uint64_t)b->valuedouble;
		if (r->logs_chunk) {   /* the SDK's lines have no form for a gap */
			cJSON_Delete(o);
			goto out;
		}
		cJSON_DeleteItemFromObjectCaseSensitive(o, "type");
		cJSON_AddNumberToObject(o, "truncated", cJSON_IsNumber(b) ? b->valuedouble : 0);
		cJSON_DeleteItemFromObjectCaseSensitive(o, "bytes");
		rc = json_line(r, o);
		goto out;
	}
	cJSON_Delete(o);
out:
	gw_keepalive_lines_sent(r);
	if (rc) {
		/* headers went out already: end the response where it is */
		r->resp_done = 1;
		r->close_after = 1;
		gw_req_wake(r);
		return 1;
	}
	gw_req_wake(r);
	return 0;
}

void gw_logs_start(struct gw_req *r)
{
	char enc[GW_QUERY_ENC_MAX + 1];
	int64_t off = 0;
	int follow = 0, has_enc;

	if (gw_query_i64(r, "since", 0, INT64_MAX / 2, &off) < 0 ||
	    gw_query_bool(r, "follow", &follow) < 0 ||
	    (has_enc = gw_query_str(r, "encoding", enc, sizeof enc)) < 0)
		return;
	if (has_enc && strcmp(enc, "base64") && strcmp(enc, "utf-8") && strcmp(enc, "text"))
		return (void)gw_resp_error(r, 422, "invalid", "encoding is base64 or text");
	gw_logs_open(r, off, follow, has_enc && !strcmp(enc, "base64"));
}

void gw_logs_open(struct gw_req *r, int64_t off, int follow, int b64)
{
	cJSON *a;

	r->op.b64 = b64;
	a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "op", "attach");
	cJSON_AddStringToObject(a, "id", r->cid);
	cJSON_AddNumberToObject(a, "offset", (double)off);
	cJSON_AddBoolToObject(a, "follow", follow);
	gw_req_agent(r, a, on_frame);
}
