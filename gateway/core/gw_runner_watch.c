/* Once a second: the embedded runner is started again when it died
 * (gw_local_runner.c), and the heap is trimmed after the last session.
 * Whether each runner is there is gw_probe.c's; when a runner on this
 * host stops listening, gw_runner_watch_lost has the WebSocket sessions
 * of its sandboxes end (the stream layer's runner_lost hook, gw_hooks.h):
 * they go straight to the agents, so a runner that died would otherwise
 * go unnoticed by them; but a runner that starts again
 * kills what its predecessor left (docs/runner.md), so those streams are
 * lost all the same: they end at once with an error and a close 4502
 * rather than when their sandbox is reaped. A remote runner relays every
 * stream itself: its streams end with its connection. */
#include <malloc.h>
#include <string.h>
#include "gw.h"
#include "gw_hooks.h"
#include "sbx_log.h"

static struct {
	struct gw_vh *vh;
	lws_sorted_usec_list_t sul;
	int had_sessions;
	void (*each_second)(void);
} w;

void gw_runner_watch_lost(struct gw_vh *vh, struct gw_runner *rn)
{
	int n = gw_hooks_runner_lost(vh, rn);

	if (n)
		sbx_err_log("runner %s (%s) is gone: %d stream(s) of its sandboxes ended", rn->name,
			    rn->addr, n);
}

static void tick(lws_sorted_usec_list_t *sul)
{
	(void)sul;
	if (w.each_second)
		w.each_second();
	/* Streams' queues (up to a few hundred KiB each) come and go in
	 * bursts and leave the heap at its high-water mark; with no session
	 * open, give the memory back (the soak's idle-to-idle bound). */
	if (!w.vh->sessions && w.had_sessions)
		malloc_trim(0);
	w.had_sessions = w.vh->sessions != NULL;
	lws_sul_schedule(w.vh->ctx, 0, &w.sul, tick, LWS_US_PER_SEC);
}

void gw_runner_watch_start(struct gw_vh *vh, void (*each_second)(void))
{
	w.vh = vh;
	w.each_second = each_second;
	lws_sul_schedule(vh->ctx, 0, &w.sul, tick, LWS_US_PER_SEC);
}

void gw_runner_watch_stop(void)
{
	if (w.vh)
		lws_sul_cancel(&w.sul);
}
