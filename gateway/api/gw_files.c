/* Files: PUT streams the body to the agent's write_file as DATA frames
 * (rx flow control on the client while the upstream queue is full); GET
 * streams read_file's DATA frames to the client (rx flow control on the
 * upstream while the response queue is full). mkdir and list are one
 * request each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/gw.h"


static int get_path(struct gw_req *r)
{
	if (r->parent || r->vercel)   /* internal or compat: the caller set qpath */
		return r->qpath[0] ? 0 : gw_resp_error(r, 422, "invalid", "path is empty");
	int rc = gw_query_str(r, "path", r->qpath, sizeof r->qpath);
	if (rc < 0)
		return -1;
	if (!rc)
		return gw_resp_error(r, 422, "invalid", "path is required");
	if (!r->qpath[0])
		return gw_resp_error(r, 422, "invalid", "path is empty");
	return 0;
}

/* mode=: octal digits only (no sign, no spaces), 0..07777 */
static int get_mode(struct gw_req *r, long *mode)
{
	char b[GW_QUERY_MODE_MAX + 1];
	if (r->parent)   /* internal: the caller set *mode */
		return 0;
	int rc = gw_query_str(r, "mode", b, sizeof b);

	if (rc <= 0)
		return rc;
	*mode = b[0] ? 0 : -1;
	for (const char *p = b; *p && *mode >= 0; p++)
		*mode = *p >= '0' && *p <= '7' ? *mode * 8 + (*p - '0') : -1;
	if (*mode < 0 || *mode > 07777)
		return gw_resp_error(r, 422, "invalid", "mode must be octal, 0..07777");
	return 1;
}

static int on_put(struct gw_req *r, const struct sbx_frame *f)
{
	cJSON *o = gw_reply_json(r, f, 1, "agent frame");
	if (!o) {
		r->close_after = 1;
		return -1;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(o, "ok");
	cJSON_AddStringToObject(o, "path", r->qpath);
	gw_resp_json(r, 200, o);
	return 1;
}

void gw_files_put_start(struct gw_req *r)
{
	long mode = r->put_mode ? r->put_mode : 0644;
	if (get_path(r) || get_mode(r, &mode) < 0)
		return;
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "op", "write_file");
	cJSON_AddStringToObject(a, "path", r->qpath);
	cJSON_AddNumberToObject(a, "mode", (double)mode);
	cJSON_AddNumberToObject(a, "uid", 1000);
	cJSON_AddNumberToObject(a, "gid", 1000);
	gw_req_agent(r, a, on_put);
}

void gw_files_put_data(struct gw_req *r, const void *in, size_t len)
{
	r->vh->m.files_put_bytes += len;
	if (gw_req_send(r, SBX_FRAME_DATA, in, len))
		gw_resp_error(r, 500, "internal", "out of memory");
}

void gw_files_put_done(struct gw_req *r)
{
	if (!r->resp_ready && gw_req_send(r, SBX_FRAME_EOF, NULL, 0))
		gw_resp_error(r, 500, "internal", "out of memory");
}

/* GET: the agent streams the file to its EOF, but the size it gave at the
 * start (stat's, what a Content-Length promises) may be wrong both ways:
 * a file that grows while read goes on past it, one that shrinks ends
 * short, and a procfs file says 0 and has content (/proc/self/pagemap,
 * without end). So a read stops at the size it promised (the bytes past
 * it are not sent: the response stays framed), ends the connection when
 * the file ended short, and when the size said 0 streams to EOF without a
 * Content-Length (the connection then closes). A bounded read (an
 * internal one, r->resp_cap) is answered whole at its end: 413 when it
 * passes the bound. Every way out answers and wakes the reader. */

/* The read ended (EOF, or the size promised reached): 1. */
static int get_done(struct gw_req *r)
{
	if (!r->resp_ready)   /* bounded, or nothing came of a size 0: all here */
		gw_resp_start_stream(r, 200, "application/octet-stream", (int64_t)r->resp.len);
	else if (r->op.file_got < r->op.file_size)
		r->close_after = 1;   /* shorter than promised: the client must see it cut */
	r->resp_done = 1;
	gw_req_wake(r);
	return 1;
}

/* The read failed midway (why: the agent's error frame, or NULL): an error
 * answer while nothing was promised, else the response ends cut. */
static int get_failed(struct gw_req *r, const struct sbx_frame *f)
{
	if (!r->resp_ready) {
		cJSON_Delete(f ? gw_reply_json(r, f, 1, "agent frame") : NULL);
		gw_resp_error(r, 500, "internal", "the read failed midway");   /* when not answered above */
		return -1;
	}
	r->close_after = 1;
	r->resp_done = 1;
	gw_req_wake(r);
	return 1;
}

static int get_data(struct gw_req *r, const unsigned char *p, size_t n)
{
	if (r->op.file_size > 0 && (int64_t)n > r->op.file_size - r->op.file_got)
		n = (size_t)(r->op.file_size - r->op.file_got);   /* grew while read */
	if (r->resp_cap && (uint64_t)r->op.file_got + n > r->resp_cap)
		return gw_resp_error(r, 413, "too_large",
				     "file over %zu bytes (its size said %lld: it grew, or says nothing)",
				     r->resp_cap, (long long)r->op.file_size);
	if (!r->resp_ready && !r->resp_cap)   /* the size said 0: a stream of unknown length */
		gw_resp_start_stream(r, 200, "application/octet-stream", -1);
	if (sbx_buf_append(&r->resp, p, n))
		return get_failed(r, NULL);
	r->op.file_got += (int64_t)n;
	r->vh->m.files_get_bytes += n;
	if (r->op.file_size > 0 && r->op.file_got == r->op.file_size)
		return get_done(r);
	gw_req_wake(r);
	return 0;
}

static int on_get(struct gw_req *r, const struct sbx_frame *f)
{
	if (r->op.phase == GW_OP_FIRST) {
		cJSON *o = gw_reply_json(r, f, 1, "agent frame");
		if (!o)
			return -1;
		const cJSON *sz = cJSON_GetObjectItemCaseSensitive(o, "size");
		int64_t n = cJSON_IsNumber(sz) && sz->valuedouble > 0 ? (int64_t)sz->valuedouble : 0;
		cJSON_Delete(o);
		if (r->resp_cap && n > (int64_t)r->resp_cap)
			return gw_resp_error(r, 413, "too_large", "file of %lld bytes, over %zu",
					     (long long)n, r->resp_cap);
		r->op.phase = GW_OP_STREAMING;
		r->op.file_size = n;
		sbx_buf_init(&r->resp, r->resp_cap);
		if (n && !r->resp_cap)
			gw_resp_start_stream(r, 200, "application/octet-stream", n);
		return 0;
	}
	if (f->type == SBX_FRAME_DATA)
		return get_data(r, f->payload, f->len);
	if (f->type == SBX_FRAME_EOF)
		return get_done(r);
	return get_failed(r, f);
}

void gw_files_get(struct gw_req *r)
{
	if (get_path(r))
		return;
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "op", "read_file");
	cJSON_AddStringToObject(a, "path", r->qpath);
	gw_req_agent(r, a, on_get);
}

void gw_files_mkdir(struct gw_req *r, cJSON *body)
{
	struct sbx_err err = { 0 };
	const char *path = NULL;
	int parents = 0;
	if (sbx_json_refuse_nul(body, &err) < 0 ||
	    sbx_json_get_str(body, "path", &path, &err) < 0 ||
	    sbx_json_get_bool(body, "parents", &parents, &err) < 0) {
		cJSON_Delete(body);
		gw_resp_error(r, 422, "invalid", "%s", err.msg);
		return;
	}
	if (!path || !*path || strlen(path) >= sizeof r->qpath) {
		cJSON_Delete(body);
		gw_resp_error(r, 422, "invalid", "path is required (at most %zu bytes)",
			      sizeof r->qpath - 1);
		return;
	}
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "op", "mkdir");
	cJSON_AddStringToObject(a, "path", path);
	cJSON_AddBoolToObject(a, "parents", parents);
	cJSON_Delete(body);
	gw_cmd_simple(r, a, NULL);
}

void gw_files_list(struct gw_req *r)
{
	if (get_path(r))
		return;
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "op", "list");
	cJSON_AddStringToObject(a, "path", r->qpath);
	gw_cmd_simple(r, a, NULL);
}
