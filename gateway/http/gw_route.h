/* The gateway's routes: one table (gw_route.c) says, for each endpoint, its
 * method and path, who may call it, what its body is, which query
 * arguments it takes and what handles it; the HTTP router, the WebSocket
 * admission (gw_ws.c) and 405's Allow header all read it. Adding an
 * endpoint is adding a row; a prefix row hands every path under it to one
 * handler that routes the rest itself. */
#ifndef GW_ROUTE_H
#define GW_ROUTE_H
#include <stddef.h>
#include <cJSON.h>

struct gw_req;

enum gw_rt_auth {
	GW_AUTH_NONE,            /* anyone (the handler may check more) */
	GW_AUTH_KEY,             /* an API key (Authorization: Bearer), else 401 */
	GW_AUTH_KEY_CHALLENGE,   /* the same, and a 401 says WWW-Authenticate: Bearer */
	GW_AUTH_KEY_OR_OPERATOR, /* an API key or the metrics key (the handler tells them apart) */
};

enum gw_rt_body {
	GW_BODY_NONE,            /* none is read (Content-Length still capped) */
	GW_BODY_JSON,            /* a JSON object, parsed (400 when it is not), or {} */
	GW_BODY_RAW,             /* bytes in r->body, up to the cap; done() when complete */
	GW_BODY_STREAM,          /* start(), data() per chunk, done(): never held whole */
};

enum gw_ws_kind { GW_WS_NONE, GW_WS_STREAM, GW_WS_PTY };

struct gw_route {
	const char *method;      /* NULL: any method */
	/* literal segments, {sid} and {cid} (letters, digits, _ and -, at
	 * most 79), up to the end or a '?' */
	const char *pattern;
	int prefix;              /* the pattern is a prefix; the handler routes the rest */
	enum gw_rt_auth auth;
	enum gw_rt_body body;
	size_t body_cap;         /* 0: GW_JSON_BODY_CAP */
	const char *const *args; /* query arguments taken (NULL-terminated); NULL: not checked */
	enum gw_ws_kind ws;      /* a WebSocket endpoint (426 over plain HTTP) */
	unsigned ws_scope;       /* what a stream token needs to open it */
	void (*start)(struct gw_req *r);                          /* NONE, RAW, STREAM */
	void (*json)(struct gw_req *r, cJSON *body /* consumed */);  /* JSON */
	void (*data)(struct gw_req *r, const void *p, size_t n);   /* STREAM */
	void (*done)(struct gw_req *r);                            /* RAW, STREAM */
	const void *ctx;         /* what a handler serving several rows reads (r->rt->ctx) */
};

/* The table the router reads (rows[0..n): the composition root's, once
 * at start-up). */
void gw_route_table(const struct gw_route *rows, size_t n);
/* The WebSocket row path (without its query) names, with sid and cid
 * filled (80 bytes each); NULL when none. */
const struct gw_route *gw_route_ws(const char *path, char *sid, char *cid);
#endif
