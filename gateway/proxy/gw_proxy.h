/* The preview proxy: `<port>-<id>.<domain>` requests go, as bytes, to port
 * <port> inside sandbox <id> through the runner's `connect`. See
 * docs/preview.md. */
#ifndef GW_PROXY_H
#define GW_PROXY_H
#include <stddef.h>
#include "../core/gw.h"
#include "gw_http1.h"
#include "gw_presp.h"
#include "gw_front.h"

#define GW_PROXY_HIGH   (256 * 1024)   /* stop reading the source above this */
#define GW_PROXY_LOW    (64 * 1024)    /* resume it below this */
#define GW_PROXY_CHUNK  (64 * 1024)    /* bytes per lws_write */

/* Parse a Host value (an optional :port suffix of 1-5 digits is ignored) as
 * `<port>-<id>.<domain>` (the domain case-insensitively, the first label in
 * lower case only, port 1..65535 without leading zeros and not 1024, the
 * agent's port). Returns 0 and fills *port and sid, or -1. */
int gw_phost_parse(const char *host, size_t n, const char *domain,
		   int *port, char *sid, size_t sidsz);
/* 1 when the proxy, not the API, must answer for this Host: any name under
 * the preview domain, and any name whose first label has "-sbx_" (a
 * preview-looking name must never show the API or the web demo, whose
 * origin the previews must not share). The proxy then refuses what
 * gw_phost_parse does not accept. */
int gw_phost_claim(const char *host, size_t n, const char *domain);
/* The key under which a client address is counted for the per-client
 * preview cap: IPv4 as it is, IPv6 by its /64. */
void gw_peer_key(const char *peer, char *out, size_t n);

struct gw_plimit_ent;

/* UPWAIT: an upgrade request went out; the client is not read until the
 * guest's status line says 101 (SPLICE) or anything else (HEAD again) */
enum gw_pstate { GW_P_HEAD, GW_P_ROUTE, GW_P_BODY, GW_P_SPLICE, GW_P_ERROR, GW_P_UPWAIT };
/* GET: runner `get`; FDWAIT: runner `connect` asked to pass the guest
 * socket itself; CONNECT: runner `connect` as a byte stream (a runner or
 * driver that cannot pass sockets); STREAM: bytes to and from the guest */
enum gw_pup { GW_PU_NONE, GW_PU_GET, GW_PU_FDWAIT, GW_PU_CONNECT, GW_PU_STREAM, GW_PU_GONE };

/* One client connection of the proxy (the pss of "gw-proxy"). Its
 * upstream (first a runner `get`, then the runner `connect` stream) is a
 * child wsi whose opaque data points here. */
struct gw_pconn {
	struct gw_front *f;
	struct lws *wsi;
	struct gw_up up;             /* its queue is to_up */
	enum gw_pstate state;
	enum gw_pup up_phase;
	struct sbx_buf cin;          /* client bytes not yet looked at */
	struct sbx_buf to_up;        /* bytes for the upstream */
	struct sbx_buf to_cl;        /* bytes for the client */
	struct sbx_buf head;         /* a rewritten head waiting for the route */
	char host[256];              /* the pinned Host (value as sent) */
	char sid[80];
	int port;
	int pinned;
	int64_t body_left;           /* Content-Length bytes still to forward */
	int chunked, hold;           /* hold: chunked head waits for its first size line */
	size_t hold_mark;            /* to_up length before the held request */
	struct gw_h1_chunk ck;
	int upgrade_after;           /* this request asks for a WebSocket upgrade */
	int nreq;                    /* request heads seen on this connection */
	int up_status;               /* the guest's first status code: 0 not yet, -1 not HTTP */
	char up_line[12];            /* its first bytes, "HTTP/1.1 101" */
	unsigned up_line_n;
	enum gw_pstate pending_state; /* where the first request goes on after routing */
	int cl_paused;
	int64_t idle_armed;          /* the second the idle deadline was last set, or -1 */
	int close_after;             /* close the client once to_cl drained */
	int head_started;
	uint64_t up_rx;              /* bytes the guest sent */
	int forwarded;               /* bytes of a request went to the guest */
	int sent_reqs;               /* request heads released toward the guest */
	int draining;                /* a later request failed: deliver, then close */
	int via_stream;              /* use the runner's spliced stream, not a passed socket */
	int auth;                    /* the sandbox wants its preview token (known after get) */
	int resume;                  /* it is a kept persistent sandbox: the connect resumes it */
	int resume_held;             /* ... counted against its key's limit until the reply */
	int refreshed;               /* the owner table was refreshed for its limit once */
	struct gw_owner_wait owner_wait;
	int tok_ok, tok_query;       /* this request carries the token / in ?token= */
	char redirect[2048];         /* its target without the token parameter */
	char peer[64];
	struct gw_plimit_ent *lim_sid, *lim_peer;   /* counted by gw_plimit.c */
	struct gw_presp rsp;         /* the guest's responses (gw_presp.h) */
	struct gw_h1_head h;
};

/* Push the idle deadline on (traffic): gw_proxy.c says how often. */
void gw_proxy_idle(struct gw_pconn *c);
/* Any other deadline of the connection (secs, or LWS_TO_KILL_ASYNC). */
void gw_proxy_deadline(struct gw_pconn *c, int secs);

int gw_proxy_cb(struct lws *wsi, enum lws_callback_reasons reason,
		void *user, void *in, size_t len);

/* The protocol entries main() lists after its own (same order). */
#define GW_FRONT_PROTOCOLS \
	{ "gw-listen", gw_front_listen_cb, 0, 0, 0, NULL, 0 }, \
	{ "gw-sniff", gw_front_sniff_cb, sizeof(struct gw_sniff), 0, 0, NULL, 0 }, \
	{ "gw-proxy", gw_proxy_cb, sizeof(struct gw_pconn), 0, 0, NULL, 0 }

#endif
