/* A service-layer call answered as the HTTP response of a transaction
 * (gw_rest_sink.c): the sinks of JSON answers, of a file's bytes and of
 * ndjson logs; every front end that answers over HTTP uses them. */
#ifndef GW_REST_SINK_H
#define GW_REST_SINK_H
#include "gw_req.h"
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

/* gw_route.c: the route's owner check failed (answered): the body held
 * meanwhile is dropped and the connection read again */
void gw_route_admit_failed(struct gw_req *r);
#endif
