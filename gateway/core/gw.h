/* sandbox-gateway: shared types. One HTTP transaction is a struct gw_req
 * (the lws per-session data of the "http" protocol, reset per request);
 * its runner/agent upstream is a gw_up (gw_up.h), its route a row of the
 * route table (gw_route.h). Per-vhost state is struct gw_vh. */
#ifndef GW_H
#define GW_H
#include <signal.h>
#include <stdint.h>
#include <stddef.h>
#include <libwebsockets.h>
#include <cJSON.h>
#include "sbx_buf.h"
#include "sbx_frame.h"
#include "sbx_err.h"
#include "sbx_json.h"
#include "sbx_clock.h"
#include "sbx_text.h"
#include "gw_runner.h"
#include "gw_up.h"
#include "../api/gw_route.h"
#include "../api/gw_pipeline.h"
#include <stdlib.h>

#define GW_MAX_KEYS      64
#define GW_KEY_MAX       256
#define GW_MAX_OWNED     4096
#define GW_JSON_BODY_CAP (64 * 1024)          /* JSON request bodies */
#define GW_FILE_BODY_CAP (256u * 1024 * 1024) /* PUT files (streamed) */
#define GW_OUTPUT_CAP    (1024 * 1024)        /* non-detached stdout/stderr each */
#define GW_QUEUE_HIGH    (256 * 1024)         /* flow-control watermark */
#define GW_CHUNK         (16 * 1024)          /* bytes per lws_write */
#define GW_TOKEN_TTL_MS  (10 * 60 * 1000)     /* stream tokens */
/* What a credential may do (stream tokens carry a subset; keys all). */
#define GW_SCOPE_READ     1u    /* watch a command's stream */
#define GW_SCOPE_WRITE    2u    /* stdin, stdin_eof and kill on a stream */
#define GW_SCOPE_TERMINAL 4u    /* open /pty */
#define GW_SCOPE_ALL      7u
/* Longest query argument values (docs/api.md, "Query arguments") */
#define GW_QUERY_NUM_MAX  20    /* since, cols, rows: any int64 */
#define GW_QUERY_BOOL_MAX 5     /* wait, follow, eof: 0 1 true false */
#define GW_QUERY_MODE_MAX 8     /* mode, octal */
#define GW_QUERY_ENC_MAX  6     /* encoding: base64 text utf-8 */
#define GW_QUERY_CMD_MAX  255   /* a terminal's cmd */

struct gw_owned {            /* which key created which sandbox */
	char id[80];
	int key;
	int live;
	char *agent_socket;         /* host path of its agent (malloc'd), or NULL */
};

struct gw_metrics {
	uint64_t http_requests, http_4xx, http_5xx, upstream_errors;
	uint64_t sandboxes_created, sandboxes_deleted, commands_started;
	uint64_t bytes_streamed, files_put_bytes, files_get_bytes;
	int64_t ws_open;
	uint64_t proxy_requests, proxy_errors;   /* preview proxy (gw_proxy.c) */
};

struct gw_vh {
	struct lws_context *ctx;
	struct lws_vhost *vhost;
	const char *runner_socket;
	struct gw_runner *runners;  /* gw_runner.h */
	int nrunners;
	char *web_dir_real;         /* realpath of --web-dir, or NULL */
	const char *preview_domain;
	int port;
	int nkeys;
	char keys[GW_MAX_KEYS][GW_KEY_MAX];
	char metrics_key[GW_KEY_MAX];     /* Bearer for /metrics; "" = closed */
	char key_tags[GW_MAX_KEYS][33];   /* owner tags: a hash of each key */
	unsigned char token_secret[32];   /* stream tokens' HMAC key */
	struct gw_ws_session *sessions;   /* open WebSocket sessions (stream/gw_ws.h) */
	int max_sandboxes_per_key;
	int creating[GW_MAX_KEYS];  /* creates sent to the runner, not answered */
	int64_t max_timeout_ms;
	struct gw_owned owned[GW_MAX_OWNED];
	int nowned;
	struct gw_metrics m;
	unsigned char preview_secret[32];   /* preview tokens' key (gw_ptoken.c, gw_psecret.c) */
	int tls;                            /* served over TLS (--cert): https routes */
	int keepalive_s;                    /* WS pings, ndjson keepalive lines; 0 off */
	struct ssl_ctx_st *runner_tls;      /* TLS runners' client context (gw_tls.h), or NULL */
};

struct gw_req;
/* Called with each frame of the upstream after the runner accepted the
 * request (or with the runner's reply itself for plain runner ops).
 * Returns 0 to go on, 1 when the operation is complete (the upstream is
 * closed), -1 after having replied with an error. */
typedef int (*gw_frame_cb)(struct gw_req *r, const struct sbx_frame *f);

/* A create being placed (svc/svc_place.c). */
struct svc_call;
struct gw_place {
	cJSON *req;                 /* the runner's create, sent as a copy to each */
	int (*cb)(struct svc_call *c, const struct sbx_frame *f);
	int order[GW_PLACE_TRIES], n, next;
	struct gw_runner *at;       /* the runner it went to last */
	int answered;               /* that runner said ok */
	int64_t memory_mb;          /* asked (or the default) */
	struct gw_runner *counted;  /* where it is counted as sent (gw_runner_create_sent) */
	uint64_t seq;
	char why[512];              /* each runner that could not take it, and why */
};

/* Waiting for an ownership lookup (gw_owner_lookup.c). */
enum gw_own_result { GW_OWN_YES, GW_OWN_NO, GW_OWN_UNAVAILABLE, GW_OWN_BUSY };
struct gw_own_wait {
	struct gw_own_wait *next;
	struct gw_own_lookup *l;    /* the lookup it waits for; NULL: none */
	int key;
	void (*cb)(struct gw_own_wait *w, enum gw_own_result res, const char *msg);
};

/* Waiting for the owner table's refresh (gw_owner_refresh). */
struct gw_owner_wait {
	struct gw_owner_wait *next;
	void (*cb)(struct gw_owner_wait *w);
};

/* What a handler remembers between the frames of its upstream. */
enum gw_op_phase {
	GW_OP_FIRST,            /* the first reply (exec, attach, read_file) not yet in */
	GW_OP_STREAMING,        /* after it: output, data, events */
	GW_OP_ANSWER_WHEN_SENT, /* POST stdin without eof: answered once it all went up */
};
enum gw_op_mode {
	GW_OP_PLAIN,
	GW_OP_CREATE,           /* a sandbox create: owner table and quota count */
	GW_OP_EXEC_DETACHED,    /* answered at the exec reply */
	GW_OP_EXEC_WAITED,      /* output collected to the exit */
	GW_OP_STDIN_EOF,        /* stdin, then EOF and the agent's answer */
	GW_OP_STDIN_OPEN,       /* stdin, answered once it went up */
};
struct gw_op {
	enum gw_op_phase phase;
	enum gw_op_mode mode;
	int b64;                    /* output as base64 (a waited exec, logs) */
	struct sbx_buf out, err;    /* a waited exec's output */
	int out_trunc, err_trunc;
	cJSON *acc;                 /* an accumulated reply object */
	uint64_t logs_off;          /* ndjson logs: the next chunk's offset */
	int64_t file_size;          /* a file read: the size stat gave (0: says nothing) */
	int64_t file_got;           /* ... and the bytes of it taken so far */
	char wrap[16];              /* the member of the agent's reply to answer with */
};

struct gw_ws_session;   /* a WebSocket session (stream/gw_ws.h) */

/* One HTTP transaction or WebSocket session (the pss of "http", reset per
 * request), or an internal request of an MCP tool call. By role: the
 * transaction (method to response), its upstream, its handler's scratch
 * (op) and, for a WebSocket, the session (ws). */
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
	/* upstream (gw_upstream.c) */
	struct gw_up up;
	gw_frame_cb on_frame;
	int http_rx_paused;
	/* the handler's scratch */
	struct gw_op op;
	struct gw_own_wait own_wait;   /* an ownership lookup (gw_owner_lookup.c) */
	/* the operation of the service layer a /v1 route runs (gw_rest.c) */
	struct svc_call *call;
	int owner_pending;          /* the route waits for it: the body is held */
	struct sbx_buf held;        /* the body meanwhile */
	int held_done, held_paused;
	/* response */
	int status;
	const char *ctype;
	struct sbx_buf resp;
	int64_t content_len;        /* -1: unknown (then the connection closes) */
	int resp_ready, hdr_sent, resp_done, close_after;
	uint64_t resp_bytes;
	const char *xhdr_name;      /* one extra response header, or NULL */
	char xhdr_val[80];
	/* a response that lasts as long as a command (gw_keepalive.c) */
	int ka_long, ka_lines, ka_no_deadline;
	int ka_stall_s;             /* a download: cut after this long without progress */
	int64_t ka_last_us;         /* when the last line was queued */
	/* a WebSocket session, once established (stream/gw_ws.h) */
	struct gw_ws_session *ws;
	/* the front ends' state of a call in progress */
	struct gw_mcp_call *mcp;    /* a POST /mcp (gw_mcp.c) */
	struct cv_call *vercel;     /* the @vercel/sandbox surface (compat_vercel*.c) */
	const char *ka_text;        /* the keepalive line, when not the default one */
};

/* gw_refuse.c: answer status with the API's JSON error body at once and
 * close (ws_version: with Sec-WebSocket-Version: 13, for a 426). -1. */
int gw_http_refuse(struct lws *wsi, unsigned status, const char *code, const char *msg,
		   int ws_version);

/* gw_auth.c */
int gw_auth_load_file(struct gw_vh *vh, const char *path, struct sbx_err *err);
int gw_auth_add_list(struct gw_vh *vh, const char *csv);
/* Index of the key the request presents (Bearer header, or access_token
 * query when allow_query: a key, or a stream token for sandbox sid), and
 * in *scope what it allows (a key: everything); -1 when none matches, -2
 * when access_token is not a readable argument (too long, given twice).
 * Constant time per key. */
int gw_auth_check(struct gw_vh *vh, struct lws *wsi, int allow_query, const char *sid,
		  unsigned *scope);
int gw_token_make(struct gw_vh *vh, int key, const char *sid, int64_t exp_ms,
		  unsigned scope, char *out, size_t outlen);
/* 1 when the request's Bearer is the metrics key (constant time). */
int gw_auth_metrics(struct gw_vh *vh, struct lws *wsi);
/* The metrics key from file (its first line) or else env; 0 with none. */
int gw_auth_metrics_key(struct gw_vh *vh, const char *file, const char *env,
			struct sbx_err *err);
/* Re-read the keys (SIGHUP): new ones are added, missing ones revoked. */
int gw_auth_reload(struct gw_vh *vh, const char *keys_file, const char *env);

/* gw_owner.c */
int gw_owner_get(struct gw_vh *vh, const char *id);  /* key index or -1 */
int gw_owner_add(struct gw_vh *vh, const char *id, int key);
void gw_owner_set_live(struct gw_vh *vh, const char *id, int live);
int gw_owner_count_live(struct gw_vh *vh, int key);
/* Remember where a sandbox's agent listens (from the runner's object). */
void gw_owner_set_agent(struct gw_vh *vh, const char *id, const char *path);
/* A revoked key's sandboxes become nobody's at once; their stop requests
 * go to the runner without waiting for the replies. */
void gw_owner_forget_key(struct gw_vh *vh, int key);
/* A connected, non-blocking socket straight to a sandbox's agent, when
 * its runner is on this host and told us where the agent's socket is (no
 * copy through the runner; the CONNECT 1024 of lib/sbx_dial.h is written,
 * and the caller takes the agent's "OK 1024\n" off the front of what it
 * reads, sbx_dial_parse_ok). -1 otherwise: the caller goes through the
 * sandbox's runner (*direct = 0). */
int gw_agent_connect(struct gw_vh *vh, const char *sid, int *direct);
/* Learn the owners of the sandboxes a runner already has (after a gateway
 * restart) from their owner tags: asks the runner; gw_owner_syncing() is 1
 * until it answered (or failed). Once at start-up. */
void gw_owner_sync(struct gw_vh *vh);
int gw_owner_syncing(void);
/* Mark sandboxes the runner no longer runs (timed out, lost in a runner
 * crash) as not live, then call w->cb (whether the runner answered or
 * not). Callers waiting at the same time share one runner call. */
void gw_owner_refresh(struct gw_vh *vh, struct gw_owner_wait *w,
		      void (*cb)(struct gw_owner_wait *w));
/* w no longer waits (its request went away); harmless when it does not. */
void gw_owner_wait_cancel(struct gw_owner_wait *w);
/* Shutdown: runner calls still open end without telling anyone. */
void gw_owner_stop(void);

/* gw_ptoken.c: a sandbox's preview token, HMAC-SHA256(secret, id) as 32 hex
 * characters in out (33 bytes); 0, or -1 if OpenSSL fails. */
int gw_ptoken(const struct gw_vh *vh, const char *id, char out[33]);
/* 1 when tok (n bytes) is id's token; constant time in the token. */
int gw_ptoken_check(const struct gw_vh *vh, const char *id, const char *tok, size_t n);
/* gw_psecret.c: fill vh->preview_secret from path (64 hex digits; made
 * once, mode 0600, when missing), or at random when path is NULL. 0, or -1
 * with err set (a file others may read is refused). */
int gw_psecret_load(struct gw_vh *vh, const char *path, struct sbx_err *err);

/* gw_query_arg.c: every query argument goes through these. gw_query_get:
 * 1 with the value in buf (at most size - 1 bytes), 0 when absent, -1 with
 * why set when too long or given twice. gw_query_known: -1 (why set) when
 * an argument is not in the NULL-terminated names. gw_query_num: as
 * gw_query_get for a whole number lo..hi in *out (-1 too when it is none).
 * gw_query.c: the gw_req forms answer a refusal 422 themselves (1 present,
 * 0 absent, -1 refused). */
int gw_query_get(struct lws *wsi, const char *name, char *buf, size_t size,
		 char *why, size_t whylen);
int gw_query_known(struct lws *wsi, const char *const *names, char *why, size_t whylen);
int gw_query_num(struct lws *wsi, const char *name, int64_t lo, int64_t hi, int64_t *out,
		 char *why, size_t whylen);
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
void gw_resp_runner_error(struct gw_req *r, const cJSON *reply);
void gw_req_reset(struct gw_req *r);
/* Ask for the WRITEABLE callback that moves r's response on. */
void gw_req_wake(struct gw_req *r);
/* A response without a body (202 to an MCP notification). */
void gw_resp_empty(struct gw_req *r, int status);

/* Move the fields named in names[0..n) from src into dst (the allow-list of
 * what a client request may pass on to the runner or agent). */
void gw_json_move_fields(cJSON *dst, cJSON *src, const char *const *names,
			 size_t n);

/* gw_upstream.c: a request's upstream (r->up): a runner operation, or an
 * agent operation (through the runner's `connect` unless the gateway knows
 * the agent's socket). cb gets every frame after the runner said ok (for a
 * runner operation, its reply itself). 0, or -1 after answering an error. */
int gw_req_runner(struct gw_req *r, cJSON *runner_req, gw_frame_cb cb);
int gw_req_agent(struct gw_req *r, cJSON *agent_req, gw_frame_cb cb);
int gw_req_send(struct gw_req *r, enum sbx_frame_type t, const void *p, size_t n);
/* Parse a frame as a JSON object; with need_ok, an error reply is
 * answered. NULL after answering 502 (what names the peer) or the error. */
cJSON *gw_reply_json(struct gw_req *r, const struct sbx_frame *f, int need_ok,
		     const char *what);

/* svc/svc_place.c */
void gw_place_free(struct gw_place *p);

/* gw_fanout.c: `list` to every runner that is up. done gets the merged
 * sandboxes (every owner's; their owner tags are adopted first), the
 * names (else addresses) of the runners that did not answer or are
 * down, and which runners answered (answered[i] for vh->runners[i]). */
struct gw_fan;
typedef void (*gw_fan_done)(struct gw_vh *vh, void *arg, const cJSON *sandboxes,
			    const cJSON *unavailable, const unsigned char *answered);
struct gw_fan *gw_fan_list(struct gw_vh *vh, gw_fan_done done, void *arg);
/* Stop a fan-out whose done has not run (it will not). After done ran
 * the fan is no longer the caller's. */
void gw_fan_cancel(struct gw_fan *f);
void gw_fan_stop(void);   /* shutdown: no more done calls */
/* Adopt the sandboxes of s (a runner's objects) whose owner tag is one of
 * our keys; the number adopted. */
int gw_owner_adopt(struct gw_vh *vh, const cJSON *sandboxes);

/* gw_owner_lookup.c: sandbox sid is not in the owner table: ask its
 * runner (`get`) and adopt it when its owner tag is one of our keys; then
 * w->cb with GW_OWN_YES when it is key's. A short negative cache answers
 * made-up ids without a runner call; at most GW_OWN_LOOKUPS_MAX lookups
 * are in flight (GW_OWN_BUSY beyond). w->cb may run before this returns. */
#define GW_OWN_LOOKUPS_MAX 64
#define GW_OWN_NEG_MS      5000
void gw_owner_lookup(struct gw_vh *vh, const char *sid, int key, struct gw_own_wait *w,
		     void (*cb)(struct gw_own_wait *w, enum gw_own_result res, const char *msg));
void gw_owner_lookup_cancel(struct gw_own_wait *w);
void gw_owner_lookup_stop(void);

/* gw_route.c */
void gw_route(struct gw_req *r);
void gw_route_body(struct gw_req *r, const void *in, size_t len);
void gw_route_body_done(struct gw_req *r);

/* gw_ws.c: WebSocket sessions (streams, terminals; stream/gw_ws.h) */
int gw_ws_callback(struct lws *wsi, enum lws_callback_reasons reason,
		   struct gw_req *r, struct gw_vh *vh, void *in, size_t len);
/* Register the stream layer's hooks (gw_hooks.h: a revoked key's and a
 * lost runner's sessions end); once at start-up, 0 or -1. */
int gw_stream_register(void);

/* gw_keepalive.c: pings and keepalive lines on long-lived responses */
#define GW_KEEPALIVE_DEFAULT_S 25
#define GW_KEEPALIVE_MAX_S     3600
void gw_keepalive_vhost(struct lws_context_creation_info *vi, int secs);
void gw_keepalive_ws_start(struct gw_req *r);
void gw_keepalive_http_start(struct gw_req *r, int lines);
void gw_keepalive_http_download(struct gw_req *r);
void gw_keepalive_http_progress(struct gw_req *r);
void gw_keepalive_lines_sent(struct gw_req *r);
int gw_keepalive_http_timer(struct gw_req *r);

/* gw_static.c: the web demo's files */
int gw_web_dir_init(struct gw_vh *vh, const char *dir);
int gw_static_try(struct gw_req *r);

/* gw_local_runner.c: the embedded runner when none is configured */
/* drivers, default_isolation: the runner's --drivers and
 * --default-isolation (NULL: the runner's defaults). stop: a signal's
 * flag; set while the runner starts, the start gives up (the runner is
 * stopped by gw_local_runner_stop). */
int gw_local_runner_start(const char *state_dir, const char *image_dir,
			  const char *drivers, const char *default_isolation,
			  const volatile sig_atomic_t *stop,
			  const char **socket_path, struct sbx_err *err);
void gw_local_runner_check(void);   /* no-op without an embedded runner */

/* gw_runner_watch.c: is the runner there (once a second) */
void gw_runner_watch_start(struct gw_vh *vh);
void gw_runner_watch_stop(void);
void gw_local_runner_stop(void);

/* gw_mcp.c: POST and DELETE /mcp (docs/mcp.md), rows of the route table */
void gw_mcp_post(struct gw_req *r);
void gw_mcp_delete(struct gw_req *r);
void gw_mcp_body_done(struct gw_req *r);
void gw_mcp_call_free(struct gw_mcp_call *c);
/* gw_mcp_session.c: at most max_per_key sessions per key, each key's least
 * recently used one replaced (--mcp-sessions-per-key); 0, or -1 */
#define GW_MCP_SESSIONS_PER_KEY      64
#define GW_MCP_SESSIONS_PER_KEY_MAX  1024
int gw_mcp_sessions_configure(int max_per_key);

/* gw_metrics.c */
void gw_metrics_reply(struct gw_req *r);

/* gw_http.c */
int gw_http_callback(struct lws *wsi, enum lws_callback_reasons reason,
		     void *user, void *in, size_t len);

#endif
