/* A WebSocket session (a command stream or a terminal). Admission makes
 * it before the upgrade and it replaces the connection's gw_req as the
 * wsi's user data (lws_set_wsi_user): from then on the connection is the
 * session's alone, and the HTTP layer hands its callbacks here (gw_http.c).
 * It is freed when lws destroys the wsi (gw_ws.c). Its agent stream is an
 * svc call with the session's sink (gw_stream.c). */
#ifndef GW_WS_H
#define GW_WS_H
#include "../http/gw_req.h"
#include "../svc/svc.h"

struct gw_side;

struct gw_ws_session {
	struct gw_vh *vh;
	struct lws *wsi;
	/* what admission found: the row, the caller's key and scope, the ids */
	const struct gw_route *rt;
	enum gw_ws_kind kind;
	int key;
	unsigned scope;
	char sid[80], cid[80];
	int owner_pending;          /* its owner is being asked (admit) */
	int open;                   /* established, counted and listed */
	struct svc_call main;       /* the stream: svc_logs, or the terminal's svc_pty */
	/* its arguments, from the upgrade's query */
	int64_t since, cols, rows;
	char cmd[GW_QUERY_CMD_MAX + 1];
	struct svc_call *admit;     /* the sandbox's owner being asked (svc_admit) */
	/* to the client: one record per message, written in place (gw_ws.c) */
	struct sbx_buf q;
	size_t q_last;              /* where the last record starts, from q's head */
	int closing, paused, up_lost, drop;
	int write_asked;            /* a WRITEABLE is asked for and has not come */
	int unflushed;              /* output queued since the last gw_ws_flush */
	lws_sorted_usec_list_t close_sul;   /* the close, one turn later (gw_ws.c) */
	/* from the client */
	int rx_paused;              /* reading the client is paused */
	int in_mid, in_bin, in_tagged;
	struct sbx_buf text;        /* a client text message being assembled */
	struct gw_side *sides;      /* side operations in flight (gw_stream.c) */
	struct gw_side *stdin_side; /* one of them: the stdin writer */
	struct gw_side *resize_side; /* one of them: a resize; input waits for it */
	int64_t pending_cols, pending_rows;
	struct gw_ws_session *next, *prev;   /* on vh->sessions */
	int64_t t0_us;
};

/* gw_ws.c: the outgoing queue and flow control */
int gw_ws_queue_bin(struct gw_ws_session *s, unsigned tag, const void *p, size_t n);
int gw_ws_queue_json(struct gw_ws_session *s, cJSON *o /* consumed */);
void gw_ws_queue_close(struct gw_ws_session *s, int code, const char *reason);
/* The API's error body as a text message; the session goes on. */
void gw_ws_error(struct gw_ws_session *s, const char *code, const char *msg);
/* The error message, then a close 4000 + status: the session ends (its
 * upstream is closed). */
void gw_ws_fail(struct gw_ws_session *s, int status, const char *code, const char *msg);
void gw_ws_output_flow(struct gw_ws_session *s);
/* Ask for the session's WRITEABLE, once until it comes (gw_ws.c). */
void gw_ws_want_write(struct gw_ws_session *s);
/* One read of the stream's upstream was queued: it goes out now when the
 * client's socket takes it, else in the WRITEABLE asked for. */
void gw_ws_flush(struct gw_ws_session *s);
void gw_ws_input_flow(struct gw_ws_session *s);

/* gw_stream.c: what a session does upstream. Its svc call is readied
 * and its arguments read from the query when the session is established
 * (lws keeps the upgrade's headers no longer than that); it starts later
 * when its owner must be asked first. gw_session_query: -1 refused,
 * answered already. */
void gw_session_init(struct gw_ws_session *s);
int gw_session_query(struct gw_ws_session *s);
void gw_session_start(struct gw_ws_session *s);
void gw_session_input(struct gw_ws_session *s, const void *p, size_t n);
void gw_session_message(struct gw_ws_session *s, const char *type, const cJSON *o);
/* Bytes a side operation (stdin writer) still has queued; 0 for NULL. */
size_t gw_session_side_queued(const struct gw_side *side);
/* The session goes away: its stream and side operations are dropped. */
void gw_session_detach(struct gw_ws_session *s);
/* gw_ws.c: the session's lws callbacks (gw_http.c hands them over).
 * At LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION user is the connection's
 * gw_req, replaced by the session when admitted (0); after that user is
 * the session, up to LWS_CALLBACK_WSI_DESTROY, which frees it. */
int gw_ws_callback(struct lws *wsi, enum lws_callback_reasons reason,
		   void *user, struct gw_vh *vh, void *in, size_t len);
/* Register the stream layer's hooks (gw_hooks.h: a revoked key's and a
 * lost runner's sessions end); once at start-up, 0 or -1. */
int gw_stream_register(void);

#endif
