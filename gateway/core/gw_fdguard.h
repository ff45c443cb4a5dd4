/* File descriptors under attack: the gateway's soft RLIMIT_NOFILE raised
 * to the hard limit before lws sizes its fd table from it, a count of the
 * descriptors in use (kept up to date from lws's wsi create/destroy
 * notifications and recounted from /proc once a second), a reserve that
 * previews may not take (so the API and /healthz still get descriptors
 * while previews are saturated), and one rate-limited log line for
 * "out of descriptors" however often it happens. See docs/preview.md. */
#ifndef GW_FDGUARD_H
#define GW_FDGUARD_H
#include <libwebsockets.h>

#define GW_FD_RESERVE_DEFAULT 256      /* at most a quarter of the limit */
#define GW_FD_LOG_INTERVAL_S  1        /* one "out of descriptors" line per */

/* Raise the soft limit to the hard one (capped at 1 << 20); before
 * lws_create_context. Returns the soft limit in force. */
long gw_fd_raise_limit(void);
/* Start counting (after the context exists): reserve < 0 means the
 * default. */
void gw_fd_init(struct lws_context *ctx, long reserve);
void gw_fd_stop(void);
/* A wsi was created (+1) or destroyed (-1): from protocols[0]. */
void gw_fd_wsi(int delta);
/* Descriptors left before the limit, and the reserve previews leave. */
long gw_fd_room(void);
long gw_fd_reserve(void);
long gw_fd_limit(void);
/* 1 when a new preview connection may take descriptors. */
int gw_fd_preview_ok(void);
/* 1 for the errno values that mean "no descriptor (or buffer) now". */
int gw_fd_exhausted_errno(int e);
/* Where a descriptor was lacking. */
enum gw_fdx {
	GW_FDX_ACCEPT,          /* accept() failed: an idle one closed, a 503, or a pause */
	GW_FDX_EVICT,           /* an idle sniffed connection closed (503) for a new one */
	GW_FDX_REFUSED,         /* a new connection answered 503 at once */
	GW_FDX_HANDOVER,        /* moving a sniffed connection to lws: 503 */
	GW_FDX_RESERVE,         /* a preview refused 503: the reserve is the API's */
	GW_FDX_RUNNER_SOCKET,   /* a preview's runner socket: 503 */
	GW_FDX_ADOPT,           /* lws had no slot: 503 or closed */
	GW_FDX_N
};
/* Count one failure for lack of descriptors; logs at most one line per
 * GW_FD_LOG_INTERVAL_S with how many there were, by place. */
void gw_fd_exhausted(enum gw_fdx where, int e);
#endif
