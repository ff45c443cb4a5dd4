/* Whether the runner is there, once a second. Streams go straight to the
 * agents, so a runner that died would otherwise go unnoticed by them; but
 * a runner that starts again kills what its predecessor left (docs/
 * runner.md), so those streams are lost all the same: they end at once
 * with an error and a close 4502 rather than when their sandbox is reaped.
 * The embedded runner is also started again from here (gw_local_runner.c).
 * The probe is a connect() to the runner's socket, closed at once. */
#include <errno.h>
#include <malloc.h>
#include <string.h>
#include <unistd.h>
#include "gw.h"
#include "sbx_log.h"
#include "sbx_net.h"

static struct {
	struct gw_vh *vh;
	lws_sorted_usec_list_t sul;
	int down;
	int had_sessions;
} w;

static int runner_listening(const char *path)
{
	int fd = sbx_unix_connect(path, 0);

	if (fd >= 0) {
		close(fd);
		return 1;
	}
	if (errno == ENAMETOOLONG)
		return 0;
	/* a full backlog (EAGAIN) is a busy runner, not a dead one; no fd
	 * to spare says nothing about the runner */
	return errno == EAGAIN || errno == EMFILE || errno == ENFILE ||
	       errno == ENOBUFS || errno == ENOMEM;
}

static void tick(lws_sorted_usec_list_t *sul)
{
	int up;

	(void)sul;
	gw_local_runner_check();
	/* a runner on another host is not watched by a connect to a path
	 * (its requests fail with 503 runner_unavailable on their own) */
	struct gw_runner *rn = gw_runner_local(w.vh);
	up = rn && rn->kind == GW_RUNNER_TLS ? 1 : runner_listening(w.vh->runner_socket);
	if (!up && !w.down) {
		sbx_err_log("runner %s is gone: ending every stream", w.vh->runner_socket);
		for (struct gw_req *r = w.vh->sessions; r; r = r->ws.next)
			if (!r->ws.closing) {
				gw_up_close(&r->up);
				gw_ws_fail(r, 502, "internal", "the runner went away; its sandboxes are lost");
			}
	} else if (up && w.down) {
		sbx_info("runner %s is back", w.vh->runner_socket);
	}
	w.down = !up;
	/* Streams' queues (up to a few hundred KiB each) come and go in
	 * bursts and leave the heap at its high-water mark; with no session
	 * open, give the memory back (the soak's idle-to-idle bound). */
	if (!w.vh->sessions && w.had_sessions)
		malloc_trim(0);
	w.had_sessions = w.vh->sessions != NULL;
	lws_sul_schedule(w.vh->ctx, 0, &w.sul, tick, LWS_US_PER_SEC);
}

void gw_runner_watch_start(struct gw_vh *vh)
{
	w.vh = vh;
	lws_sul_schedule(vh->ctx, 0, &w.sul, tick, LWS_US_PER_SEC);
}

void gw_runner_watch_stop(void)
{
	if (w.vh)
		lws_sul_cancel(&w.sul);
}
