/* POST /v1/images: a JSON body ({"ref","name"}) is a pull from a
 * registry; any other body is an image archive (an OCI layout tar or a
 * `docker save` archive) streamed to the runner. ?name=NAME names the
 * image (a pull may name it in its body instead). */
#include <string.h>
#include "../http/gw_req.h"
#include "gw_rest.h"

void gw_images_post_start(struct gw_req *r)
{
	char ctype[64] = "";
	struct svc_call *c;
	int pull;

	if (gw_query_str(r, "name", ctype, sizeof ctype) < 0)
		return;
	c = gw_rest_call(r, &gw_rest_json_sink);
	if (!c) {
		gw_resp_error(r, 500, "internal", "out of memory");
		return;
	}
	snprintf(c->path, sizeof c->path, "%s", ctype);
	ctype[0] = '\0';
	if (lws_hdr_copy(r->wsi, ctype, sizeof ctype, WSI_TOKEN_HTTP_CONTENT_TYPE) < 0)
		ctype[0] = '\0';
	pull = !strncmp(ctype, "application/json", 16);
	svc_image_import_start(c, pull);
}

void gw_images_post_data(struct gw_req *r, const void *in, size_t len)
{
	svc_image_import_data(r->call, in, len);
}

void gw_images_post_done(struct gw_req *r)
{
	svc_image_import_done(r->call);
}
