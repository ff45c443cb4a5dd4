/* `list` to every runner that is up, at once, each on its own upstream;
 * done runs once every one answered, failed or timed out (FAN_CALL_S),
 * with the merged list and the runners that did not answer. What each
 * answer says of owners is adopted on the way (a sandbox made through
 * another gateway with one of our keys). */
#include <stdlib.h>
#include <string.h>
#include "gw.h"
#include "sbx_log.h"

/* A busy runner lists in milliseconds; one that takes longer than this is
 * stuck (SIGSTOP, a hung driver), and its probe marks it down before. */
#define FAN_CALL_S 10

struct fan_call {
	struct gw_up up;
	struct gw_fan *f;
	int i;                      /* its runner: vh->runners[i] */
	int slot;                   /* in f->calls */
	int done;
};

/* Freed when its done has run (or it was cancelled) and its last call
 * closed: a call frees itself in its closed callback, never while gw_up
 * may still touch it. */
struct gw_fan {
	struct gw_vh *vh;
	gw_fan_done cb;             /* NULL once cancelled */
	void *arg;
	int pending, n, live, finished;
	cJSON *sandboxes, *unavailable;
	char cutoff[96];            /* the smallest "next" of a paged answer, "" none */
	unsigned char answered[GW_RUNNERS_MAX];
	struct fan_call *calls[GW_RUNNERS_MAX];
};

static void unavailable(struct gw_fan *f, const struct gw_runner *rn)
{
	cJSON_AddItemToArray(f->unavailable, cJSON_CreateString(rn->name[0] ? rn->name : rn->addr));
}

static void free_fan(struct gw_fan *f)
{
	cJSON_Delete(f->sandboxes);
	cJSON_Delete(f->unavailable);
	free(f);
}

static int stopping;   /* shutdown: lws closes the calls, nobody waits */

void gw_fan_stop(void)
{
	stopping = 1;
}

static void one_less(struct gw_fan *f)
{
	if (--f->pending == 0 && !f->finished) {
		f->finished = 1;
		if (f->cb && !stopping)
			f->cb(f->vh, f->arg, f->sandboxes, f->unavailable, f->answered,
			      f->cutoff[0] ? f->cutoff : NULL);
	}
}

/* One call is over (o: its ok reply, or NULL). */
static void call_done(struct fan_call *c, const cJSON *o)
{
	struct gw_fan *f = c->f;
	cJSON *list = cJSON_GetObjectItemCaseSensitive(o, "sandboxes"), *s;
	const char *next = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "next"));

	if (c->done)
		return;
	c->done = 1;
	if (cJSON_IsArray(list)) {
		f->answered[c->i] = 1;
		if (next && strlen(next) < sizeof f->cutoff &&
		    (!f->cutoff[0] || strcmp(next, f->cutoff) < 0))
			snprintf(f->cutoff, sizeof f->cutoff, "%s", next);
		gw_owner_adopt(f->vh, list);
		cJSON_ArrayForEach(s, list)
			cJSON_AddItemToArray(f->sandboxes, cJSON_Duplicate(s, 1));
	} else {
		unavailable(f, &f->vh->runners[c->i]);
	}
	one_less(f);
}

static int fan_reply(struct gw_up *u, const cJSON *o, int ok, const char *why, int fd)
{
	struct fan_call *c = u->owner;
	(void)fd;
	if (!o)
		sbx_warn("runner %s: list: %s", u->vh->runners[c->i].addr, why);
	call_done(c, ok ? o : NULL);
	return 1;   /* closes: fan_closed frees c */
}

static void fan_closed(struct gw_up *u, int by_peer, int lost)
{
	struct fan_call *c = u->owner;
	struct gw_fan *f = c->f;
	(void)by_peer;
	(void)lost;
	call_done(c, NULL);
	f->calls[c->slot] = NULL;
	gw_up_release(u);
	free(c);
	if (--f->live == 0 && f->finished)
		free_fan(f);
}

static const struct gw_up_ops fan_ops = { .reply = fan_reply, .closed = fan_closed };

struct gw_fan *gw_fan_list(struct gw_vh *vh, gw_fan_done done, void *arg)
{
	return gw_fan_list_args(vh, NULL, done, arg);
}

struct gw_fan *gw_fan_list_args(struct gw_vh *vh, const cJSON *args, gw_fan_done done,
				void *arg)
{
	struct gw_fan *f = calloc(1, sizeof *f);

	if (!f)
		return NULL;
	f->vh = vh;
	f->cb = done;
	f->arg = arg;
	f->sandboxes = cJSON_CreateArray();
	f->unavailable = cJSON_CreateArray();
	f->pending = 1;   /* held until every call started */
	for (int i = 0; i < vh->nrunners; i++) {
		struct gw_runner *rn = &vh->runners[i];
		struct fan_call *c;
		cJSON *req;
		if (rn->state == GW_RUNNER_REFUSED || (rn->gone && rn->state != GW_RUNNER_UP))
			continue;
		if (rn->state != GW_RUNNER_UP) {
			unavailable(f, rn);
			continue;
		}
		c = calloc(1, sizeof *c);
		req = cJSON_CreateObject();
		if (!c || !req) {
			free(c);
			cJSON_Delete(req);
			unavailable(f, rn);
			continue;
		}
		cJSON_AddStringToObject(req, "op", "list");
		for (const cJSON *a = args ? args->child : NULL; a; a = a->next)
			cJSON_AddItemToObject(req, a->string, cJSON_Duplicate(a, 1));
		c->f = f;
		c->i = i;
		gw_up_init(&c->up, vh, &fan_ops, c);
		if (gw_up_open_runner(&c->up, NULL, rn, req, NULL, GW_UP_REPLY)) {
			gw_up_release(&c->up);
			free(c);
			unavailable(f, rn);
			continue;
		}
		c->slot = f->n;
		f->calls[f->n++] = c;
		f->live++;
		f->pending++;
		lws_set_timeout(c->up.wsi, PENDING_TIMEOUT_USER_OK, FAN_CALL_S);
	}
	one_less(f);
	if (f->finished && !f->live) {
		free_fan(f);
		return NULL;   /* done already */
	}
	return f;
}

void gw_fan_cancel(struct gw_fan *f)
{
	if (!f)
		return;
	f->cb = NULL;
	for (int i = 0; i < f->n; i++)
		if (f->calls[i]) {
			gw_up_release(&f->calls[i]->up);   /* no callback from here on */
			free(f->calls[i]);
		}
	free_fan(f);
}
