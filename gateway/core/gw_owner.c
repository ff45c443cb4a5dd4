/* Which key created which sandbox. A key sees only its own sandboxes; a
 * sandbox the gateway did not create is nobody's, so it is a 404 for
 * every key; a restarted gateway learns its keys' sandboxes back from the
 * owner tags the runner keeps (gw_owner_sync). Bounded table. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "gw.h"
#include "sbx_dial.h"
#include "sbx_log.h"
#include "sbx_net.h"

int gw_owner_get(struct gw_vh *vh, const char *id)
{
	for (int i = 0; i < vh->nowned; i++)
		if (!strcmp(vh->owned[i].id, id))
			return vh->owned[i].key;
	return -1;
}

static void stop_unreachable(struct gw_vh *vh, struct gw_owned *o, int key);

int gw_owner_add(struct gw_vh *vh, const char *id, int key)
{
	if (strlen(id) >= sizeof vh->owned[0].id)
		return -1;
	if (vh->nowned >= GW_MAX_OWNED) {
		/* drop the oldest stopped entry to make room */
		int i;
		for (i = 0; i < vh->nowned && (vh->owned[i].live || vh->owned[i].resuming); i++)
			;
		if (i == vh->nowned)
			return -1;
		free(vh->owned[i].agent_socket);
		memmove(&vh->owned[i], &vh->owned[i + 1],
			(size_t)(vh->nowned - i - 1) * sizeof vh->owned[0]);
		vh->nowned--;
	}
	struct gw_owned *o = &vh->owned[vh->nowned++];
	strcpy(o->id, id);
	o->key = key;
	o->live = 1;
	o->resuming = 0;
	o->agent_socket = NULL;
	/* made for a key revoked while its create was on its way: nobody
	 * can reach it, as the key's others when it went */
	if (key >= 0 && !vh->keys[key][0])
		stop_unreachable(vh, o, key);
	return 0;
}

void gw_owner_set_agent(struct gw_vh *vh, const char *id, const char *path)
{
	for (int i = 0; i < vh->nowned; i++)
		if (!strcmp(vh->owned[i].id, id)) {
			free(vh->owned[i].agent_socket);
			vh->owned[i].agent_socket = path && strlen(path) < 108 ? strdup(path) : NULL;
		}
}

int gw_agent_connect(struct gw_vh *vh, const char *sid, int *direct)
{
	int fd;

	*direct = 0;
	for (int i = 0; i < vh->nowned; i++) {
		const char *path = vh->owned[i].agent_socket;
		if (strcmp(vh->owned[i].id, sid) || !path)
			continue;
		if (!vh->owned[i].live)
			break;
		/* The socket's directory is shared with the sandbox, whose root
		 * could put a symlink or some other file there: the dial
		 * connects symlink-safely (lib/sbx_net.c) and writes CONNECT
		 * 1024; the caller reads the agent's "OK 1024" first. */
		fd = sbx_dial_start(path, SBX_AGENT_PORT);
		if (fd >= 0) {
			*direct = 1;
			return fd;
		}
		sbx_debug("%s: agent socket: %s; asking the runner", sid, strerror(errno));
		break;   /* gone or odd: let the runner say why */
	}
	/* the runner knows why (stopped, failed) and says so */
	return -1;
}

void gw_owner_set_live(struct gw_vh *vh, const char *id, int live)
{
	for (int i = 0; i < vh->nowned; i++)
		if (!strcmp(vh->owned[i].id, id))
			vh->owned[i].live = live;
}

int gw_owner_count_live(struct gw_vh *vh, int key)
{
	int n = 0;
	for (int i = 0; i < vh->nowned; i++)
		n += vh->owned[i].key == key && (vh->owned[i].live || vh->owned[i].resuming);
	return n;
}

static struct gw_owned *entry(struct gw_vh *vh, const char *id)
{
	for (int i = 0; i < vh->nowned; i++)
		if (!strcmp(vh->owned[i].id, id))
			return &vh->owned[i];
	return NULL;
}

int gw_owner_counted(struct gw_vh *vh, const char *id)
{
	const struct gw_owned *o = entry(vh, id);

	return o && (o->live || o->resuming);
}

int gw_owner_resume_room(struct gw_vh *vh, const char *id, int key)
{
	const struct gw_owned *o = entry(vh, id);

	if (o && (o->live || o->resuming))
		return 1;
	if (key < 0 || key >= GW_MAX_KEYS)
		return 1;   /* an owner this gateway does not know: nothing counted here */
	/* creates still on their way count, as for a create */
	return gw_owner_count_live(vh, key) + vh->creating[key] < vh->max_sandboxes_per_key;
}

int gw_owner_resume_hold(struct gw_vh *vh, cJSON *req, const char *id, int key)
{
	struct gw_owned *o = entry(vh, id);

	if (!gw_owner_resume_room(vh, id, key)) {
		cJSON_AddNumberToObject(req, "resume_limit", vh->max_sandboxes_per_key);
		return 0;
	}
	if (!o || o->live || o->key != key)
		return 0;   /* counted already, or by no key of ours */
	o->resuming++;
	return 1;
}

int gw_owner_resume_req(struct gw_vh *vh, cJSON *req, const char *id, int key)
{
	cJSON_AddTrueToObject(req, "resume");
	return gw_owner_resume_hold(vh, req, id, key);
}

void gw_owner_resume_release(struct gw_vh *vh, const char *id)
{
	struct gw_owned *o = entry(vh, id);

	if (o && o->resuming > 0)
		o->resuming--;
}

void gw_owner_resume_lost(struct gw_vh *vh, const char *id)
{
	gw_owner_set_live(vh, id, 1);
	gw_owner_resume_release(vh, id);
}

/* ---- runner calls (list, stop): each its own gw_up, freed when it
 * closes; the loop never waits for one. ---- */

/* Long enough that a busy runner is not given up on; a call that gets no
 * reply in time counts as failed (the runner is stuck: SIGSTOP, a hung
 * driver). Nothing waits for it but what asked. */
#define OWNER_CALL_S 30

struct owner_call {
	struct gw_up up;
	/* the reply (NULL: none came, or it was an error) */
	void (*done)(struct owner_call *c, const cJSON *reply);
	char id[80];                /* a stop's sandbox */
	int key;                    /* a stop's revoked key */
	int answered;
};

static struct {
	int refreshing;               /* a refresh in flight */
	struct gw_fan *fan;           /* the start-up list */
	struct gw_owner_wait *waiters;
	int syncing;
	int stopping;                 /* shutdown: no more callbacks */
} own;

static int call_reply(struct gw_up *u, const cJSON *o, int ok, const char *why, int fd)
{
	struct owner_call *c = u->owner;
	(void)fd;
	if (!o && !gw_up_unreachable(u))   /* that one gw_up.c logged */
		sbx_warn("runner call for %s: %s", c->id[0] ? c->id : "list", why);
	c->answered = 1;
	if (!own.stopping)
		c->done(c, ok ? o : NULL);
	return 1;
}

static void call_closed(struct gw_up *u, int by_peer, int lost)
{
	struct owner_call *c = u->owner;
	(void)by_peer;
	(void)lost;
	if (!c->answered && !own.stopping)
		c->done(c, NULL);
	gw_up_release(u);
	free(c);
}

static const struct gw_up_ops call_ops = { .reply = call_reply, .closed = call_closed };

/* Start a runner call; its done runs exactly once (with NULL when it
 * cannot even start). */
static struct owner_call *call(struct gw_vh *vh, cJSON *req, const char *id, int key,
			       void (*done)(struct owner_call *c, const cJSON *reply))
{
	struct owner_call *c = calloc(1, sizeof *c);
	if (!c) {
		cJSON_Delete(req);
		return NULL;
	}
	gw_up_init(&c->up, vh, &call_ops, c);
	c->done = done;
	c->key = key;
	snprintf(c->id, sizeof c->id, "%s", id ? id : "");
	if (gw_up_open_runner(&c->up, NULL, id ? gw_runner_for_sid(vh, id) : gw_runner_local(vh),
			      req, NULL, GW_UP_REPLY)) {
		sbx_warn("runner call for %s: %s", c->id[0] ? c->id : "list", strerror(errno));
		done(c, NULL);
		gw_up_release(&c->up);
		free(c);
		return NULL;
	}
	lws_set_timeout(c->up.wsi, PENDING_TIMEOUT_USER_OK, OWNER_CALL_S);
	return c;
}

static cJSON *op_req(const char *op, const char *id)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "op", op);
	if (id)
		cJSON_AddStringToObject(o, "id", id);
	return o;
}

int gw_owner_adopt(struct gw_vh *vh, const cJSON *sandboxes)
{
	const cJSON *s;
	int n = 0;

	cJSON_ArrayForEach(s, sandboxes) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(s, "id");
		const cJSON *ow = cJSON_GetObjectItemCaseSensitive(s, "owner");
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(s, "status");
		if (!cJSON_IsString(id) || !cJSON_IsString(ow) || gw_owner_get(vh, id->valuestring) >= 0)
			continue;
		for (int k = 0; k < vh->nkeys; k++)
			if (!strcmp(vh->key_tags[k], ow->valuestring) &&
			    !gw_owner_add(vh, id->valuestring, k)) {
				if (cJSON_IsString(st) && (!strcmp(st->valuestring, "stopped") ||
							   !strcmp(st->valuestring, "failed")))
					gw_owner_set_live(vh, id->valuestring, 0);
				else
					gw_owner_set_agent(vh, id->valuestring, cJSON_GetStringValue(
						cJSON_GetObjectItemCaseSensitive(s, "agent_socket")));
				n++;
				break;
			}
	}
	return n;
}

static void sync_done(struct gw_vh *vh, void *arg, const cJSON *sandboxes,
		      const cJSON *unavailable, const unsigned char *answered, const char *cutoff)
{
	(void)arg;
	(void)cutoff;
	(void)answered;
	(void)sandboxes;   /* adopted on the way (gw_fanout.c) */
	own.syncing = 0;
	own.fan = NULL;
	/* the start-up loop (gw_main.c) waits in lws_service for this: a
	 * call ended by its deadline ends inside the service before its
	 * poll, which would then sleep until the next timer */
	lws_cancel_service(vh->ctx);
	if (cJSON_GetArraySize(unavailable))
		sbx_warn("runners that did not list their sandboxes at start-up (their owners are "
			 "learned when asked): %d", cJSON_GetArraySize(unavailable));
	sbx_info("owner table: %d sandbox(es) of known keys", vh->nowned);
}

void gw_owner_sync(struct gw_vh *vh)
{
	own.syncing = 1;
	/* at start-up nothing else waits; a runner that does not answer
	 * within the fan-out's bound leaves its part empty, learned later */
	own.fan = gw_fan_list(vh, sync_done, NULL);
	if (!own.fan && own.syncing) {   /* out of memory */
		own.syncing = 0;
		sbx_warn("cannot list the runners' sandboxes (ownership starts empty)");
	}
}

int gw_owner_syncing(void)
{
	return own.syncing;
}

/* The runners that answered say which of our live sandboxes still run;
 * those of a runner that did not answer stay as they are. */
static void refresh_done(struct gw_vh *vh, void *arg, const cJSON *list,
			 const cJSON *unavailable, const unsigned char *answered, const char *cutoff)
{
	(void)cutoff;
	const cJSON *s;

	(void)arg;
	(void)unavailable;
	own.refreshing = 0;
	for (int i = 0; i < vh->nowned; i++) {
		struct gw_runner *rn;
		int running = 0;
		if (!vh->owned[i].live || !(rn = gw_runner_for_sid(vh, vh->owned[i].id)) ||
		    !answered[rn - vh->runners])
			continue;
		cJSON_ArrayForEach(s, list) {
			const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "id"));
			const char *st = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "status"));
			if (id && st && !strcmp(id, vh->owned[i].id))
				running = strcmp(st, "stopped") && strcmp(st, "failed");
		}
		if (!running) {
			vh->owned[i].live = 0;
			free(vh->owned[i].agent_socket);
			vh->owned[i].agent_socket = NULL;
		}
	}
	/* each waiter is off the list before its callback runs: a callback
	 * may wait again */
	while (own.waiters) {
		struct gw_owner_wait *w = own.waiters;
		own.waiters = w->next;
		w->next = NULL;
		w->cb(w);
	}
}

void gw_owner_refresh(struct gw_vh *vh, struct gw_owner_wait *w,
		      void (*cb)(struct gw_owner_wait *w))
{
	w->cb = cb;
	w->next = own.waiters;
	own.waiters = w;
	if (own.refreshing)
		return;   /* the one in flight answers w too */
	own.refreshing = 1;
	/* done may run before this returns; without memory it never runs */
	if (!gw_fan_list(vh, refresh_done, NULL) && own.refreshing) {
		static const unsigned char none[GW_RUNNERS_MAX];
		refresh_done(vh, NULL, NULL, NULL, none, NULL);
	}
}

void gw_owner_wait_cancel(struct gw_owner_wait *w)
{
	for (struct gw_owner_wait **p = &own.waiters; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			w->next = NULL;
			return;
		}
}

void gw_owner_stop(void)
{
	own.stopping = 1;
	own.waiters = NULL;
	gw_fan_stop();
}

static void stop_done(struct owner_call *c, const cJSON *o)
{
	if (o)
		sbx_info("revoked key %d: sandbox %s stopped", c->key, c->id);
	else
		sbx_warn("revoked key %d: sandbox %s: the runner did not confirm the stop",
			 c->key, c->id);
}

/* nobody could reach (or stop) it any more: it stops now, and is
 * nobody's. */
static void stop_unreachable(struct gw_vh *vh, struct gw_owned *o, int key)
{
	if (o->live)
		call(vh, op_req("stop", o->id), o->id, key, stop_done);
	o->live = 0;
	free(o->agent_socket);
	o->agent_socket = NULL;
	o->key = -1;
}

void gw_owner_forget_key(struct gw_vh *vh, int key)
{
	int stopping = 0;

	for (int i = 0; i < vh->nowned; i++) {
		struct gw_owned *o = &vh->owned[i];
		if (o->key != key)
			continue;
		stopping += o->live;
		stop_unreachable(vh, o, key);
	}
	if (stopping)
		sbx_info("revoked key %d: stopping %d sandbox(es)", key, stopping);
}
