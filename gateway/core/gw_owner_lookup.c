/* A sandbox this gateway never saw (made through another gateway, or
 * before a restart whose start-up list missed it): its runner is asked
 * (`get`), and the sandbox is adopted when its owner tag is one of our
 * keys' (the tags are the same on every gateway given the same key file).
 * Requests for the same id share one lookup; at most GW_OWN_LOOKUPS_MAX
 * are in flight; an id found to be nobody's (not there, or another key
 * file's) is remembered for GW_OWN_NEG_MS, so a flood of made-up ids
 * costs at most one runner call per id and window. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gw.h"
#include "sbx_log.h"

#define NEG_SLOTS 512
#define LOOKUP_CALL_S 10

struct gw_own_lookup {
	struct gw_up up;
	struct gw_vh *vh;
	char sid[80];
	struct gw_own_wait *waiters;
	struct gw_own_lookup *next;
	int over;
};

static struct {
	struct gw_own_lookup *inflight;
	int n;
	struct { char sid[80]; int64_t until; } neg[NEG_SLOTS];
	int neg_next;
	int stopping;
} lk;

static int negative(const char *sid)
{
	int64_t now = sbx_now_ms();
	for (int i = 0; i < NEG_SLOTS; i++)
		if (lk.neg[i].until > now && !strcmp(lk.neg[i].sid, sid))
			return 1;
	return 0;
}

static void remember_negative(const char *sid)
{
	snprintf(lk.neg[lk.neg_next].sid, sizeof lk.neg[0].sid, "%s", sid);
	lk.neg[lk.neg_next].until = sbx_now_ms() + GW_OWN_NEG_MS;
	lk.neg_next = (lk.neg_next + 1) % NEG_SLOTS;
}

/* Tell every waiter; l leaves the in-flight list. */
static void settle(struct gw_own_lookup *l, int found, const char *msg)
{
	struct gw_own_lookup **p;

	if (l->over)
		return;
	l->over = 1;
	for (p = &lk.inflight; *p; p = &(*p)->next)
		if (*p == l) {
			*p = l->next;
			lk.n--;
			break;
		}
	while (l->waiters && !lk.stopping) {
		struct gw_own_wait *w = l->waiters;
		l->waiters = w->next;
		w->next = NULL;
		w->l = NULL;
		w->cb(w, !found ? (msg ? GW_OWN_UNAVAILABLE : GW_OWN_NO) :
		      gw_owner_get(l->vh, l->sid) == w->key ? GW_OWN_YES : GW_OWN_NO, msg);
	}
}

static int lookup_reply(struct gw_up *u, const cJSON *o, int ok, const char *why, int fd)
{
	struct gw_own_lookup *l = u->owner;
	cJSON *arr;
	(void)fd;

	if (!o) {
		sbx_warn("owner lookup of %s: %s", l->sid, why);
		settle(l, 0, "the sandbox's runner did not answer");
		return 1;
	}
	if (!ok) {   /* not_found, or anything else: nobody's, for now */
		remember_negative(l->sid);
		settle(l, 0, NULL);
		return 1;
	}
	arr = cJSON_CreateArray();
	cJSON_AddItemReferenceToArray(arr, cJSON_GetObjectItemCaseSensitive(o, "sandbox"));
	if (gw_owner_adopt(u->vh, arr))
		sbx_info("sandbox %s adopted from its runner's owner tag", l->sid);
	cJSON_Delete(arr);
	if (gw_owner_get(u->vh, l->sid) < 0)
		remember_negative(l->sid);
	settle(l, 1, NULL);
	return 1;
}

static void lookup_closed(struct gw_up *u, int by_peer, int lost)
{
	struct gw_own_lookup *l = u->owner;
	(void)by_peer;
	(void)lost;
	settle(l, 0, "the sandbox's runner closed the connection");
	gw_up_release(u);
	free(l);
}

static const struct gw_up_ops lookup_ops = { .reply = lookup_reply, .closed = lookup_closed };

void gw_owner_lookup(struct gw_vh *vh, const char *sid, int key, struct gw_own_wait *w,
		     void (*cb)(struct gw_own_wait *w, enum gw_own_result res, const char *msg))
{
	struct gw_own_lookup *l;
	struct gw_runner *rn;
	char msg[200];
	cJSON *req;

	w->cb = cb;
	w->key = key;
	w->next = NULL;
	w->l = NULL;
	switch (gw_runner_route_error(vh, sid, &rn, msg, sizeof msg)) {
	case 0:
		break;
	case 503:
		cb(w, GW_OWN_UNAVAILABLE, msg);
		return;
	default:   /* no runner of that name */
		cb(w, GW_OWN_NO, NULL);
		return;
	}
	if (negative(sid)) {
		cb(w, GW_OWN_NO, NULL);
		return;
	}
	for (l = lk.inflight; l; l = l->next)
		if (!strcmp(l->sid, sid)) {
			w->next = l->waiters;
			l->waiters = w;
			w->l = l;
			return;
		}
	if (lk.n >= GW_OWN_LOOKUPS_MAX || !(l = calloc(1, sizeof *l))) {
		cb(w, GW_OWN_BUSY, "too many sandbox lookups in flight; try again");
		return;
	}
	l->vh = vh;
	snprintf(l->sid, sizeof l->sid, "%s", sid);
	gw_up_init(&l->up, vh, &lookup_ops, l);
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", "get");
	cJSON_AddStringToObject(req, "id", sid);
	if (gw_up_open_runner(&l->up, NULL, rn, req, NULL, GW_UP_REPLY)) {
		gw_up_release(&l->up);
		free(l);
		cb(w, GW_OWN_UNAVAILABLE, gw_runner_unavailable_msg(rn, msg, sizeof msg));
		return;
	}
	lws_set_timeout(l->up.wsi, PENDING_TIMEOUT_USER_OK, LOOKUP_CALL_S);
	l->next = lk.inflight;
	lk.inflight = l;
	lk.n++;
	l->waiters = w;
	w->l = l;
}

void gw_owner_lookup_cancel(struct gw_own_wait *w)
{
	struct gw_own_lookup *l = w->l;

	if (!l)
		return;
	for (struct gw_own_wait **p = &l->waiters; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			break;
		}
	w->next = NULL;
	w->l = NULL;
}

void gw_owner_lookup_stop(void)
{
	lk.stopping = 1;
}
