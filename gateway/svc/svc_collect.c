/* The collecting sink: a front end that answers only when an operation is
 * over (an MCP tool's result, a @vercel/sandbox route's reply) gets the
 * whole answer at once, as values: status, the reply's JSON, or the
 * error's code and message, or a bounded read's bytes. Each step of a
 * multi-step front-end call is one operation on the same svc_call. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "svc.h"

static struct svc_collect *of(struct svc_call *c)
{
	return lws_container_of(c, struct svc_collect, call);
}

static void deliver(lws_sorted_usec_list_t *sul)
{
	struct svc_collect *k = lws_container_of(sul, struct svc_collect, sul);
	struct svc_answer a = {
		.status = k->status, .json = k->json, .cut = k->cut,
		.code = k->code[0] ? k->code : NULL, .msg = k->code[0] ? k->msg : NULL,
		.bytes = sbx_buf_head(&k->bytes), .len = k->bytes.len, .gap = k->gap,
	};
	void (*done)(struct svc_collect *, struct svc_answer *) = k->done;

	k->pending = 0;
	k->done = NULL;
	k->json = NULL;   /* a's now: done may take it */
	done(k, &a);      /* may start the next step (last), or free k */
	cJSON_Delete(a.json);
}

static void later(struct svc_collect *k)
{
	if (k->pending)
		return;
	k->pending = 1;
	lws_sul_schedule(k->call.vh->ctx, 0, &k->sul, deliver, 1);
}

static void c_reply(struct svc_call *c, int status, cJSON *body)
{
	struct svc_collect *k = of(c);
	k->status = status;
	k->json = body;
	later(k);
}

static void c_fail(struct svc_call *c, int status, const char *code, const char *msg)
{
	struct svc_collect *k = of(c);
	k->status = status;
	snprintf(k->code, sizeof k->code, "%s", code);
	snprintf(k->msg, sizeof k->msg, "%s", msg);
	cJSON_Delete(k->json);
	k->json = NULL;
	later(k);
}

static int c_begin(struct svc_call *c, int64_t size)
{
	(void)size;
	of(c)->status = 200;
	return 0;
}

static int c_data(struct svc_call *c, int stream, const void *p, size_t n)
{
	struct svc_collect *k = of(c);
	if (stream != SVC_DATA)   /* a command's output as it comes */
		return k->output ? k->output(k, stream == SVC_STDERR, p, n) : 0;
	return sbx_buf_append(&k->bytes, p, n) ? -1 : 0;
}

static int c_event(struct svc_call *c, const char *type, const cJSON *o)
{
	struct svc_collect *k = of(c);
	if (!strcmp(type, "truncated")) {
		k->gap = 1;
	} else if (!strcmp(type, "exit")) {
		cJSON_Delete(k->json);
		k->json = cJSON_Duplicate(o, 1);
	}
	return 0;
}

static void c_end(struct svc_call *c, int cut)
{
	struct svc_collect *k = of(c);
	k->cut = cut;
	later(k);
}

static void c_drained(struct svc_call *c)
{
	struct svc_collect *k = of(c);
	if (k->drained)
		k->drained(k);
}

const struct svc_sink svc_collect_sink = {
	.reply = c_reply, .fail = c_fail, .begin = c_begin, .data = c_data, .event = c_event,
	.end = c_end, .drained = c_drained,
};

void svc_collect_init(struct svc_collect *k, struct gw_vh *vh, struct lws *wsi, void *owner,
		      int key)
{
	memset(k, 0, sizeof *k);
	svc_call_init(&k->call, vh, wsi, &svc_collect_sink, owner, key);
	sbx_buf_init(&k->bytes, 0);
}

void svc_collect_step(struct svc_collect *k,
		      void (*done)(struct svc_collect *k, struct svc_answer *a))
{
	lws_sul_cancel(&k->sul);
	svc_call_reset(&k->call);
	cJSON_Delete(k->json);
	k->json = NULL;
	sbx_buf_reset(&k->bytes);
	k->status = 0;
	k->code[0] = '\0';
	k->cut = k->gap = k->pending = 0;
	k->done = done;
	k->output = NULL;
}

void svc_collect_cancel(struct svc_collect *k)
{
	lws_sul_cancel(&k->sul);
	svc_call_reset(&k->call);
	k->pending = 0;
	k->done = NULL;
}

void svc_collect_free(struct svc_collect *k)
{
	lws_sul_cancel(&k->sul);
	svc_call_reset(&k->call);
	cJSON_Delete(k->json);
	k->json = NULL;
	sbx_buf_free(&k->bytes);
}
