/* One API connection's requests, one after another (gw_pipeline.c). */
#ifndef GW_PIPELINE_H
#define GW_PIPELINE_H

#include <stdint.h>
#include <libwebsockets.h>

/* Per connection, across its transactions (lws frees a transaction's
 * gw_req when the next begins): the wsi's opaque user data. */
struct gw_pipe {
	/* bytes lws had read from the connection at its last two protocol
	 * binds (lws binds at the connection's start, right before each
	 * request's LWS_CALLBACK_HTTP, and at each transaction's end) */
	unsigned binds;
	int prev_ok, cur_ok;
	uint64_t prev, cur;
	int in_body;       /* lws is still reading this request's body */
	int all_in;        /* the request is all in; its response is due */
	int held;          /* lws reads nothing (and writes nothing) now */
	int want;          /* a WRITEABLE callback was asked for */
	int upgraded;      /* a WebSocket session owns the connection now:
			    * its user data is no gw_req (gw_http.c) */
};

/* At LWS_CALLBACK_HTTP_BIND_PROTOCOL: lws binds the connection when it
 * adopts it, right before each request it hands us, and at the end of
 * each transaction, its own included (a 403 to an unknown Upgrade, a
 * completion it deferred until buffered output drained): the count of
 * bytes read is taken each time. */
void gw_pipe_mark(struct lws *wsi);
/* At LWS_CALLBACK_HTTP: the connection's state (NULL out of memory). */
struct gw_pipe *gw_pipe_begin(struct lws *wsi);
/* At LWS_CALLBACK_WSI_DESTROY of an API connection. */
void gw_pipe_free(struct lws *wsi);
/* 1 when lws parsed this request out of bytes it had read ahead during
 * the previous one (the client pipelined it). */
int gw_pipe_read_ahead(const struct gw_pipe *p, struct lws *wsi);
/* The request is all in (its head, or its body's end). */
void gw_pipe_all_in(struct lws *wsi);
/* Ask for a WRITEABLE callback: every HTTP response's writes are asked
 * for here, since a held connection gets none from lws. */
void gw_pipe_want_write(struct lws *wsi);
/* At a WRITEABLE callback's start. */
void gw_pipe_writeable(struct lws *wsi);
/* At the end of a WRITEABLE callback, or another turn with nothing to
 * write: the connection is held until there is (gw_pipe_want_write). */
void gw_pipe_idle(struct lws *wsi);
/* The response has gone: end the transaction in lws and read the next
 * request. -1 when the connection must close. */
int gw_pipe_complete(struct lws *wsi);
/* 1 when the connection is held and its peer has closed its side (a held
 * connection reads nothing, so lws would not see it). */
int gw_pipe_peer_gone(struct lws *wsi);

#endif
