/* Kept-alive control connections to TLS runners (gw_up.h): which requests
 * may leave their connection for the next, the runner's list of idle
 * ones, and their bounds. An idle connection is a gw_up of its own owned
 * by the list (its ops below), so lws's callbacks find it like any other:
 * a byte from the runner while idle, or its close, takes it off the list.
 * Handing one over moves the socket and its TLS session from one gw_up to
 * the other. */
#include <stdlib.h>
#include <string.h>
#include "gw.h"
#include "gw_up_int.h"
#include "sbx_log.h"

_Static_assert(sizeof ((struct gw_runner *)0)->idle / sizeof(struct gw_up *) == GW_UP_IDLE_MAX,
	       "gw_runner.h's idle list holds GW_UP_IDLE_MAX");

/* Operations that take the connection over, or must never be cut short
 * (gw_up.h: a create). */
static int op_keepable(const char *op)
{
	static const char *const no[] = { "connect", "image_import", "image_pull", "create" };
	if (!op)
		return 0;
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		if (!strcmp(op, no[i]))
			return 0;
	return 1;
}

int gw_up_keep_wanted(const struct gw_up *u, const struct gw_runner *rn, cJSON *first,
		      const cJSON *next, unsigned flags)
{
	(void)u;
	if (rn->kind != GW_RUNNER_TLS || rn->keep_alive <= 1 || !first || next ||
	    (flags & (GW_UP_RAW | GW_UP_PASS_FD)))
		return 0;
	if (!op_keepable(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(first, "op"))))
		return 0;
	return cJSON_AddTrueToObject(first, "keep") != NULL;
}

static void idle_remove(struct gw_runner *rn, struct gw_up *p)
{
	for (int i = 0; i < rn->nidle; i++)
		if (rn->idle[i] == p) {
			memmove(&rn->idle[i], &rn->idle[i + 1],
				(size_t)(rn->nidle - i - 1) * sizeof rn->idle[0]);
			rn->nidle--;
			return;
		}
}

static void idle_free(struct gw_up *p)
{
	gw_up_release(p);   /* closes its socket, if still its own */
	free(p);
}

/* An idle connection's runner sent something (it should not) or its
 * bytes were no frame: close it. */
static int idle_frame(struct gw_up *p, const struct sbx_frame *f)
{
	(void)f;
	sbx_warn("runner %s: a frame on an idle kept-alive connection; closing it", p->rn->name);
	return -1;
}

/* Its socket closed (the runner's idle bound, its restart, an error). */
static void idle_closed(struct gw_up *p, int by_peer, int lost)
{
	(void)by_peer;
	(void)lost;
	idle_remove(p->owner, p);
	idle_free(p);
}

static const struct gw_up_ops idle_ops = { .frame = idle_frame, .closed = idle_closed };

int gw_up_keep_park(struct gw_up *u, struct lws *wsi)
{
	struct gw_runner *rn = u->rn;
	struct gw_up *p;

	if (!u->keep || u->nframes != 1 || u->wsi != wsi || u->in.len || u->q->len ||
	    u->rx_paused || !u->tls || !u->tls->t.established || !u->tls->got_plain ||
	    gw_tls_out_len(&u->tls->t) || gw_tls_has_input(&u->tls->t) || !rn ||
	    rn->state != GW_RUNNER_UP || strcmp(rn->addr, u->tls->addr) ||
	    u->uses >= rn->keep_alive || u->uses >= GW_UP_KEEP_USES || rn->nidle >= GW_UP_IDLE_MAX)
		return 0;
	if (!(p = malloc(sizeof *p)))
		return 0;
	gw_up_init(p, u->vh, &idle_ops, rn);
	p->wsi = wsi;
	p->tls = u->tls;
	p->tls->u = p;
	p->tls->reused = 0;
	lws_sul_cancel(&p->tls->sul);
	p->rn = rn;
	p->uses = u->uses;
	p->phase = GW_UP_OPEN;
	p->idle_ms = sbx_now_ms();
	lws_set_opaque_user_data(wsi, p);
	/* the deadline its owner set (a list's 10 s) is not the next
	 * request's: left, it would kill whichever request then has it */
	lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0);
	rn->idle[rn->nidle++] = p;
	u->wsi = NULL;
	u->tls = NULL;
	u->phase = GW_UP_DONE;
	if (u->ops->closed)
		u->ops->closed(u, 0, 0);   /* as when it closed: the owner may free u */
	return 1;
}

int gw_up_keep_take(struct gw_up *u, struct gw_runner *rn)
{
	struct gw_up *p;

	if (!rn->nidle)
		return 0;
	p = rn->idle[--rn->nidle];   /* the most recent: the furthest from its idle bound */
	u->wsi = p->wsi;
	u->tls = p->tls;
	u->tls->u = u;
	u->tls->got_plain = 0;   /* until its reply: a close is a failure to reach it */
	u->tls->reused = 1;
	u->tls->t0 = lws_now_usecs();
	u->uses = p->uses + 1;
	p->wsi = NULL;
	p->tls = NULL;
	idle_free(p);
	lws_set_opaque_user_data(u->wsi, u);
	u->vh->m.runner_kept++;
	return 1;
}

void gw_up_keep_sweep(struct gw_runner *rn, int64_t now_ms, int all)
{
	for (int i = 0; i < rn->nidle;) {
		struct gw_up *p = rn->idle[i];
		if (!all && now_ms - p->idle_ms < GW_UP_KEEP_IDLE_MS) {
			i++;
			continue;
		}
		idle_remove(rn, p);
		idle_free(p);
	}
}
