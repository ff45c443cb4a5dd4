/* Keepalive of long-lived responses. A stream of a command that prints
 * nothing for minutes would send nothing at all, and proxies in between
 * (nginx's proxy_read_timeout is 60 s, cloud load balancers cut at 60-100
 * s) close a connection on which nothing was read for that long. So every
 * vh->keepalive_s seconds:
 * - a WebSocket (stream or terminal) gets a PING; lws answers the peer's
 *   pings and notes its pongs. A peer that answered no ping for twice the
 *   interval is closed by lws (its session ends as on any close), so a
 *   vanished client costs its resources for a bounded time;
 * - an ndjson logs response on which no line went out for that long gets a
 *   {"keepalive":true} line (docs/api.md).
 * The WebSocket part is lws 4.1.6's validity timer (lws_retry_bo_t on the
 * vhost): it starts for a server connection only when someone confirms
 * validity, which gw_keepalive_ws_start does when the session opens. */
#include <string.h>
#include "../http/gw_req.h"

#define KEEPALIVE_LINE "{\"keepalive\":true}\n"
#define PEER_CHECK_US ((int64_t)LWS_US_PER_SEC)

void gw_keepalive_vhost(struct lws_context_creation_info *vi, int secs)
{
	/* lives as long as the vhost; with secs 0 the hangup is 0, which keeps
	 * lws from ever starting the timer (even on an unsolicited pong) */
	static lws_retry_bo_t policy;

	policy.secs_since_valid_ping = (uint16_t)secs;
	policy.secs_since_valid_hangup = (uint16_t)(2 * secs);
	vi->retry_and_idle_policy = &policy;
}

void gw_keepalive_ws_start(struct gw_vh *vh, struct lws *wsi)
{
	if (vh->keepalive_s > 0)
		lws_validity_confirmed(wsi);   /* first ping in keepalive_s */
}

/* Called while routing a GET whose response lasts as long as a command
 * (logs, ?wait=1), inside LWS_CALLBACK_HTTP. Right after that callback
 * lws 4.1.6 arms a deadline of context timeout_secs (5 s) for the request
 * that only a body's end clears (roles/http/server/server.c), so a GET
 * would be cut 5 s after it came, however live. The first timer tick,
 * once the callback has returned, lifts it; such a response is bounded by
 * its command, and its peer's death shows through TCP keepalive. */
void gw_keepalive_http_start(struct gw_req *r, int lines)
{
	r->ka.on = 1;
	r->ka.lines = lines && r->vh->keepalive_s > 0;
	gw_keepalive_lines_sent(r);
	lws_set_timer_usecs(r->wsi, 1);
}

/* A file download lasts as long as its client reads it (a 20 MB file to a
 * client reading 1.5 MB/s was cut after 5 s by the same lws deadline): it
 * is cut only when no byte went out for GW_DOWNLOAD_STALL_S, so a client
 * that stopped reading does not hold its agent connection for ever. */
#define GW_DOWNLOAD_STALL_S 60

void gw_keepalive_http_download(struct gw_req *r)
{
	gw_keepalive_http_start(r, 0);
	r->ka.stall_s = GW_DOWNLOAD_STALL_S;
}

/* At each HTTP_WRITEABLE of a response: lws calls it only when the socket
 * can take bytes, so the client is reading. */
void gw_keepalive_http_progress(struct gw_req *r)
{
	if (r->ka.stall_s && r->ka.no_deadline && !r->resp_done)
		lws_set_timeout(r->wsi, PENDING_TIMEOUT_HTTP_CONTENT, r->ka.stall_s);
}

void gw_keepalive_lines_sent(struct gw_req *r)
{
	r->ka.last_us = (int64_t)lws_now_usecs();
}

/* LWS_CALLBACK_TIMER of an HTTP connection. The timer is the wsi's own, so
 * it goes away with the connection; one left from a request that ended
 * (reset: ka.on 0) does nothing. */
int gw_keepalive_http_timer(struct gw_req *r)
{
	/* a tick may outlive its transaction: lws gives the next one on the
	 * connection a fresh gw_req, not yet started (vh NULL) */
	if (!r->active || !r->vh || !r->ka.on || r->resp_done)
		return 0;
	int64_t period = (int64_t)r->vh->keepalive_s * LWS_US_PER_SEC;
	int64_t now = (int64_t)lws_now_usecs();

	if (!r->ka.no_deadline) {
		if (r->ka.stall_s)
			lws_set_timeout(r->wsi, PENDING_TIMEOUT_HTTP_CONTENT, r->ka.stall_s);
		else
			lws_set_timeout(r->wsi, NO_PENDING_TIMEOUT, 0);
		r->ka.no_deadline = 1;
	}
	/* while it waits for the command, a response's connection is held
	 * (gw_pipeline.c) and lws reads nothing: a client that went away is
	 * seen here instead, within PEER_CHECK_US */
	if (gw_pipe_peer_gone(r->wsi))
		return -1;
	if (!r->ka.lines) {
		lws_set_timer_usecs(r->wsi, PEER_CHECK_US);
		return 0;
	}
	if (now - r->ka.last_us >= period) {
		/* not before the response started; bytes still queued are
		 * traffic enough once they move */
		if (r->resp_ready && !r->resp.len) {
			const char *ka = r->ka.text ? r->ka.text : KEEPALIVE_LINE;
			if (sbx_buf_append(&r->resp, ka, strlen(ka)))
				return -1;
			gw_pipe_want_write(r->wsi);
		}
		r->ka.last_us = now;
	}
	int64_t next = r->ka.last_us + period - now;
	lws_set_timer_usecs(r->wsi, (lws_usec_t)(next < PEER_CHECK_US ? next : PEER_CHECK_US));
	return 0;
}
