/* The gateway's event loop (gw_loop.c): lws on libuv (epoll), through
 * lws's event-library plugin, or lws's own poll() loop. */
#ifndef GW_LOOP_H
#define GW_LOOP_H

#include <libwebsockets.h>

enum gw_loop_kind { GW_LOOP_UV, GW_LOOP_POLL };

/* "uv" or "poll" to a kind; -1 for anything else. */
int gw_loop_parse(const char *name);

/* lws_create_context(ci) on the loop asked for. uv falls back to poll,
 * logged once, when lws cannot load its libuv plugin. NULL when neither
 * works. */
struct lws_context *gw_loop_create(struct lws_context_creation_info *ci, enum gw_loop_kind want);

/* The loop that runs: "libuv" or "poll". */
const char *gw_loop_name(void);

/* One turn: wait for events (lws's timers bound the wait, and
 * lws_cancel_service ends it), then service them; for the start-up's
 * loops, which wait for a condition. <0 when the loop cannot go on. */
int gw_loop_turn(struct lws_context *ctx);

/* Run until lws_cancel_service (a signal, the DNS thread) or an error:
 * the caller then looks at its flags. <0 when the loop cannot go on. */
int gw_loop_run(struct lws_context *ctx);

/* The protocol that ends gw_loop_run's wait on lws_cancel_service: one
 * entry of the vhost's protocols. */
int gw_loop_callback(struct lws *wsi, enum lws_callback_reasons reason,
		     void *user, void *in, size_t len);
#define GW_LOOP_PROTOCOL { "gw-loop", gw_loop_callback, 0, 0, 0, NULL, 0 }

/* Destroy the context, and the loop under it. */
void gw_loop_destroy(struct lws_context *ctx);
#endif
