/* The upstream of a request: one connection to the runner's UNIX socket,
 * adopted into lws as a raw child of the HTTP wsi (closing the client
 * closes it). It sends one runner request frame; for agent operations that
 * request is `connect` to port 1024 and, once the runner says ok, the agent
 * request frame follows and every later frame goes to the request's
 * on_frame callback. Writes happen only in RAW_WRITEABLE, GW_CHUNK at a time;
 * reads pause (rx flow control) while the client's response queue is full. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "gw.h"
#include "sbx_dial.h"
#include "sbx_log.h"

#define GW_UP_IN_CAP (SBX_FRAME_MAX + SBX_FRAME_HDR + 64 * 1024)

static int queue_json(struct gw_req *r, const cJSON *o)
{
	char *s = sbx_json_print(o);
	if (!s)
		return -1;
	int rc = sbx_frame_append(&r->up_out, SBX_FRAME_JSON, s, strlen(s));
	cJSON_free(s);
	return rc;
}

int gw_up_open(struct gw_req *r, cJSON *runner_req, cJSON *agent_req,
	       gw_frame_cb cb)
{
	int fd = -1, direct = 0;

	sbx_buf_init(&r->up_out, 0);
	sbx_buf_init(&r->up_in, GW_UP_IN_CAP);
	r->on_frame = cb;
	fd = agent_req ? gw_agent_connect(r->vh, r->sid, &direct) :
			 gw_agent_connect(r->vh, "", &direct);
	if (fd < 0) {
		int e = errno;
		r->vh->m.upstream_errors++;
		sbx_warn("runner %s: %s", r->vh->runner_socket, strerror(e));
		cJSON_Delete(runner_req);
		cJSON_Delete(agent_req);
		return gw_resp_error(r, 503, "no_capacity", "runner unavailable: %s", strerror(e));
	}
	if (!direct && queue_json(r, runner_req))
		goto oom;
	cJSON_Delete(runner_req);
	runner_req = NULL;
	/* the agent request waits behind the gate until the runner said ok */
	r->up_gate = r->up_out.len;
	if (agent_req) {
		r->agent_frame = 1;
		if (queue_json(r, agent_req))
			goto oom;
		cJSON_Delete(agent_req);
		agent_req = NULL;
	}

	lws_adopt_desc_t ad = {
		.vh = r->vh->vhost, .type = LWS_ADOPT_SOCKET,
		.vh_prot_name = "gw-upstream", .parent = r->wsi, .opaque = r,
		/* an internal request's upstream is no child: its parent's
		 * close frees the request, which closes the upstream */
	};
	ad.fd.sockfd = fd;
	r->up = lws_adopt_descriptor_vhost_via_info(&ad);
	if (!r->up)   /* lws closed the fd */
		return gw_resp_error(r, 500, "internal", "cannot adopt runner socket");
	lws_set_opaque_user_data(r->up, r);
	r->up_phase = direct ? GW_UP_AGENT : GW_UP_RUNNER;
	r->up_dial = direct;
	lws_callback_on_writable(r->up);
	return 0;
oom:
	close(fd);
	cJSON_Delete(runner_req);
	cJSON_Delete(agent_req);
	return gw_resp_error(r, 500, "internal", "out of memory");
}

int gw_up_send(struct gw_req *r, enum sbx_frame_type t, const void *p, size_t n)
{
	while (n) {   /* split into frames no larger than the frame max */
		size_t k = n < 65536 ? n : 65536;
		if (sbx_frame_append(&r->up_out, t, p, k))
			return -1;
		p = (const char *)p + k;
		n -= k;
	}
	if (!n && t == SBX_FRAME_EOF && sbx_frame_append(&r->up_out, t, NULL, 0))
		return -1;
	if (r->up && r->up_phase == GW_UP_AGENT)
		lws_callback_on_writable(r->up);
	return 0;
}

void gw_up_close(struct gw_req *r)
{
	if (r->up) {
		struct lws *up = r->up;
		r->up = NULL;
		lws_set_opaque_user_data(up, NULL);
		lws_set_timeout(up, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
	}
	r->up_phase = GW_UP_DONE;
}

/* Resume reading the upstream once the client drained (called outside the
 * upstream's own callbacks). */
void gw_up_flow(struct gw_req *r)
{
	if (r->up && r->up_rx_paused) {
		r->up_rx_paused = 0;
		lws_rx_flow_control(r->up, 1 | LWS_RXFLOW_REASON_FLAG_PROCESS_NOW);
	}
}

static int runner_reply(struct gw_req *r, const struct sbx_frame *f)
{
	struct sbx_err err = { 0 };
	if (f->type != SBX_FRAME_JSON)
		return gw_resp_error(r, 502, "internal", "runner sent a non-JSON reply");
	cJSON *o = sbx_json_parse_object(f->payload, f->len, &err);
	if (!o)
		return gw_resp_error(r, 502, "internal", "runner reply: %s", err.msg);
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "ok"))) {
		gw_resp_runner_error(r, o);
		cJSON_Delete(o);
		return -1;
	}
	cJSON_Delete(o);
	r->up_phase = GW_UP_AGENT;
	lws_callback_on_writable(r->up);
	return 0;
}

static int rx(struct gw_req *r, const void *in, size_t len)
{
	struct sbx_err err = { 0 };
	if (sbx_buf_append(&r->up_in, in, len))
		return gw_resp_error(r, 502, "internal", "upstream sent too much");
	if (r->up_dial) {   /* the dial step: the agent's answer to CONNECT */
		long k = sbx_dial_parse_ok(sbx_buf_head(&r->up_in), r->up_in.len, SBX_AGENT_PORT);
		if (k == 0)
			return 0;
		if (k < 0)
			return gw_resp_error(r, 502, "internal", "the sandbox's agent refused the handshake");
		sbx_buf_consume(&r->up_in, (size_t)k);
		r->up_dial = 0;
	}
	for (;;) {
		struct sbx_frame f;
		long n = sbx_frame_decode(sbx_buf_head(&r->up_in), r->up_in.len, 0, &f, &err);
		if (n < 0)
			return gw_resp_error(r, 502, "internal", "upstream: %s", err.msg);
		if (n == 0)
			return 0;
		int rc;
		if (r->up_phase == GW_UP_RUNNER && r->agent_frame)
			rc = runner_reply(r, &f);
		else
			rc = r->on_frame(r, &f);
		sbx_buf_consume(&r->up_in, (size_t)n);
		if (rc)
			return rc;
		if (!r->up)
			return 1;
	}
}

static int writeable(struct lws *wsi, struct gw_req *r)
{
	unsigned char buf[LWS_PRE + GW_CHUNK];
	size_t n = r->up_out.len;
	/* before the runner said ok only the runner request may go out; the
	 * agent request and body frames behind it wait (the runner reads one
	 * request frame, then becomes a byte stream). */
	if (r->up_phase == GW_UP_RUNNER && n > r->up_gate)
		n = r->up_gate;
	if (!n) {
		if (r->op_state == 9 && r->up_phase == GW_UP_AGENT) {
			/* stdin without EOF: every byte went to the agent */
			gw_resp_json(r, 200, cJSON_CreateObject());
			r->up = NULL;
			r->up_phase = GW_UP_DONE;
			lws_set_opaque_user_data(wsi, NULL);
			return -1;
		}
		return 0;
	}
	if (n > GW_CHUNK)
		n = GW_CHUNK;
	memcpy(buf + LWS_PRE, sbx_buf_head(&r->up_out), n);
	if (lws_write(wsi, buf + LWS_PRE, n, LWS_WRITE_RAW) < (int)n)
		return -1;
	sbx_buf_consume(&r->up_out, n);
	if (r->up_phase == GW_UP_RUNNER)
		r->up_gate -= n;
	if ((r->up_out.len && (r->up_phase != GW_UP_RUNNER || r->up_gate)) ||
	    (!r->up_out.len && r->op_state == 9))
		lws_callback_on_writable(wsi);   /* op_state 9: answer once drained */
	else if (r->ws)
		gw_ws_input_flow(r);
	else if (r->http_rx_paused && r->wsi) {
		r->http_rx_paused = 0;
		lws_rx_flow_control(r->wsi, 1 | LWS_RXFLOW_REASON_FLAG_PROCESS_NOW);
	}
	return 0;
}

int gw_up_callback(struct lws *wsi, enum lws_callback_reasons reason,
		   void *user, void *in, size_t len)
{
	struct gw_req *r = lws_get_opaque_user_data(wsi);
	(void)user;
	switch (reason) {
	case LWS_CALLBACK_RAW_ADOPT:
		return 0;
	case LWS_CALLBACK_RAW_RX:
		if (!r || r->up != wsi)
			return -1;
		if (rx(r, in, len)) {
			if (r->up == wsi) {
				r->up = NULL;
				r->up_phase = GW_UP_DONE;
			}
			lws_set_opaque_user_data(wsi, NULL);
			return -1;
		}
		/* an internal request has no reader: r->resp_cap bounds it */
		if (r->up == wsi && r->wsi && (r->resp.len >= GW_QUEUE_HIGH || r->ws_paused) &&
		    !r->up_rx_paused) {
			r->up_rx_paused = 1;
			lws_rx_flow_control(wsi, 0);
		}
		return 0;
	case LWS_CALLBACK_RAW_WRITEABLE:
		if (!r || r->up != wsi)
			return 0;
		return writeable(wsi, r);
	case LWS_CALLBACK_RAW_CLOSE:
		if (r && r->up == wsi) {
			r->up = NULL;
			if (r->ws) {
				/* Two ways to get here: the sandbox side went away
				 * (EOF or an error on the socket), or lws closes this
				 * child because the session itself is closing, after
				 * its close frame, which nothing may follow. Only the
				 * socket tells them apart. */
				char c;
				int fd = lws_get_socket_fd(wsi);
				ssize_t n = fd >= 0 ? recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) : 0;
				if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
					r->ws_up_lost = 1;
					if (r->wsi)
						lws_callback_on_writable(r->wsi);
				} else {
					/* lws failed the session (its close frame is
					 * out): finish the failing by closing it */
					r->ws_closing = r->ws_drop = 1;
					if (r->wsi)
						lws_callback_on_writable(r->wsi);
				}
			} else if (r->up_phase != GW_UP_DONE && !r->resp_ready)
				gw_resp_error(r, 502, "internal", "upstream closed early");
			else if (r->resp_ready && !r->resp_done) {
				/* a stream cut short: close the client too */
				r->close_after = 1;
				r->resp_done = 1;
				gw_req_wake(r);
			}
			r->up_phase = GW_UP_DONE;
		}
		return 0;
	default:
		return 0;
	}
}

void gw_json_move_fields(cJSON *dst, cJSON *src, const char *const *names,
			 size_t n)
{
	for (size_t i = 0; i < n; i++) {
		cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(src, names[i]);
		if (v)
			cJSON_AddItemToObject(dst, names[i], v);
	}
}
