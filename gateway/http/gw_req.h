/* The HTTP transaction layer (http/): a request is a struct gw_req, routed
 * by the one route table (gw_route.h: its rows are the composition root's,
 * gateway/gw_routes.c), answered through gw_resp.c, with keep-alive and
 * pipelining (gw_pipeline.h), keepalive of long answers and the web demo's
 * files. Above core and the service layer; the front ends (api, mcp,
 * vercel, stream) are above it. */
#ifndef GW_REQ_H
#define GW_REQ_H
#include "../core/gw.h"
#include "gw_route.h"
#include "gw_pipeline.h"

/* A request held while the sandbox's owner is asked (gw_route.c): its
 * body waits here, and reading the client pauses at the body cap. */
struct gw_hold {
	int pending;                /* the owner is being asked (svc_admit) */
	struct sbx_buf body;        /* the body meanwhile */
	int done;                   /* all of it came in */
	int paused;                 /* reading the client is paused */
};

/* A response that lasts as long as a command (gw_keepalive.c). */
struct gw_ka {
	int on, lines, no_deadline;
	int stall_s;                /* a download: cut after this long without progress */
	int64_t last_us;            /* when the last line was queued */
	const char *text;           /* the keepalive line, when not the default one */
};

/* One HTTP transaction (the pss of "http", reset per request): the
 * request, its body, its route, the service layer's operation it runs
 * (call) and the response. A connection upgraded to a WebSocket drops
 * its gw_req for the stream layer's session (gw_http.c). */
struct gw_req {
	struct gw_vh *vh;
	struct lws *wsi;
	int active;                 /* a transaction is in progress */
	char method[8];
	char uri[1024];
	int key;                    /* index of the caller's key, -1 none */
	unsigned scope;             /* GW_SCOPE_* its credential allows */
	int64_t t0_us;
	/* body */
	int64_t body_expected;
	size_t body_seen;
	struct sbx_buf body;
	int body_stream;            /* body goes to the upstream as DATA frames */
	int body_done;
	/* route parameters */
	const struct gw_route *rt;  /* its row in the route table */
	char sid[80], cid[80];
	int http_rx_paused;         /* a streamed body waits for its upstream */
	/* the operation of the service layer the route runs (gw_rest.c) */
	struct svc_call *call;
	struct gw_hold hold;
	/* response */
	int status;
	const char *ctype;
	struct sbx_buf resp;
	int64_t content_len;        /* -1: unknown (then the connection closes) */
	int resp_ready, hdr_sent, resp_done, close_after;
	uint64_t resp_bytes;
	struct {
		const char *name;   /* one extra response header, or NULL */
		char val[80];
	} xhdr;
	struct gw_ka ka;
	/* a front end's state of a call in progress (MCP's, the Vercel
	 * surface's), freed with the transaction */
	struct {
		void *state;
		void (*free)(void *state);
	} front;
};

/* gw_refuse.c: answer status with the API's JSON error body at once and
 * close (ws_version: with Sec-WebSocket-Version: 13, for a 426). -1. */
int gw_http_refuse(struct lws *wsi, unsigned status, const char *code, const char *msg,
		   int ws_version);

/* gw_query.c: the request forms of core's query readers (gw_query_arg.c):
 * they answer a refusal 422 themselves (1 present, 0 absent, -1 refused). */
int gw_query_str(struct gw_req *r, const char *name, char *buf, size_t size);
int gw_query_i64(struct gw_req *r, const char *name, int64_t lo, int64_t hi, int64_t *out);
int gw_query_bool(struct gw_req *r, const char *name, int *out);

/* gw_resp.c: responses, written only from HTTP_WRITEABLE */
void gw_resp_json(struct gw_req *r, int status, cJSON *body /* consumed */);
int gw_resp_error(struct gw_req *r, int status, const char *code,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void gw_resp_start_stream(struct gw_req *r, int status, const char *ctype,
			  int64_t content_len);
int gw_resp_writeable(struct gw_req *r);
void gw_req_reset(struct gw_req *r);
/* Ask for the WRITEABLE callback that moves r's response on. */
void gw_req_wake(struct gw_req *r);
/* A response without a body (202 to an MCP notification). */
void gw_resp_empty(struct gw_req *r, int status);

/* gw_route.c */
void gw_route(struct gw_req *r);
void gw_route_body(struct gw_req *r, const void *in, size_t len);
void gw_route_body_done(struct gw_req *r);

/* gw_keepalive.c: pings and keepalive lines on long-lived responses */
#define GW_KEEPALIVE_DEFAULT_S 25
#define GW_KEEPALIVE_MAX_S     3600
void gw_keepalive_vhost(struct lws_context_creation_info *vi, int secs);
void gw_keepalive_ws_start(struct gw_vh *vh, struct lws *wsi);
void gw_keepalive_http_start(struct gw_req *r, int lines);
void gw_keepalive_http_download(struct gw_req *r);
void gw_keepalive_http_progress(struct gw_req *r);
void gw_keepalive_lines_sent(struct gw_req *r);
int gw_keepalive_http_timer(struct gw_req *r);

/* gw_static.c: the web demo's files */
int gw_web_dir_init(struct gw_vh *vh, const char *dir);
int gw_static_try(struct gw_req *r);

/* gw_http.c: the "http" protocol's callback. The WebSocket sessions'
 * callbacks go to ws (the stream layer's gw_ws_callback, set by main):
 * the upgrade's filter with the connection's gw_req as user, which the
 * session replaces when ws answers 0; every callback of the connection
 * after that, with the session as user. */
typedef int (*gw_http_ws_cb)(struct lws *wsi, enum lws_callback_reasons reason,
			     void *user, struct gw_vh *vh, void *in, size_t len);
void gw_http_set_ws(gw_http_ws_cb ws);
int gw_http_callback(struct lws *wsi, enum lws_callback_reasons reason,
		     void *user, void *in, size_t len);

#endif
