/* The images sandboxes start from: the runner's (its image dir), each with
 * what it holds (the OS, the node and python versions) as the runner read
 * them from the image's files. */
#include "svc.h"

static int on_images(struct svc_call *c, const struct sbx_frame *f)
{
	cJSON *o = svc_reply_json(c, f, 1, "runner reply"), *out;
	if (!o)
		return -1;
	out = cJSON_CreateObject();
	cJSON *imgs = cJSON_DetachItemFromObjectCaseSensitive(o, "images");
	cJSON_AddItemToObject(out, "images", cJSON_IsArray(imgs) ? imgs : cJSON_CreateArray());
	if (!cJSON_IsArray(imgs))
		cJSON_Delete(imgs);
	cJSON_Delete(o);
	svc_reply(c, 200, out);
	return 1;
}

void svc_images(struct svc_call *c)
{
	cJSON *req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", "images");
	svc_runner(c, req, on_images);
}

/* The runner's {"ok":true,"image":{"name"}}: 204 for REST (the body is
 * for the front ends that answer with one, MCP). */
static int on_delete(struct svc_call *c, const struct sbx_frame *f)
{
	cJSON *o = svc_reply_json(c, f, 1, "runner reply"), *out;
	if (!o)
		return -1;
	out = cJSON_CreateObject();
	cJSON_AddStringToObject(out, "name", c->cid);
	cJSON_AddBoolToObject(out, "deleted", 1);
	cJSON_Delete(o);
	svc_reply(c, 204, out);
	return 1;
}

void svc_image_delete(struct svc_call *c)
{
	cJSON *req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", "image_delete");
	cJSON_AddStringToObject(req, "name", c->cid);
	svc_runner(c, req, on_delete);
}
