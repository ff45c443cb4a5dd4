/* A call's life and its answers: every operation answers through here,
 * once (reply or fail), or as one stream (begin, data, end), so a front
 * end's sink never sees a second answer or data after the end. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "svc.h"
#include "../core/gw_refusal.h"

void svc_call_init(struct svc_call *c, struct gw_vh *vh, struct lws *wsi,
		   const struct svc_sink *sink, void *owner, int key)
{
	memset(c, 0, sizeof *c);
	c->vh = vh;
	c->wsi = wsi;
	c->sink = sink;
	c->owner = owner;
	c->key = key;
	c->mode = -1;
}

void svc_call_reset(struct svc_call *c)
{
	if (c->create_pending && c->vh && c->key >= 0)
		c->vh->creating[c->key] -= c->create_pending;
	c->create_pending = 0;
	svc_resume_dropped(c);   /* the call ended before the runner answered */
	gw_up_release(&c->up);
	gw_owner_wait_cancel(&c->owner_wait);
	gw_probe_wait_cancel(&c->probe_wait);
	gw_owner_lookup_cancel(&c->own_wait);
	gw_place_free(c->place);
	c->place = NULL;
	gw_fan_cancel(c->fan);
	c->fan = NULL;
	cJSON_Delete(c->held_body);
	c->held_body = NULL;
	sbx_buf_free(&c->op.out);
	sbx_buf_free(&c->op.err);
	cJSON_Delete(c->op.acc);
	memset(&c->op, 0, sizeof c->op);
	memset(&c->up, 0, sizeof c->up);
	c->on_frame = NULL;
	c->answered = c->ended = c->refreshed = c->parent_closed = c->reprobed = 0;
	c->admitted = NULL;
}

void svc_reply(struct svc_call *c, int status, cJSON *body)
{
	if (c->answered) {
		cJSON_Delete(body);
		return;
	}
	c->answered = c->ended = 1;
	c->sink->reply(c, status, body);
}

int svc_fail(struct svc_call *c, int status, const char *code, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	if (c->ended)   /* after a stream began: the sink ends it (cut) */
		return -1;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	gw_up_close(&c->up);
	svc_resume_dropped(c);   /* failed before the runner's answer (after it: settled) */
	c->answered = c->ended = 1;
	c->sink->fail(c, status, code, msg);
	return -1;
}

void svc_runner_error(struct svc_call *c, const cJSON *reply)
{
	struct gw_refusal why;
	gw_refusal_reply(c->vh, reply, &why);
	svc_fail_as(c, &why);
}

void svc_fail_as(struct svc_call *c, const struct gw_refusal *why)
{
	svc_fail(c, why->status, why->code, "%s", why->msg);
}

int svc_begin(struct svc_call *c, int64_t size)
{
	if (c->answered)
		return -1;
	c->answered = 1;
	if (c->sink->begin(c, size) < 0) {
		c->ended = 1;
		gw_up_close(&c->up);
		return -1;
	}
	return 0;
}

int svc_data(struct svc_call *c, int stream, const void *p, size_t n)
{
	if (c->ended)
		return -1;
	if (c->sink->data(c, stream, p, n)) {
		svc_end(c, 1);
		return -1;
	}
	return 0;
}

void svc_end(struct svc_call *c, int cut)
{
	if (c->ended)
		return;
	c->ended = 1;
	if (!c->answered) {   /* nothing began: an empty stream */
		c->answered = 1;
		if (c->sink->begin(c, 0) < 0)
			return;
	}
	c->sink->end(c, cut);
}

void svc_resume(struct svc_call *c)
{
	if (c->up.rx_paused)
		gw_up_pause(&c->up, 0);
}
