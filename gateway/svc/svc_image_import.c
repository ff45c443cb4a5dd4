/* Images brought by the user (POST /v1/images): an upload of an OCI
 * layout or docker-archive tar, streamed to the runner as DATA frames as it
 * arrives (the upstream's watermark paces the body: never held whole), or
 * a pull of a registry reference (a small JSON body, held in op.out). The
 * runner imports in a process of its own and answers once; c->path holds
 * the image's name. */
#include <string.h>
#include "svc.h"

#define PULL_BODY_MAX (64 * 1024)

static int on_imported(struct svc_call *c, const struct sbx_frame *f)
{
	cJSON *o = svc_reply_json(c, f, 1, "runner reply"), *img;
	if (!o)
		return -1;
	img = cJSON_DetachItemFromObjectCaseSensitive(o, "image");
	cJSON_Delete(o);
	svc_reply(c, 201, cJSON_IsObject(img) ? img : cJSON_CreateObject());
	if (!cJSON_IsObject(img))
		cJSON_Delete(img);
	return 1;
}

void svc_image_import_start(struct svc_call *c, int pull)
{
	cJSON *req;

	c->op.mode = GW_OP_PLAIN;
	c->op.phase = pull ? GW_OP_FIRST : GW_OP_STREAMING;
	if (pull)
		return;   /* the body names the reference: sent at done */
	if (!c->path[0]) {
		svc_fail(c, 422, "invalid", "name: required (?name=NAME)");
		return;
	}
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", "image_import");
	cJSON_AddStringToObject(req, "name", c->path);
	svc_runner(c, req, on_imported);
}

void svc_image_import_data(struct svc_call *c, const void *p, size_t n)
{
	if (c->answered)
		return;
	if (c->op.phase == GW_OP_FIRST) {   /* a pull's JSON body */
		if (c->op.out.len + n > PULL_BODY_MAX || sbx_buf_append(&c->op.out, p, n) < 0)
			svc_fail(c, 413, "too_large", "a pull's body is over 64 KiB");
		return;
	}
	if (svc_send(c, SBX_FRAME_DATA, p, n))
		svc_fail(c, 500, "internal", "out of memory");
}

static void pull(struct svc_call *c)
{
	cJSON *body = cJSON_ParseWithLength((const char *)sbx_buf_head(&c->op.out), c->op.out.len);
	const cJSON *ref = cJSON_GetObjectItemCaseSensitive(body, "ref");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(body, "name");
	cJSON *req;

	if (!cJSON_IsObject(body) || !cJSON_IsString(ref)) {
		cJSON_Delete(body);
		svc_fail(c, 422, "invalid", "ref: required, a registry reference");
		return;
	}
	if (!c->path[0] && cJSON_IsString(name))
		snprintf(c->path, sizeof c->path, "%.64s", name->valuestring);
	if (!c->path[0]) {
		cJSON_Delete(body);
		svc_fail(c, 422, "invalid", "name: required (?name=NAME or \"name\")");
		return;
	}
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", "image_pull");
	cJSON_AddStringToObject(req, "name", c->path);
	cJSON_AddStringToObject(req, "ref", ref->valuestring);
	cJSON_Delete(body);
	svc_runner(c, req, on_imported);
}

void svc_image_import_done(struct svc_call *c)
{
	if (c->answered)
		return;
	if (c->op.phase == GW_OP_FIRST) {
		pull(c);
		return;
	}
	if (svc_send(c, SBX_FRAME_EOF, NULL, 0))
		svc_fail(c, 500, "internal", "out of memory");
}
