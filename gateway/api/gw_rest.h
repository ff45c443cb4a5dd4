/* The /v1 REST codec over the service layer (gw_rest.c). */
#ifndef GW_REST_H
#define GW_REST_H
#include "../svc/svc.h"

extern const struct svc_sink gw_rest_json_sink, gw_rest_file_sink, gw_rest_logs_sink;
/* The pieces of those sinks, for a codec writing a stream of its own on
 * an HTTP response (the @vercel/sandbox logs): reply and fail as JSON,
 * end of a stream, full (the response queue), drained (a streamed body). */
void gw_rest_reply(struct svc_call *c, int status, cJSON *body);
void gw_rest_fail(struct svc_call *c, int status, const char *code, const char *msg);
void gw_rest_end(struct svc_call *c, int cut);
int gw_rest_full(struct svc_call *c);
void gw_rest_drained(struct svc_call *c);
/* r->call, made at the first use, answering through sink; NULL out of
 * memory. Freed by gw_rest_call_free (gw_req_reset). */
struct svc_call *gw_rest_call(struct gw_req *r, const struct svc_sink *sink);
void gw_rest_call_free(struct gw_req *r);

/* gw_rest_ops.c: the /v1 routes' handlers */
void gw_sandbox_create(struct gw_req *r, cJSON *body);
void gw_sandbox_list(struct gw_req *r);
void gw_sandbox_capabilities(struct gw_req *r);
void gw_sandbox_get(struct gw_req *r);
void gw_runners_list(struct gw_req *r);
void gw_sandbox_extend(struct gw_req *r, cJSON *body);
void gw_sandbox_delete(struct gw_req *r);
void gw_cmd_exec(struct gw_req *r, cJSON *body);
void gw_cmd_list(struct gw_req *r);
void gw_cmd_get(struct gw_req *r);
void gw_cmd_kill(struct gw_req *r, cJSON *body);
void gw_cmd_logs(struct gw_req *r);
void gw_cmd_stdin_start(struct gw_req *r);
void gw_cmd_stdin_data(struct gw_req *r, const void *in, size_t len);
void gw_cmd_stdin_done(struct gw_req *r);
void gw_files_put_start(struct gw_req *r);
void gw_files_put_data(struct gw_req *r, const void *in, size_t len);
void gw_files_put_done(struct gw_req *r);
void gw_files_get(struct gw_req *r);
void gw_files_mkdir(struct gw_req *r, cJSON *body);
void gw_files_list(struct gw_req *r);


/* gw_route.c: the route's owner check failed (answered): the body held
 * meanwhile is dropped and the connection read again */
void gw_route_admit_failed(struct gw_req *r);
#endif
