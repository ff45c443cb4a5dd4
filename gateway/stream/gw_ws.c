/* WebSocket sessions (command streams and terminals): admission before
 * the upgrade, the session's life (it is the connection's user data from
 * the upgrade on: gw_ws.h), the
 * outgoing message queue, and client messages. The queue is s->q holding
 * one record per message: [kind 1 byte][length 4 bytes BE][pad][LWS_PRE
 * headroom][payload]; kinds 1/2 are output of stdout/stderr (the payload
 * starts with the stream's tag, but a terminal's is bare screen bytes), 3
 * a text message, 4 a close. A record is written from where it lies, as
 * lws_write wants its frame header room before the payload: output is
 * copied once, into the queue, and output of one stream that queues while
 * the client is busy joins the last record, up to one message's worth, so
 * it goes out in fewer, larger messages. The upstream is paused while the
 * queue holds GW_QUEUE_HIGH bytes (gw_stream.c's sink), so a slow client
 * costs at most that much (plus one message); it is resumed below half of
 * it. */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include "../core/gw_hooks.h"
#include "gw_ws.h"
#include "sbx_log.h"

#define WSQ_TEXT 3
#define WSQ_CLOSE 4
#define WSQ_HDR (8 + LWS_PRE)       /* a record's header and lws's room */
#define WS_MSG_MAX (64 * 1024)      /* largest output message we send */
#define WS_TEXT_MAX 4096            /* largest client text message */

static uint32_t rec_len(const unsigned char *h)
{
	return (uint32_t)h[1] << 24 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 8 | h[4];
}

static void set_rec_len(unsigned char *h, size_t n)
{
	h[1] = (unsigned char)(n >> 24);
	h[2] = (unsigned char)(n >> 16);
	h[3] = (unsigned char)(n >> 8);
	h[4] = (unsigned char)n;
}

static int is_output(unsigned kind)
{
	return kind != WSQ_TEXT && kind != WSQ_CLOSE;
}

/* A record of kind whose payload is a tag byte (tag) then n bytes of p. */
static int queue_rec(struct gw_ws_session *s, unsigned kind, size_t tag, const void *p, size_t n)
{
	unsigned char *d = sbx_buf_reserve(&s->q, WSQ_HDR + tag + n);

	if (!d)
		return -1;
	memset(d, 0, WSQ_HDR);
	d[0] = (unsigned char)kind;
	set_rec_len(d, tag + n);
	if (tag)
		d[WSQ_HDR] = (unsigned char)kind;
	if (n)
		memcpy(d + WSQ_HDR + tag, p, n);
	s->q_last = s->q.len;
	sbx_buf_commit(&s->q, WSQ_HDR + tag + n);
	return 0;
}

/* Output joins the last record while that is output of the same stream
 * with room left (it is not being written: records go out whole). */
static int queue_output(struct gw_ws_session *s, unsigned kind, const unsigned char *p, size_t n)
{
	size_t tag = s->kind == GW_WS_PTY ? 0 : 1, max = tag + WS_MSG_MAX;

	while (n) {
		unsigned char *h = s->q.len ? sbx_buf_head(&s->q) + s->q_last : NULL;
		size_t k, have = h && h[0] == kind ? rec_len(h) : max;

		if (have >= max) {
			k = n < WS_MSG_MAX ? n : WS_MSG_MAX;
			if (queue_rec(s, kind, tag, p, k))
				return -1;
		} else {
			k = n < max - have ? n : max - have;
			if (!(h = sbx_buf_reserve(&s->q, k)))
				return -1;
			memcpy(h, p, k);
			sbx_buf_commit(&s->q, k);
			/* the reserve may have moved the bytes, never their
			 * place from the head */
			set_rec_len(sbx_buf_head(&s->q) + s->q_last, have + k);
		}
		p += k;
		n -= k;
	}
	return 0;
}

/* Why asked once: on the libuv loop every lws_callback_on_writable is a
 * uv_poll_start, which libuv carries out as an epoll_ctl DEL and ADD of
 * the socket and which drops the socket's events still waiting in the
 * turn's batch, asked already or not; output queued piece by piece asked
 * for each piece. The ws role takes POLLOUT away only right before our
 * SERVER_WRITEABLE (lws_handle_POLLOUT_event), so one request stands
 * until then. */
void gw_ws_want_write(struct gw_ws_session *s)
{
	if (s->write_asked)
		return;
	s->write_asked = 1;
	lws_callback_on_writable(s->wsi);
}

static int queue(struct gw_ws_session *s, unsigned kind, const void *p, size_t n)
{
	if (s->closing)
		return 0;
	if (is_output(kind) ? queue_output(s, kind, p, n) : queue_rec(s, kind, 0, p, n))
		return -1;
	if (kind == WSQ_CLOSE)
		s->closing = 1;
	/* output comes from reads of the upstream, each ending in
	 * gw_ws_flush: it goes out there, in one write per read */
	if (is_output(kind))
		s->unflushed = 1;
	else
		gw_ws_want_write(s);
	return 0;
}

int gw_ws_queue_bin(struct gw_ws_session *s, unsigned tag, const void *p, size_t n)
{
	return queue(s, tag, p, n);   /* counted in bytes_streamed by svc */
}

int gw_ws_queue_json(struct gw_ws_session *s, cJSON *o)
{
	char *t = o ? sbx_json_print(o) : NULL;
	int rc = t ? queue(s, WSQ_TEXT, t, strlen(t)) : -1;
	cJSON_free(t);
	cJSON_Delete(o);
	return rc;
}

void gw_ws_queue_close(struct gw_ws_session *s, int code, const char *reason)
{
	unsigned char b[2 + 120];
	size_t n = strlen(reason) < 120 ? strlen(reason) : 120;

	b[0] = (unsigned char)(code >> 8);
	b[1] = (unsigned char)code;
	memcpy(b + 2, reason, n);
	queue(s, WSQ_CLOSE, b, 2 + n);
}

void gw_ws_error(struct gw_ws_session *s, const char *code, const char *msg)
{
	cJSON *o = cJSON_CreateObject(), *e;

	cJSON_AddStringToObject(o, "type", "error");
	e = cJSON_AddObjectToObject(o, "error");
	cJSON_AddStringToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", msg);
	gw_ws_queue_json(s, o);
}

void gw_ws_fail(struct gw_ws_session *s, int status, const char *code, const char *msg)
{
	if (s->closing)
		return;
	gw_up_close(&s->main.up);
	gw_ws_error(s, code, msg);
	gw_ws_queue_close(s, 4000 + status % 1000, code);
}

/* Drop the head record. */
static void consume(struct gw_ws_session *s)
{
	size_t n = WSQ_HDR + rec_len(sbx_buf_head(&s->q));

	sbx_buf_consume(&s->q, n);
	s->q_last = s->q.len ? s->q_last - n : 0;
}

void gw_ws_output_flow(struct gw_ws_session *s)
{
	if (!s->paused && s->q.len < GW_QUEUE_HIGH / 2)
		svc_resume(&s->main);
}

/* Why the close waits for a timer: Debian's lws 4.1.6 is built with
 * _DEBUG, and on the libuv loop (gw_loop.c) it closes a wsi twice when
 * one of its callbacks returns -1 ("close_and_handled uv repeat test" in
 * lws_service_fd_tsi); the second close kills the connection the first
 * had left open to send our close frame, so clients saw 1006, never the
 * code. From a timer, outside the wsi's own service, lws closes it once,
 * the polite way: our close frame, then the client's answer. */
static void close_now(lws_sorted_usec_list_t *sul)
{
	struct gw_ws_session *s = lws_container_of(sul, struct gw_ws_session, close_sul);

	lws_set_timeout(s->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_SYNC);
}

/* Messages go out while the socket takes them whole: one WRITEABLE
 * empties the queue of a client that keeps up, where one message each
 * cost a turn of the loop and two changes of the socket's events (lws
 * takes POLLOUT away before the callback, the next request puts it
 * back). lws 4.1.6 allows writes back to back (a part the kernel did not
 * take is kept in order ahead of the next); the first such part ends the
 * round, and lws asks for the WRITEABLE that sends it. The close record
 * waits for a WRITEABLE (in_writeable 0). -1 when a write failed. */
static int drain(struct gw_ws_session *s, int in_writeable)
{
	struct lws *wsi = s->wsi;

	while (s->q.len && !lws_partial_buffered(wsi)) {
		unsigned char *h = sbx_buf_head(&s->q);
		uint32_t len = rec_len(h);

		if (h[0] == WSQ_CLOSE) {
			if (!in_writeable)
				break;
			lws_close_reason(wsi,
					 (enum lws_close_status)(h[WSQ_HDR] << 8 | h[WSQ_HDR + 1]),
					 h + WSQ_HDR + 2, len - 2);
			consume(s);
			lws_sul_schedule(lws_get_context(wsi), 0, &s->close_sul, close_now, 1);
			return 0;
		}
		/* lws writes the frame header into the headroom before the payload */
		if (lws_write(wsi, h + WSQ_HDR, len,
			      h[0] == WSQ_TEXT ? LWS_WRITE_TEXT : LWS_WRITE_BINARY) < (int)len)
			return -1;
		consume(s);
	}
	if (s->q.len)
		gw_ws_want_write(s);
	gw_ws_output_flow(s);
	return 0;
}

/* Why at once, outside a WRITEABLE: a client that keeps up then never
 * needs one, and a WRITEABLE per read cost a turn of the loop and, on
 * libuv, two epoll_ctl pairs (POLLOUT asked, then taken away before the
 * callback). While a WRITEABLE is asked for, the socket was full or a
 * message is ahead (a close): the output waits for it. */
void gw_ws_flush(struct gw_ws_session *s)
{
	if (!s->unflushed)
		return;
	s->unflushed = 0;
	if (!s->open || s->closing || s->write_asked) {
		gw_ws_want_write(s);
		return;
	}
	/* a failed write leaves the socket unusable: lws asks for no
	 * WRITEABLE on it any more, so it is closed from here */
	if (drain(s, 0))
		lws_set_timeout(s->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
}

static int writeable(struct gw_ws_session *s)
{
	s->write_asked = 0;
	if (s->drop)
		return -1;
	if (s->up_lost && !s->closing) {
		s->up_lost = 0;
		gw_ws_fail(s, 502, "internal", "the sandbox ended the stream");
	}
	return drain(s, 1);
}

/* Pause reading the client while what it sent has not gone upstream. */
static void input_backpressure(struct gw_ws_session *s)
{
	if (!s->rx_paused &&
	    (gw_up_queued(&s->main.up) >= GW_QUEUE_HIGH ||
	     gw_session_side_queued(s->stdin_side) >= GW_QUEUE_HIGH)) {
		s->rx_paused = 1;
		lws_rx_flow_control(s->wsi, 0);
	}
}

void gw_ws_input_flow(struct gw_ws_session *s)
{
	if (s->rx_paused && !s->resize_side && gw_up_queued(&s->main.up) < GW_QUEUE_HIGH / 2 &&
	    gw_session_side_queued(s->stdin_side) < GW_QUEUE_HIGH / 2) {
		s->rx_paused = 0;
		lws_rx_flow_control(s->wsi, 1 | LWS_RXFLOW_REASON_FLAG_PROCESS_NOW);
	}
}

/* A text message from the client, whole: parsed and handed on. */
static void text_message(struct gw_ws_session *s)
{
	struct sbx_err err = { 0 };
	cJSON *o = sbx_json_parse_object(sbx_buf_head(&s->text), s->text.len, &err);
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "type");

	if (o && sbx_json_refuse_nul(o, &err) < 0) {   /* no string of one is data */
		cJSON_Delete(o);
		gw_ws_error(s, "invalid", err.msg);
		return;
	}
	if (!o || !cJSON_IsString(t)) {
		cJSON_Delete(o);
		gw_ws_error(s, "bad_request", o ? "a message needs a string \"type\"" : err.msg);
		return;
	}
	gw_session_message(s, t->valuestring, o);
	cJSON_Delete(o);
	input_backpressure(s);
}

static int receive(struct gw_ws_session *s, const unsigned char *in, size_t len)
{
	struct lws *wsi = s->wsi;
	int start = !s->in_mid;
	int end = lws_is_final_fragment(wsi) && !lws_remaining_packet_payload(wsi);

	s->in_mid = !end;
	if (start) {
		s->in_bin = lws_frame_is_binary(wsi);
		sbx_buf_reset(&s->text);
		s->in_tagged = 0;   /* a binary message's tag may come in a later piece */
	}
	if (s->in_bin) {
		if (s->kind == GW_WS_PTY)   /* keystrokes, no tag */
			s->in_tagged = 1;
		if (!s->in_tagged && len) {
			if (in[0] != 0) {
				gw_ws_fail(s, 400, "bad_request",
					   "binary messages from the client are stdin: tag 0 then bytes");
				return 0;
			}
			s->in_tagged = 1;
			in++;
			len--;
		}
		if (len && !s->closing)
			gw_session_input(s, in, len);
		input_backpressure(s);
		return 0;
	}
	if (sbx_buf_append(&s->text, in, len)) {
		gw_ws_queue_close(s, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, "text message too large");
		return 0;
	}
	if (end && !s->closing)
		text_message(s);
	return 0;
}

/* Refuse an upgrade with the API's JSON error body (before the upgrade,
 * on a fresh connection); a 426 names the version we speak. */
static int reject(struct lws *wsi, unsigned status, const char *code, const char *msg)
{
	return gw_http_refuse(wsi, status, code, msg, status == 426);
}

/* Path, key and owner, before the upgrade (the route table's WebSocket
 * rows): a refused upgrade is an HTTP error with the API's JSON body.
 * What it learns goes into the session. Returns 0 to accept. */
static int admit(struct gw_ws_session *s)
{
	char uri[512], ver[16], why[160];
	struct lws *wsi = s->wsi;
	struct gw_vh *vh = s->vh;
	const struct gw_route *rt = NULL;

	/* lws 4.1 upgrades any version; RFC 6455 4.2.2 says refuse with the
	 * one we speak */
	if (lws_hdr_copy(wsi, ver, sizeof ver, WSI_TOKEN_VERSION) <= 0 || strcmp(ver, "13"))
		return reject(wsi, 426, "upgrade_required", "WebSocket version 13 only");
	if (lws_hdr_copy(wsi, uri, sizeof uri, WSI_TOKEN_GET_URI) > 0)
		rt = gw_route_ws(uri, s->sid, s->cid);
	if (!rt)
		return reject(wsi, 404, "not_found", "no such WebSocket endpoint");
	s->key = gw_auth_check(vh, wsi, 1, s->sid, &s->scope);
	if (s->key == -2)
		return reject(wsi, 422, "invalid", "query argument access_token is longer than 255 bytes or given twice");
	if (s->key < 0)
		return reject(wsi, 401, "unauthorized", "missing or unknown API key (access_token=)");
	if (gw_owner_get(vh, s->sid) != s->key) {
		struct gw_runner *rn;
		/* A sandbox of no key here may be one made through another
		 * gateway: the upgrade is accepted and the stream starts once
		 * its runner said whose it is (svc_admit); one whose id
		 * names no runner, or another key's, is refused now. */
		if (gw_owner_get(vh, s->sid) >= 0 ||
		    gw_runner_route(vh, s->sid, &rn) == GW_RUNNER_REFUSED)
			return reject(wsi, 404, "not_found", "no such sandbox");
		s->owner_pending = 1;
	}
	/* a stream token opens only what its scope names */
	if (!(s->scope & rt->ws_scope))
		return reject(wsi, 403, "forbidden", rt->ws == GW_WS_PTY ?
			      "a terminal needs a token with the terminal scope" :
			      "a stream needs a token with the read scope");
	if (gw_query_known(wsi, rt->args, why, sizeof why))
		return reject(wsi, 422, "invalid", why);
	s->rt = rt;
	s->kind = rt->ws;
	return 0;
}

/* LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: the connection's gw_req (r)
 * ends its life here; an admitted upgrade's session takes its place as
 * the wsi's user data. lws reads the user data afresh after this
 * callback, so nothing of lws's holds r. */
static int filter(struct gw_req *r, struct gw_vh *vh, struct lws *wsi)
{
	struct gw_ws_session *s;

	if (!r || !vh)
		return -1;
	gw_req_reset(r);
	/* a keepalive tick of an earlier transaction on this connection
	 * would come with the session as its user data */
	lws_set_timer_usecs(wsi, LWS_SET_TIMER_USEC_CANCEL);
	if (!(s = calloc(1, sizeof *s)))
		return gw_http_refuse(wsi, 503, "no_capacity", "out of memory", 0);
	s->vh = vh;
	s->wsi = wsi;
	sbx_buf_init(&s->q, 0);
	sbx_buf_init(&s->text, WS_TEXT_MAX);
	if (admit(s)) {
		free(s);
		return -1;
	}
	lws_set_wsi_user(wsi, s);   /* frees r */
	return 0;
}

/* The owner of a sandbox no key here had was asked (svc_admit, as for
 * every front end): the stream starts, or the session fails with the
 * same status and code a REST call gets. */
static void admitted(struct svc_call *c)
{
	struct gw_ws_session *s = c->owner;

	s->owner_pending = 0;
	if (s->closing)
		return;
	lws_rx_flow_control(s->wsi, 1 | LWS_RXFLOW_REASON_FLAG_PROCESS_NOW);
	gw_session_start(s);
}

static void admit_reply(struct svc_call *c, int status, cJSON *body)
{
	(void)c;
	(void)status;
	cJSON_Delete(body);   /* an admission answers only by failing */
}

static void admit_fail(struct svc_call *c, int status, const char *code, const char *msg)
{
	struct gw_ws_session *s = c->owner;

	s->owner_pending = 0;
	if (!s->closing)
		gw_ws_fail(s, status, code, msg);
}

static const struct svc_sink admit_sink = { .reply = admit_reply, .fail = admit_fail };

static const char *kind_name(const struct gw_ws_session *s)
{
	return s->kind == GW_WS_PTY ? "pty" : "stream";
}

/* The upgrade went through: the session is counted and listed. */
static int established(struct gw_ws_session *s)
{
	struct gw_vh *vh = s->vh;

	if (s->open)
		return -1;
	s->open = 1;
	s->t0_us = (int64_t)lws_now_usecs();
	vh->m.ws_open++;
	s->next = vh->sessions;
	if (s->next)
		s->next->prev = s;
	vh->sessions = s;
	sbx_info("ws open %s key=%d", kind_name(s), s->key);
	gw_keepalive_ws_start(vh, s->wsi);
	/* the query now: lws lets the upgrade's headers go after this
	 * callback, and an ownership lookup starts the session later */
	gw_session_init(s);
	if (gw_session_query(s) < 0)
		return 0;   /* refused (422), answered */
	if (s->owner_pending) {
		/* nothing is read from the client until the stream starts */
		lws_rx_flow_control(s->wsi, 0);
		if (!(s->admit = malloc(sizeof *s->admit))) {
			gw_ws_fail(s, 500, "internal", "out of memory");
			return 0;
		}
		svc_call_init(s->admit, vh, s->wsi, &admit_sink, s, s->key);
		snprintf(s->admit->sid, sizeof s->admit->sid, "%s", s->sid);
		svc_admit(s->admit, admitted);
		return 0;
	}
	gw_session_start(s);
	return 0;
}

/* LWS_CALLBACK_CLOSED, or the wsi's end when an established session
 * never saw it: the session leaves the list and drops its calls. */
static void closed(struct gw_ws_session *s)
{
	lws_sul_cancel(&s->close_sul);
	if (!s->open)
		return;
	s->open = 0;
	s->vh->m.ws_open--;
	if (s->prev)
		s->prev->next = s->next;
	else
		s->vh->sessions = s->next;
	if (s->next)
		s->next->prev = s->prev;
	s->next = s->prev = NULL;
	sbx_info("ws close %s %lld ms", kind_name(s),
		 (long long)((lws_now_usecs() - (lws_usec_t)s->t0_us) / 1000));
	gw_session_detach(s);
	if (s->admit) {
		svc_call_reset(s->admit);
		free(s->admit);
		s->admit = NULL;
	}
}

/* LWS_CALLBACK_WSI_DESTROY: the session's memory (lws does not free user
 * data it did not allocate). */
static void destroyed(struct lws *wsi, struct gw_ws_session *s)
{
	closed(s);
	lws_set_wsi_user(wsi, NULL);
	sbx_buf_free(&s->q);
	sbx_buf_free(&s->text);
	free(s);
}

int gw_ws_callback(struct lws *wsi, enum lws_callback_reasons reason,
		   void *user, struct gw_vh *vh, void *in, size_t len)
{
	struct gw_ws_session *s = user;

	(void)in;
	if (reason == LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION)
		return filter(user, vh, wsi);
	if (!s)
		return -1;
	switch (reason) {
	case LWS_CALLBACK_ESTABLISHED:
		return established(s);
	case LWS_CALLBACK_RECEIVE:
		return s->open ? receive(s, in, len) : -1;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return s->open ? writeable(s) : 0;
	case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
		s->closing = 1;   /* lws answers the close; nothing after it */
		return 0;
	case LWS_CALLBACK_CLOSED:
		closed(s);
		return 0;
	case LWS_CALLBACK_WSI_DESTROY:
		destroyed(wsi, s);
		return 0;
	default:
		return 0;
	}
}

/* A revoked key's open sessions end. */
static void ws_key_revoked(struct gw_vh *vh, int key)
{
	for (struct gw_ws_session *s = vh->sessions; s; s = s->next)
		if (s->key == key)
			gw_ws_fail(s, 401, "unauthorized", "the API key was revoked");
}

/* A runner of this host went away: the sessions of its sandboxes end. */
static int ws_runner_lost(struct gw_vh *vh, struct gw_runner *rn)
{
	int n = 0;

	for (struct gw_ws_session *s = vh->sessions; s; s = s->next)
		if (!s->closing && gw_runner_for_sid(vh, s->sid) == rn) {
			gw_ws_fail(s, 502, "internal", "the runner went away; its sandboxes are lost");
			n++;
		}
	return n;
}

int gw_stream_register(void)
{
	static const struct gw_hooks hooks = {
		.key_revoked = ws_key_revoked, .runner_lost = ws_runner_lost,
	};
	return gw_hooks_register(&hooks);
}
