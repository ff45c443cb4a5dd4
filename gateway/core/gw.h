/* sandbox-gateway's core: the per-vhost state (struct gw_vh), keys and
 * owners, runners (gw_runner.h) and upstreams (gw_up.h), which every
 * layer above uses. The HTTP transaction is http/gw_req.h's; the
 * operations are svc/svc.h's. */
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
#include <stdlib.h>

#define GW_MAX_KEYS      64
#define GW_KEY_MAX       256
#define GW_MAX_OWNED     4096
#define GW_JSON_BODY_CAP (64 * 1024)          /* JSON request bodies */
#define GW_FILE_BODY_CAP (256u * 1024 * 1024) /* PUT files (streamed) */
#define GW_IMAGE_BODY_CAP ((size_t)4 << 30)   /* POST /v1/images (streamed; the runner caps too) */
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
	int resuming;               /* calls in flight that may bring it back (kept):
				     * it counts against its key's limit meanwhile */
	char *agent_socket;         /* host path of its agent (malloc'd), or NULL */
};

struct gw_metrics {
	uint64_t http_requests, http_4xx, http_5xx, upstream_errors;
	uint64_t sandboxes_created, sandboxes_deleted, commands_started;
	uint64_t bytes_streamed, files_put_bytes, files_get_bytes;
	int64_t ws_open;
	uint64_t proxy_requests, proxy_errors;   /* preview proxy (gw_proxy.c) */
	uint64_t runner_tls[2];     /* TLS runner handshakes: [0] full, [1] resumed */
	uint64_t runner_kept;       /* requests sent on a kept-alive connection (gw_up_keep.c) */
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
	int creating[GW_MAX_KEYS];  /* creates sent to the runner, not answered (a
				     * resume in flight counts in gw_owned.resuming) */
	int64_t max_timeout_ms;
	struct gw_owned owned[GW_MAX_OWNED];
	int nowned;
	struct gw_metrics m;
	unsigned char preview_secret[32];   /* preview tokens' key (gw_ptoken.c, gw_psecret.c) */
	int tls;                            /* served over TLS (--cert): https routes */
	int keepalive_s;                    /* WS pings, ndjson keepalive lines; 0 off */
	struct ssl_ctx_st *runner_tls;      /* TLS runners' client context (gw_tls.h), or NULL */
};

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
/* The key's sandboxes that count against its limit: live ones and kept
 * ones a call is resuming (gw_owner_resume_hold). */
int gw_owner_count_live(struct gw_vh *vh, int key);
/* 1 when sandbox id counts among them now (not a kept one left alone). */
int gw_owner_counted(struct gw_vh *vh, const char *id);
/* Whether bringing kept sandbox id back (a persistent one resumed) keeps
 * key within its sandbox limit, the check a create passes: 1 when it
 * counts already (live, or being resumed) or the key has room. */
int gw_owner_resume_room(struct gw_vh *vh, const char *id, int key);
/* Runner request req may resume sandbox id (an explicit resume, or a
 * request marked "resume":true): with room, a kept id is counted as
 * resuming until gw_owner_resume_release, as a create is counted while it
 * is on its way, so two resumes racing for the last place cannot both
 * pass; without room "resume_limit" goes with req (the runner then
 * refuses the resume with limit_reached). 1 when it counted (the caller
 * releases it once, at the runner's reply or when the call ends), else 0. */
int gw_owner_resume_hold(struct gw_vh *vh, cJSON *req, const char *id, int key);
/* The same for a request that resumes only as a side effect: marks it
 * "resume":true first. */
int gw_owner_resume_req(struct gw_vh *vh, cJSON *req, const char *id, int key);
void gw_owner_resume_release(struct gw_vh *vh, const char *id);
/* The same when the call ended without the runner's answer (its client
 * went away, the connection broke): the runner may have resumed it, so it
 * counts as live from now. Counting one too many is undone by the refresh
 * every refusal at the limit asks first; one too few would let the key
 * pass its limit. */
void gw_owner_resume_lost(struct gw_vh *vh, const char *id);
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
/* svc/svc_place.c */
void gw_place_free(struct gw_place *p);

/* gw_fanout.c: `list` to every runner that is up. done gets the merged
 * sandboxes (every owner's; their owner tags are adopted first), the
 * names (else addresses) of the runners that did not answer or are
 * down, which runners answered (answered[i] for vh->runners[i]) and,
 * for a paged list, the cutoff: the smallest id up to which every runner
 * said all it has ("next" of a runner that stopped early; NULL when none
 * did). */
struct gw_fan;
typedef void (*gw_fan_done)(struct gw_vh *vh, void *arg, const cJSON *sandboxes,
			    const cJSON *unavailable, const unsigned char *answered,
			    const char *cutoff);
struct gw_fan *gw_fan_list(struct gw_vh *vh, gw_fan_done done, void *arg);
/* The same with args added to each runner's request (owner, after,
 * limit: a paged list, docs/runner.md). */
struct gw_fan *gw_fan_list_args(struct gw_vh *vh, const cJSON *args, gw_fan_done done,
				void *arg);
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

/* gw_runner_watch.c: is the runner there (once a second) */
/* each_second: called once a second too (the embedded runner's check) */
void gw_runner_watch_start(struct gw_vh *vh, void (*each_second)(void));
void gw_runner_watch_stop(void);

#endif
