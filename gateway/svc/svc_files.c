/* Files: write_file takes the upload as DATA frames (the front end feeds
 * them, and hears from its sink's drained when the upstream took them);
 * read_file streams the agent's DATA frames to the sink. mkdir and list
 * are one request each. c->path names the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "svc.h"

static int path_given(struct svc_call *c)
{
	return c->path[0] ? 0 : svc_fail(c, 422, "invalid", "path is empty");
}

static int on_put(struct svc_call *c, const struct sbx_frame *f)
{
	cJSON *o = svc_reply_json(c, f, 1, "agent frame");
	if (!o)
		return -1;
	cJSON_DeleteItemFromObjectCaseSensitive(o, "ok");
	cJSON_AddStringToObject(o, "path", c->path);
	svc_reply(c, 200, o);
	return 1;
}

void svc_write_file_start(struct svc_call *c)
{
	if (path_given(c))
		return;
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "op", "write_file");
	cJSON_AddStringToObject(a, "path", c->path);
	cJSON_AddNumberToObject(a, "mode", (double)(c->mode >= 0 ? c->mode : 0644));
	cJSON_AddNumberToObject(a, "uid", 1000);
	cJSON_AddNumberToObject(a, "gid", 1000);
	svc_agent(c, a, on_put);
}

void svc_write_file_data(struct svc_call *c, const void *p, size_t n)
{
	c->vh->m.files_put_bytes += n;
	if (svc_send(c, SBX_FRAME_DATA, p, n))
		svc_fail(c, 500, "internal", "out of memory");
}

void svc_write_file_done(struct svc_call *c)
{
	if (!c->answered && svc_send(c, SBX_FRAME_EOF, NULL, 0))
		svc_fail(c, 500, "internal", "out of memory");
}

/* read_file: the agent streams the file to its EOF, but the size it gave
 * at the start (stat's, what the front end may promise, as a
 * Content-Length) may be wrong both ways: a file that grows while read
 * goes on past it, one that shrinks ends short, and a procfs file says 0
 * and has content (/proc/self/pagemap, without end). So a read stops at
 * the size it gave (the bytes past it are not sent), ends cut when the
 * file ended short, and when the size said 0 streams to EOF. A bounded
 * read (c->read_cap) fails 413 when it passes the bound. */

/* The read failed midway: the agent's error frame, or none. */
static int get_failed(struct svc_call *c, const struct sbx_frame *f)
{
	cJSON_Delete(f ? svc_reply_json(c, f, 1, "agent frame") : NULL);
	svc_fail(c, 500, "internal", "the read failed midway");   /* when not failed above */
	return -1;
}

static int get_data(struct svc_call *c, const unsigned char *p, size_t n)
{
	if (c->op.file_size > 0 && (int64_t)n > c->op.file_size - c->op.file_got)
		n = (size_t)(c->op.file_size - c->op.file_got);   /* grew while read */
	if (c->read_cap && (uint64_t)c->op.file_got + n > c->read_cap)
		return svc_fail(c, 413, "too_large",
				"file over %zu bytes (its size said %lld: it grew, or says nothing)",
				c->read_cap, (long long)c->op.file_size);
	if (svc_data(c, SVC_DATA, p, n))
		return 1;
	c->op.file_got += (int64_t)n;
	c->vh->m.files_get_bytes += n;
	if (c->op.file_size > 0 && c->op.file_got == c->op.file_size) {
		svc_end(c, 0);
		return 1;
	}
	return 0;
}

static int on_get(struct svc_call *c, const struct sbx_frame *f)
{
	if (c->op.phase == GW_OP_FIRST) {
		cJSON *o = svc_reply_json(c, f, 1, "agent frame");
		if (!o)
			return -1;
		const cJSON *sz = cJSON_GetObjectItemCaseSensitive(o, "size");
		int64_t n = cJSON_IsNumber(sz) && sz->valuedouble > 0 ? (int64_t)sz->valuedouble : 0;
		cJSON_Delete(o);
		if (c->read_cap && n > (int64_t)c->read_cap)
			return svc_fail(c, 413, "too_large", "file of %lld bytes, over %zu",
					(long long)n, c->read_cap);
		c->op.phase = GW_OP_STREAMING;
		c->op.file_size = n;
		return svc_begin(c, n) ? -1 : 0;
	}
	if (f->type == SBX_FRAME_DATA)
		return get_data(c, f->payload, f->len);
	if (f->type == SBX_FRAME_EOF) {
		svc_end(c, c->op.file_got < c->op.file_size);
		return 1;
	}
	return get_failed(c, f);
}

void svc_read_file(struct svc_call *c)
{
	if (path_given(c))
		return;
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "op", "read_file");
	cJSON_AddStringToObject(a, "path", c->path);
	svc_agent(c, a, on_get);
}

void svc_mkdir(struct svc_call *c, cJSON *body)
{
	struct sbx_err err = { 0 };
	const char *path = NULL;
	int parents = 0;
	if (sbx_json_refuse_nul(body, &err) < 0 ||
	    sbx_json_get_str(body, "path", &path, &err) < 0 ||
	    sbx_json_get_bool(body, "parents", &parents, &err) < 0) {
		cJSON_Delete(body);
		svc_fail(c, 422, "invalid", "%s", err.msg);
		return;
	}
	if (!path || !*path || strlen(path) >= sizeof c->path) {
		cJSON_Delete(body);
		svc_fail(c, 422, "invalid", "path is required (at most %zu bytes)", sizeof c->path - 1);
		return;
	}
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "op", "mkdir");
	cJSON_AddStringToObject(a, "path", path);
	cJSON_AddBoolToObject(a, "parents", parents);
	cJSON_Delete(body);
	svc_agent_op(c, a, NULL);
}

void svc_list_files(struct svc_call *c)
{
	if (path_given(c))
		return;
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "op", "list");
	cJSON_AddStringToObject(a, "path", c->path);
	svc_agent_op(c, a, NULL);
}
