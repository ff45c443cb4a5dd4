/* The /v1 REST codec over the service layer: the handlers of the /v1
 * rows (gw_rest_ops.c, gw_rest_misc.c). */
#ifndef GW_REST_H
#define GW_REST_H
#include "../http/gw_rest_sink.h"

/* gw_rest_ops.c: the /v1 routes' handlers. A row that only runs an
 * operation names it: GW_REST_PLAIN(svc_get), GW_REST_JSON(svc_create)
 * (the body is the operation's). */
struct gw_rest_op {
	void (*plain)(struct svc_call *c);
	void (*json)(struct svc_call *c, cJSON *body);
};
void gw_rest_plain(struct gw_req *r);
void gw_rest_json(struct gw_req *r, cJSON *body);
#define GW_REST_PLAIN(fn) .start = gw_rest_plain, .ctx = &(const struct gw_rest_op){ .plain = fn }
#define GW_REST_JSON(fn) .json = gw_rest_json, .ctx = &(const struct gw_rest_op){ .json = fn }
void gw_runners_list(struct gw_req *r);
void gw_sandboxes_list(struct gw_req *r);
void gw_cmd_get(struct gw_req *r);
void gw_cmd_logs(struct gw_req *r);
void gw_cmd_stdin_start(struct gw_req *r);
void gw_cmd_stdin_data(struct gw_req *r, const void *in, size_t len);
void gw_cmd_stdin_done(struct gw_req *r);
void gw_files_put_start(struct gw_req *r);
void gw_files_put_data(struct gw_req *r, const void *in, size_t len);
void gw_files_put_done(struct gw_req *r);
void gw_files_get(struct gw_req *r);
void gw_files_list(struct gw_req *r);
/* gw_rest_images.c: POST /v1/images (an upload, or a pull when JSON) */
void gw_images_post_start(struct gw_req *r);
void gw_images_post_data(struct gw_req *r, const void *in, size_t len);
void gw_images_post_done(struct gw_req *r);


/* gw_rest_misc.c */
void gw_token_create(struct gw_req *r, cJSON *body);
void gw_healthz(struct gw_req *r);
void gw_metrics_get(struct gw_req *r);
/* gw_openapi.c; the document is the build's (mk/openapi_c.py) */
void gw_openapi_get(struct gw_req *r);
extern const unsigned char gw_openapi_json[];
extern const size_t gw_openapi_json_len;
/* gw_metrics.c */
void gw_metrics_reply(struct gw_req *r);

#endif
