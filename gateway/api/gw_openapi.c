/* GET /v1/openapi.json: the OpenAPI document (docs/openapi.yaml), which
 * the build turned into JSON inside this binary (mk/openapi_c.py), so an
 * installed or deployed gateway serves the document of its own routes
 * with no file to find. No key: it holds nothing of any tenant. */
#include "../http/gw_req.h"
#include "gw_rest.h"

void gw_openapi_get(struct gw_req *r)
{
	sbx_buf_reset(&r->resp);
	if (sbx_buf_append(&r->resp, gw_openapi_json, gw_openapi_json_len)) {
		gw_resp_error(r, 500, "internal", "out of memory");
		return;
	}
	r->status = 200;
	r->ctype = "application/json";
	r->content_len = (int64_t)gw_openapi_json_len;
	r->resp_done = 1;
	r->resp_ready = 1;
	gw_req_wake(r);
}
