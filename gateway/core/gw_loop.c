/* The event loop (gw_loop.h). Why libuv: lws's own loop calls poll() over
 * every descriptor on every turn, so its cost grows with the connections
 * open (preview clients, their guests, streams) and was the largest part
 * of the proxy's own CPU. On libuv lws waits in epoll and touches only
 * the descriptors that are ready.
 *
 * The uv loop is ours (lws's "foreign loop"), not lws's internal one:
 * lws's internal uv loop runs until stopped and takes SIGINT and SIGTERM
 * for itself, while the gateway turns its loop one wait at a time and
 * checks its own flags in between (gw_main.c). lws 4.1.6 re-arms its
 * timer (lws_sul) only after an I/O or timer callback; every sul here is
 * scheduled from one of those, or before the first turn. */
#include <string.h>
#include <uv.h>
#include "gw_loop.h"
#include "sbx_log.h"

static uv_loop_t uv;
static int uv_on;          /* the context runs on uv */
static struct lws_context *live;   /* lws clears it when the context is freed */

int gw_loop_parse(const char *name)
{
	if (!strcmp(name, "uv"))
		return GW_LOOP_UV;
	if (!strcmp(name, "poll"))
		return GW_LOOP_POLL;
	return -1;
}

const char *gw_loop_name(void)
{
	return uv_on ? "libuv" : "poll";
}

static void close_handle(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

/* Close whatever is left on the loop and the loop itself; the loop must
 * not be turned any more. */
static void uv_finish(void)
{
	uv_walk(&uv, close_handle, NULL);
	for (int i = 0; i < 1000 && uv_run(&uv, UV_RUN_NOWAIT); i++)
		;
	int rc = uv_loop_close(&uv);
	if (rc)
		sbx_warn("libuv loop: %s at close", uv_strerror(rc));
}

struct lws_context *gw_loop_create(struct lws_context_creation_info *ci, enum gw_loop_kind want)
{
	struct lws_context *ctx;

	ci->pcontext = &live;
	if (want == GW_LOOP_UV) {
		int rc = uv_loop_init(&uv);
		if (rc) {
			sbx_warn("libuv loop: %s; using poll", uv_strerror(rc));
		} else {
			void *loops[1] = { &uv };
			ci->options |= LWS_SERVER_OPTION_LIBUV;
			ci->foreign_loops = loops;
			ctx = lws_create_context(ci);
			ci->options &= ~(uint64_t)LWS_SERVER_OPTION_LIBUV;
			ci->foreign_loops = NULL;
			if (ctx) {
				uv_on = 1;
				return live = ctx;
			}
			/* lws names what failed (its libuv plugin not installed:
			 * libwebsockets-evlib-uv) */
			uv_finish();
			sbx_warn("lws cannot run on libuv; using poll");
		}
	}
	ctx = lws_create_context(ci);
	return live = ctx;
}

int gw_loop_turn(struct lws_context *ctx)
{
	if (!uv_on)
		return lws_service(ctx, 0);
	uv_run(&uv, UV_RUN_ONCE);
	return 0;
}

/* Why not gw_loop_turn in a loop: lws restarts an idle handle after every
 * I/O callback, and libuv polls without waiting on a turn that begins
 * with one, so turning once at a time costs a spare epoll_wait after
 * every event; run in one go, the handle has run by the time libuv
 * waits. */
int gw_loop_run(struct lws_context *ctx)
{
	if (!uv_on)
		return lws_service(ctx, 0);
	uv_run(&uv, UV_RUN_DEFAULT);
	return 0;
}

int gw_loop_callback(struct lws *wsi, enum lws_callback_reasons reason,
		     void *user, void *in, size_t len)
{
	(void)wsi;
	(void)user;
	(void)in;
	(void)len;
	if (reason == LWS_CALLBACK_EVENT_WAIT_CANCELLED && uv_on)
		uv_stop(&uv);   /* gw_loop_run returns when this turn ends */
	return 0;
}

void gw_loop_destroy(struct lws_context *ctx)
{
	if (!ctx)
		return;
	lws_context_destroy(ctx);
	if (!uv_on)
		return;
	/* On a foreign loop lws closes its handles through the loop: turn it
	 * until they are closed, then lws frees the context. Bounded: a
	 * handle that never closes costs a warning, not a hung exit. */
	for (int i = 0; i < 10000 && live && uv_run(&uv, UV_RUN_NOWAIT); i++)
		;
	if (live)
		lws_context_destroy(live);
	if (live)
		sbx_warn("libuv loop: lws did not finish closing");
	else
		uv_finish();
	uv_on = 0;
}
