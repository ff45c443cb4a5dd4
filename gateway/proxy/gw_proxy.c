/* The preview proxy's client side (gw_proxy.h, docs/preview.md). Each
 * request head is parsed strictly (gw_http1.c), rewritten with
 * X-Forwarded-*, and forwarded with exactly the body its framing says;
 * responses go back framed, their heads checked and their cookies made
 * the preview's own (gw_presp.h). A connection is pinned to its
 * first Host, so one upstream stream serves all its requests, and a
 * WebSocket upgrade the guest answers with 101 turns it into a plain
 * splice. Memory per connection is
 * bounded by the watermarks: the side that outruns the other is paused
 * with lws_rx_flow_control (LIBWEBSOCKETS.md §3). */
#include <stdio.h>
#include <string.h>
#include "gw_proxy.h"
#include "gw_proxy_up.h"
#include "gw_proxy_auth.h"
#include "gw_plimit.h"
#include "sbx_log.h"

#define CIN_CAP   (GW_H1_HEAD_MAX + 4 * GW_PROXY_CHUNK)
#define QUEUE_CAP (GW_PROXY_HIGH + 4 * GW_PROXY_CHUNK)

static const char *reason_phrase(int status)
{
	switch (status) {
	case 400: return "Bad Request";
	case 302: return "Found";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 409: return "Conflict";
	case 408: return "Request Timeout";
	case 421: return "Misdirected Request";
	case 431: return "Request Header Fields Too Large";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Error";
	}
}

void gw_proxy_deadline(struct gw_pconn *c, int secs)
{
	c->idle_armed = -1;
	lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, secs);
}

/* lws_set_timeout re-sorts the wsi among the deadlines of every
 * connection (a walk of that list), and traffic pushes the idle deadline
 * on with each request and each read of a response: so it is set at most
 * once a second, a second longer. The connection then closes between
 * idle_timeout_s and a second more after its last traffic, never early. */
void gw_proxy_idle(struct gw_pconn *c)
{
	int64_t now_s = (int64_t)(lws_now_usecs() / LWS_US_PER_SEC);
	if (c->idle_armed == now_s)
		return;
	c->idle_armed = now_s;
	lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, c->f->idle_timeout_s + 1);
}

void gw_proxy_pause_client(struct gw_pconn *c, int pause)
{
	if (!c->wsi || c->cl_paused == pause)
		return;
	c->cl_paused = pause;
	lws_rx_flow_control(c->wsi, pause ? 0 : 1 | LWS_RXFLOW_REASON_FLAG_PROCESS_NOW);
}

void gw_proxy_fail(struct gw_pconn *c, int status, const char *msg)
{
	c->f->vh->m.proxy_errors++;
	sbx_info("preview %s: %d %s", c->host[0] ? c->host : "?", status, msg);
	gw_proxy_answer(c, status, "", msg);
}

/* A whole response saying msg, ending the connection, appended to out. */
static void error_page(struct sbx_buf *out, int status, const char *extra, const char *msg)
{
	char page[1024], hdr[2048 + 256];
	int pn = snprintf(page, sizeof page,
		"<!doctype html><meta charset=utf-8><title>%d %s</title>"
		"<h1>%d %s</h1><p>%s</p>\n", status, reason_phrase(status),
		status, reason_phrase(status), msg);
	if (pn < 0 || (size_t)pn >= sizeof page)
		pn = 0;
	int hn = snprintf(hdr, sizeof hdr, "HTTP/1.1 %d %s\r\n%s"
		"Content-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n"
		"Cache-Control: no-store\r\nConnection: close\r\n\r\n",
		status, reason_phrase(status), extra, pn);
	if (hn < 0 || (size_t)hn >= sizeof hdr)
		hn = 0;
	size_t mark = out->len;
	if (sbx_buf_append(out, hdr, (size_t)hn) || sbx_buf_append(out, page, (size_t)pn))
		out->len = mark;   /* all of it or nothing */
}

void gw_proxy_answer(struct gw_pconn *c, int status, const char *extra, const char *msg)
{
	c->state = GW_P_ERROR;
	gw_proxy_pause_client(c, 1);
	sbx_buf_reset(&c->cin);
	/* With no response parsing, a status line is safe only while no
	 * response can be in flight: nothing came from the guest and no
	 * earlier request is on its way there (or the guest is gone). */
	int in_flight = c->up_rx || (c->sent_reqs && c->up_phase == GW_PU_STREAM);
	if (in_flight && c->up.wsi && c->up_phase == GW_PU_STREAM && c->wsi) {
		/* deliver what the guest answers to the earlier requests, then
		 * close: when it closes, or after a quiet head timeout */
		c->draining = 1;
		gw_proxy_deadline(c, c->f->head_timeout_s);
		return;
	}
	c->close_after = 1;
	gw_proxy_up_close(c);
	if (in_flight || !c->wsi) {
		sbx_buf_reset(&c->to_cl);
		if (c->wsi)
			gw_proxy_deadline(c, LWS_TO_KILL_ASYNC);
		return;
	}
	sbx_buf_reset(&c->to_cl);
	error_page(&c->to_cl, status, extra, msg);
	lws_callback_on_writable(c->wsi);
}

/* The head to send: request line, the client's headers minus any
 * X-Forwarded-* (a client must not choose what the guest trusts), then
 * ours. */
static int rewrite_head(struct gw_pconn *c, const char *p, struct sbx_buf *out)
{
	const struct gw_h1_head *h = &c->h;
	uint32_t rl_end = h->nhdr ? h->hdr[0].line.off : (uint32_t)h->head_len - 2;
	char xf[512];
	uint32_t t_off = h->target.off, t_len = h->target.len;
	/* The @vercel/sandbox SDK's domain(port) is "https://" + subdomain +
	 * ".vercel.run"; our routes' subdomain ends in "/" so that names this
	 * host with the path /.vercel.run (docs/vercel.md), which goes here */
	if (t_len >= 12 && !memcmp(p + t_off, "/.vercel.run", 12) &&
	    (t_len == 12 || p[t_off + 12] == '/' || p[t_off + 12] == '?')) {
		if (sbx_buf_append(out, p + h->method.off, t_off - h->method.off) ||
		    (t_len == 12 || p[t_off + 12] == '?' ? sbx_buf_append(out, "/", 1) : 0) ||
		    sbx_buf_append(out, p + t_off + 12, rl_end - t_off - 12))
			return -1;
	} else if (sbx_buf_append(out, p + h->method.off, rl_end - h->method.off))
		return -1;
	for (int k = 0; k < h->nhdr; k++) {
		const struct gw_h1_hdr *hd = &h->hdr[k];
		if ((hd->name.len >= 12 && !strncasecmp(p + hd->name.off, "x-forwarded-", 12)) ||
		    gw_h1_name_is(p, hd, "x-preview-token"))
			continue;
		if (sbx_buf_append(out, p + hd->line.off, hd->line.len))
			return -1;
	}
	const struct gw_h1_hdr *hh = &h->hdr[h->host];
	/* pieces, not snprintf: this runs for every request */
	const char *proto = c->f->tls ? "\r\nX-Forwarded-Proto: https\r\nX-Forwarded-Host: " :
					"\r\nX-Forwarded-Proto: http\r\nX-Forwarded-Host: ";
	size_t pl = strlen(c->peer), rl = strlen(proto);
	if (17 + pl + rl + hh->value.len + 4 >= sizeof xf)
		return -1;
	memcpy(xf, "X-Forwarded-For: ", 17);
	memcpy(xf + 17, c->peer, pl);
	memcpy(xf + 17 + pl, proto, rl);
	memcpy(xf + 17 + pl + rl, p + hh->value.off, hh->value.len);
	memcpy(xf + 17 + pl + rl + hh->value.len, "\r\n\r\n", 4);
	return sbx_buf_append(out, xf, 17 + pl + rl + hh->value.len + 4);
}

/* After an upgrade request the client is not read until the guest's
 * status line is known (gw_proxy_process then goes on): only a 101 makes
 * the connection a splice; anything else and the next request is parsed
 * like any other. */
static void request_done(struct gw_pconn *c)
{
	c->state = c->upgrade_after ? GW_P_UPWAIT : GW_P_HEAD;
	c->head_started = 0;
}

int gw_proxy_guest_bytes(struct gw_pconn *c, const void *in, size_t len)
{
	if (!gw_presp_feed(&c->rsp, in, len, &c->to_cl, GW_PTOKEN_COOKIE))
		return 0;
	/* what the guest answered before goes on; nothing after can be
	 * framed, so the connection ends, with a 502 in place of a refused
	 * head (a response boundary: a status line is safe there) */
	c->f->vh->m.proxy_errors++;
	sbx_info("preview %s: a response of the guest refused: %s", c->host, c->rsp.why);
	c->state = GW_P_ERROR;
	gw_proxy_pause_client(c, 1);
	sbx_buf_reset(&c->cin);
	c->close_after = 1;
	gw_proxy_up_close(c);
	if (c->rsp.at_head)
		error_page(&c->to_cl, 502, "", "The sandbox's server sent a response head that the "
			   "preview proxy does not pass on (see the gateway's log).");
	lws_callback_on_writable(c->wsi);
	return -1;
}

void gw_proxy_guest_rx(struct gw_pconn *c, const void *in, size_t len)
{
	static const char want[] = "HTTP/1.x ddd";
	const char *p = in;
	/* a client that had pipelined as far as the guest's answers allow
	 * goes on once a response began */
	if (c->state == GW_P_HEAD && c->cin.len && c->cl_paused && !gw_presp_full(&c->rsp))
		gw_proxy_process(c);
	if (c->up_status)
		return;
	for (size_t i = 0; i < len && c->up_line_n < sizeof c->up_line; i++) {
		char ch = p[i], w = want[c->up_line_n];
		int fits = w == 'x' || w == 'd' ? ch >= '0' && ch <= '9' : ch == w;
		if (!fits) {
			c->up_status = -1;   /* not an HTTP response: no upgrade */
			break;
		}
		c->up_line[c->up_line_n++] = ch;
	}
	if (!c->up_status && c->up_line_n == sizeof c->up_line)
		c->up_status = (c->up_line[9] - '0') * 100 + (c->up_line[10] - '0') * 10 +
			       (c->up_line[11] - '0');
	if (c->up_status && c->state == GW_P_UPWAIT)
		gw_proxy_process(c);
}

/* Queue bytes for the upstream (or hold them while routing). */
static int to_upstream(struct gw_pconn *c, const void *p, size_t n)
{
	if (!n)
		return 0;
	if (sbx_buf_append(&c->to_up, p, n))
		return -1;
	c->forwarded = 1;
	if (c->up.wsi && c->up_phase == GW_PU_STREAM && !c->hold)
		gw_up_write_now(&c->up);
	return 0;
}

/* A complete head is at the front of cin. Returns 0 to go on, -1 after
 * failing the connection, 1 to stop and wait (routing). */
static int on_head(struct gw_pconn *c, size_t hl)
{
	const char *p = (const char *)sbx_buf_head(&c->cin);
	const struct gw_h1_head *h = &c->h;
	const char *t = p + h->target.off;
	int port;
	char sid[sizeof c->sid];

	c->f->vh->m.proxy_requests++;
	if (h->method.len == 7 && !memcmp(p + h->method.off, "CONNECT", 7))
		return gw_proxy_fail(c, 400, "CONNECT is not proxied"), -1;
	if (t[0] != '/' && !(h->target.len == 1 && t[0] == '*'))
		return gw_proxy_fail(c, 400, "the request target must be a path"), -1;
	if (h->host < 0)
		return gw_proxy_fail(c, 400, "no Host header"), -1;
	const struct gw_h1_hdr *hh = &h->hdr[h->host];
	if (gw_phost_parse(p + hh->value.off, hh->value.len, c->f->vh->preview_domain,
			   &port, sid, sizeof sid))
		return gw_proxy_fail(c, c->pinned ? 421 : 400,
				     "not a preview address: <port>-<sandbox id>.<domain>"), -1;
	if (c->pinned && (port != c->port || strcmp(sid, c->sid)))
		return gw_proxy_fail(c, 421, "one connection serves one preview host"), -1;
	gw_proxy_auth_scan(c, p, sid);
	if (c->pinned && gw_proxy_auth_gate(c))
		return -1;
	struct sbx_buf *dst = c->pinned ? &c->to_up : &c->head;
	c->hold_mark = c->pinned ? c->to_up.len : 0;
	if (rewrite_head(c, p, dst))
		return gw_proxy_fail(c, 500, "out of memory"), -1;
	/* its response's framing depends on it (a HEAD's has no body);
	 * gw_proxy_process keeps the ring from filling */
	gw_presp_expect(&c->rsp, h->method.len == 4 && !memcmp(p + h->method.off, "HEAD", 4));
	c->body_left = h->content_length > 0 ? h->content_length : 0;
	c->chunked = h->chunked;
	if (c->chunked) {
		gw_h1_chunk_init(&c->ck);
		c->hold = 1;   /* nothing goes out before the first size line checks out */
	}
	/* only the first request's response is known to start the guest's
	 * bytes (responses are not parsed): a later upgrade request goes out
	 * as a plain request and the connection stays parsed */
	c->upgrade_after = ++c->nreq == 1 && h->conn_upgrade && h->upgrade_websocket;
	sbx_buf_consume(&c->cin, hl);
	c->state = c->chunked || c->body_left ? GW_P_BODY : GW_P_HEAD;
	if (c->state == GW_P_HEAD)
		request_done(c);
	gw_proxy_idle(c);
	if (!c->pinned) {
		if (gw_plimit_admit(c, sid))
			return -1;
		c->pinned = 1;
		c->port = port;
		strcpy(c->sid, sid);
		snprintf(c->host, sizeof c->host, "%.*s", (int)hh->value.len, p + hh->value.off);
		c->forwarded = 1;
		c->pending_state = c->state;
		c->state = GW_P_ROUTE;
		gw_proxy_pause_client(c, 1);
		gw_proxy_up_route(c);
		return 1;
	}
	if (!c->hold)
		c->sent_reqs++;
	if (c->up.wsi && c->up_phase == GW_PU_STREAM && !c->hold)
		gw_up_write_now(&c->up);
	return 0;
}

static int on_body(struct gw_pconn *c)
{
	size_t n = c->cin.len, room = QUEUE_CAP - c->to_up.len;
	const char *p = (const char *)sbx_buf_head(&c->cin);
	if (n > room)
		n = room;
	if (!c->chunked) {
		if ((uint64_t)n > (uint64_t)c->body_left)
			n = (size_t)c->body_left;
		c->body_left -= (int64_t)n;
		if (to_upstream(c, p, n))
			return -1;
		sbx_buf_consume(&c->cin, n);
		if (!c->body_left)
			request_done(c);
		return 0;
	}
	long k = gw_h1_chunk_feed(&c->ck, p, n);
	if (k < 0) {
		if (c->hold)   /* nothing of this request left the gateway: drop it */
			c->to_up.len = c->hold_mark;
		gw_proxy_fail(c, 400, "bad chunked framing");
		return -1;
	}
	if (to_upstream(c, p, (size_t)k))
		return -1;
	sbx_buf_consume(&c->cin, (size_t)k);
	if (c->hold && (c->ck.sizes || c->ck.done)) {
		c->hold = 0;
		c->sent_reqs++;
		if (c->up.wsi && c->up_phase == GW_PU_STREAM)
			gw_up_write_now(&c->up);
	}
	if (c->ck.done)
		request_done(c);
	return 0;
}

/* cin holds nothing but empty lines (RFC 9112 2.2), a last CR included */
static int only_empty_lines(const struct sbx_buf *b)
{
	const char *p = (const char *)sbx_buf_head(b);
	long lead = gw_h1_lead(p, b->len);
	return lead >= 0 && ((size_t)lead == b->len ||
			     ((size_t)lead + 1 == b->len && p[lead] == '\r'));
}

void gw_proxy_process(struct gw_pconn *c)
{
	for (;;) {
		if (c->state == GW_P_UPWAIT && c->up_status)
			c->state = c->up_status == 101 ? GW_P_SPLICE : GW_P_HEAD;
		if (c->state == GW_P_ERROR || c->state == GW_P_ROUTE || c->state == GW_P_UPWAIT)
			break;
		if (c->to_up.len >= GW_PROXY_HIGH) {
			gw_proxy_pause_client(c, 1);
			return;
		}
		if (!c->cin.len)
			break;
		if (c->state == GW_P_HEAD) {
			if (gw_presp_full(&c->rsp)) {
				/* as many requests wait for their answers as the
				 * proxy tracks: read on once one began */
				gw_proxy_pause_client(c, 1);
				return;
			}
			int rc = gw_h1_parse((const char *)sbx_buf_head(&c->cin), c->cin.len, &c->h);
			if (rc == 0) {
				/* slowloris: the clock does not restart; empty
				 * lines alone (a client's CRLF after its last
				 * request) start no head, and more than a few of
				 * them are refused by the parser */
				if (!c->head_started && !only_empty_lines(&c->cin)) {
					c->head_started = 1;
					gw_proxy_deadline(c, c->f->head_timeout_s);
				}
				break;
			}
			if (rc < 0) {
				gw_proxy_fail(c, -rc, rc == -431 ? "request head too large" :
					      rc == -505 ? "HTTP version not supported" :
					      "malformed or ambiguous request");
				return;
			}
			if (on_head(c, (size_t)rc))
				return;
		} else if (c->state == GW_P_BODY) {
			if (on_body(c))
				return;
		} else {   /* splice */
			size_t n = c->cin.len, room = QUEUE_CAP - c->to_up.len;
			if (n > room)
				n = room;
			if (to_upstream(c, sbx_buf_head(&c->cin), n)) {
				gw_proxy_fail(c, 500, "out of memory");
				return;
			}
			sbx_buf_consume(&c->cin, n);
		}
	}
	if (c->state == GW_P_UPWAIT)
		gw_proxy_pause_client(c, 1);
	else if (c->state != GW_P_ERROR && c->state != GW_P_ROUTE)
		gw_proxy_pause_client(c, 0);
}

/* One chunk of to_cl to the client; -1 when the socket failed. */
static int client_put(struct gw_pconn *c)
{
	unsigned char buf[LWS_PRE + GW_PROXY_CHUNK];
	size_t n = c->to_cl.len;
	if (n > GW_PROXY_CHUNK)
		n = GW_PROXY_CHUNK;
	memcpy(buf + LWS_PRE, sbx_buf_head(&c->to_cl), n);
	if (lws_write(c->wsi, buf + LWS_PRE, n, LWS_WRITE_RAW) < (int)n)
		return -1;
	sbx_buf_consume(&c->to_cl, n);
	if (c->to_cl.len || c->close_after)
		lws_callback_on_writable(c->wsi);
	if (c->to_cl.len < GW_PROXY_LOW)
		gw_up_pause(&c->up, 0);
	return 0;
}

static int client_writeable(struct gw_pconn *c)
{
	if (!c->to_cl.len)
		return c->close_after ? -1 : 0;
	return client_put(c);
}

void gw_proxy_client_flush(struct gw_pconn *c)
{
	if (!c->wsi)
		return;
	/* bytes lws holds go first, in the WRITEABLE; so does a close */
	if (!c->to_cl.len || lws_partial_buffered(c->wsi)) {
		if (c->to_cl.len || c->close_after)
			lws_callback_on_writable(c->wsi);
		return;
	}
	if (client_put(c))   /* not in its own callback: lws closes it next turn */
		gw_proxy_deadline(c, LWS_TO_KILL_ASYNC);
}

static void conn_init(struct gw_pconn *c, struct lws *wsi, struct gw_front *f)
{
	c->f = f;
	c->wsi = wsi;
	sbx_buf_init(&c->cin, CIN_CAP);
	sbx_buf_init(&c->to_up, QUEUE_CAP + GW_H1_HEAD_MAX + 1024);
	sbx_buf_init(&c->to_cl, QUEUE_CAP);
	sbx_buf_init(&c->head, GW_H1_HEAD_MAX + 1024);
	gw_presp_init(&c->rsp);
	gw_proxy_up_init(c);
	if (lws_get_peer_simple(wsi, c->peer, sizeof c->peer) == NULL)
		strcpy(c->peer, "unknown");
	/* an IPv4 peer on a dual-stack socket reads ::ffff:a.b.c.d */
	if (!strncmp(c->peer, "::ffff:", 7))
		memmove(c->peer, c->peer + 7, strlen(c->peer + 7) + 1);
	gw_proxy_deadline(c, f->head_timeout_s);
}

static void conn_free(struct gw_pconn *c)
{
	gw_plimit_release(c);
	gw_proxy_up_close(c);   /* a runner socket awaiting its fd is no child of ours */
	gw_up_release(&c->up);
	sbx_buf_free(&c->cin);
	sbx_buf_free(&c->to_up);
	sbx_buf_free(&c->to_cl);
	sbx_buf_free(&c->head);
	gw_presp_free(&c->rsp);
	c->wsi = NULL;
}

int gw_proxy_cb(struct lws *wsi, enum lws_callback_reasons reason,
		void *user, void *in, size_t len)
{
	struct gw_pconn *c = user;
	switch (reason) {
	case LWS_CALLBACK_RAW_ADOPT: {
		struct gw_front **pf = lws_protocol_vh_priv_get(lws_get_vhost(wsi),
								lws_get_protocol(wsi));
		if (!c || !pf || !*pf)
			return -1;
		conn_init(c, wsi, *pf);
		return 0;
	}
	case LWS_CALLBACK_RAW_RX:
		if (!c || !c->wsi)
			return -1;
		if (c->state == GW_P_ERROR)
			return 0;
		if (sbx_buf_append(&c->cin, in, len)) {
			gw_proxy_fail(c, 431, "request too large");
			return 0;
		}
		if (c->state == GW_P_BODY || c->state == GW_P_SPLICE)
			gw_proxy_idle(c);
		gw_proxy_process(c);
		return 0;
	case LWS_CALLBACK_RAW_WRITEABLE:
		return c && c->wsi ? client_writeable(c) : 0;
	case LWS_CALLBACK_RAW_CLOSE:
		if (c && c->wsi)
			conn_free(c);
		return 0;
	default:
		return 0;
	}
}
