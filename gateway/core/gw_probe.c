/* Each runner is asked its `status` once a second, one request in flight
 * per runner: its name, instance, draining flag, sandboxes, free memory,
 * load and isolation list, which placement, /v1/runners and /metrics use.
 * A refused or reset connection, or a request's failed connect
 * (gw_runner_failed), mark it down at once. No reply in
 * GW_PROBE_TIMEOUT_MS marks a runner that is up down only the second time
 * running (the first miss asks again at once), and not while it answers
 * other requests (a runner busy with a burst of them answers its status
 * late, in turn): a runner or a gateway busy for a moment is not every
 * sandbox's 503. A remote runner whose host has not answered the TCP
 * connect in that time (a live process's kernel does, however busy the
 * process) is down at the first miss: its host is gone or cut off. The
 * next good status marks it up. A runner that does not know `status`
 * (older runners) is asked `ping` (its name) and, once per time up,
 * `capabilities` (its isolation list); its free memory is then unknown. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gw.h"
#include "sbx_log.h"

#define PROBE_TICK_US (250 * 1000)

struct probe {
	struct gw_up up;
	struct gw_runner *rn;
	uint64_t seq;                /* gw_runner_seq_next() when sent */
	const char *op;
	int answered;
};

static struct {
	struct gw_vh *vh;
	lws_sorted_usec_list_t sul;
	int started;
	int64_t last_sent[GW_RUNNERS_MAX];
	unsigned char missed[GW_RUNNERS_MAX];    /* status replies missed in a row */
	unsigned char tried[GW_RUNNERS_MAX];     /* has answered or failed once */
	unsigned char need_caps[GW_RUNNERS_MAX]; /* its capabilities to fetch (once per time up) */
	unsigned char awaited[GW_RUNNERS_MAX];   /* its probe ends gw_probe_again's round */
	struct gw_probe_wait *waiters;
} pr;

static int idx(const struct gw_runner *rn)
{
	return (int)(rn - pr.vh->runners);
}

static int name_ok(const char *s)
{
	size_t n = strlen(s);
	if (!n || n > GW_RUNNER_NAME_MAX)
		return 0;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789") == n;
}

static void set_iso(struct gw_runner *rn, const cJSON *list, const char *def)
{
	const cJSON *e;

	if (cJSON_IsArray(list)) {
		/* `status` says no reasons: those `capabilities` gave are kept */
		struct gw_runner_iso old[GW_RUNNER_ISO_MAX];
		int nold = rn->niso;
		memcpy(old, rn->iso, sizeof old);
		rn->niso = 0;
		cJSON_ArrayForEach(e, list) {
			const char *n = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "name"));
			const char *why = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "reason"));
			const char *acc = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "accel"));
			const char *mach = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "machine"));
			struct gw_runner_iso *it = &rn->iso[rn->niso];
			if (!n || strlen(n) >= sizeof it->name || rn->niso >= GW_RUNNER_ISO_MAX)
				continue;
			snprintf(it->name, sizeof it->name, "%s", n);
			it->available = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "available"));
			it->reason[0] = '\0';
			it->accel[0] = '\0';
			it->machine[0] = '\0';
			if (why)
				snprintf(it->reason, sizeof it->reason, "%s", why);
			for (int k = 0; k < nold; k++)
				if (!strcmp(old[k].name, n)) {
					if (!why)
						memcpy(it->reason, old[k].reason, sizeof it->reason);
					memcpy(it->accel, old[k].accel, sizeof it->accel);
					memcpy(it->machine, old[k].machine, sizeof it->machine);
				}
			/* a word of lower-case letters, or nothing */
			if (acc && *acc && strlen(acc) < sizeof it->accel &&
			    strspn(acc, "abcdefghijklmnopqrstuvwxyz") == strlen(acc))
				snprintf(it->accel, sizeof it->accel, "%s", acc);
			if (mach && *mach && strlen(mach) < sizeof it->machine &&
			    strspn(mach, "abcdefghijklmnopqrstuvwxyz0123456789") == strlen(mach))
				snprintf(it->machine, sizeof it->machine, "%s", mach);
			rn->niso++;
		}
	}
	if (def && strlen(def) < sizeof rn->default_iso)
		snprintf(rn->default_iso, sizeof rn->default_iso, "%s", def);
}

/* The images a status lists (names and pulled references), hashed. */
static void set_images(struct gw_runner *rn, const cJSON *list)
{
	const cJSON *it;

	rn->nimages = 0;
	cJSON_ArrayForEach(it, list) {
		if (rn->nimages == GW_RUNNER_IMAGES_MAX)
			break;
		if (cJSON_IsString(it))
			rn->images[rn->nimages++] = gw_image_hash(it->valuestring);
	}
}

static int64_t num(const cJSON *o, const char *k, int64_t dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 9e15 ?
		(int64_t)v->valuedouble : dflt;
}

int gw_probe_apply(struct gw_vh *vh, struct gw_runner *rn, const cJSON *o, uint64_t seq)
{
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "name"));
	const char *inst = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "instance"));
	const cJSON *load = cJSON_GetObjectItemCaseSensitive(o, "load1");
	char why[160];

	if (name) {   /* status and ping */
		struct gw_runner *other;
		if (!name_ok(name)) {
			snprintf(why, sizeof why, "its name '%.20s' is not 1..16 of [a-z0-9]", name);
			gw_runner_set_state(vh, rn, GW_RUNNER_REFUSED, why);
			return -1;
		}
		if ((other = gw_runner_by_name(vh, name)) && other != rn) {
			snprintf(why, sizeof why, "runner name %s is already %s's", name, other->addr);
			gw_runner_set_state(vh, rn, GW_RUNNER_REFUSED, why);
			return -1;
		}
		if (rn->name[0] && strcmp(rn->name, name))
			sbx_warn("runner at %s now calls itself %s (was %s)", rn->addr, name, rn->name);
		snprintf(rn->name, sizeof rn->name, "%s", name);
	}
	if (inst && strlen(inst) < sizeof rn->instance) {
		if (rn->instance[0] && strcmp(rn->instance, inst))
			sbx_warn("runner %s restarted: its earlier sandboxes are gone", rn->name);
		snprintf(rn->instance, sizeof rn->instance, "%s", inst);
	}
	if (cJSON_GetObjectItemCaseSensitive(o, "memory_mb_free")) {   /* status */
		int d = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "draining"));
		if (d != rn->draining && rn->state == GW_RUNNER_UP)
			sbx_info("runner %s %s", rn->name, d ? "is draining: no new sandboxes there" :
				 "takes new sandboxes again");
		rn->draining = d;
		rn->sandboxes = (int)num(o, "sandboxes", 0);
		rn->memory_mb_free = num(o, "memory_mb_free", 0);
		gw_runner_status_seen(rn, seq);
		rn->memory_mb_cap = num(o, "memory_mb_cap", -1);
		rn->slots_free = (int)num(o, "slots_free", 0);
		rn->load1 = cJSON_IsNumber(load) ? load->valuedouble : 0;
		rn->keep_alive = (int)num(o, "keep_alive_requests", 0);
		set_iso(rn, cJSON_GetObjectItemCaseSensitive(o, "isolation"),
			cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "default_isolation")));
		set_images(rn, cJSON_GetObjectItemCaseSensitive(o, "images"));
	} else if (cJSON_GetObjectItemCaseSensitive(o, "isolation")) {   /* capabilities */
		set_iso(rn, cJSON_GetObjectItemCaseSensitive(o, "isolation"),
			cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "default")));
	} else if (name) {   /* ping: its default isolation under the older name */
		set_iso(rn, NULL, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "driver")));
	}
	return 0;
}

static void answered(struct probe *p)
{
	p->answered = 1;
	pr.missed[idx(p->rn)] = 0;
	p->rn->probe = NULL;
	pr.tried[idx(p->rn)] = 1;
}

/* A probe ended (its outcome applied): the round of gw_probe_again is
 * over once no runner it asked is still to answer. */
static void round_over(void)
{
	for (int k = 0; pr.vh && k < pr.vh->nrunners; k++)
		if (pr.awaited[k])
			return;
	/* each waiter is off the list before its callback runs: a callback
	 * may wait again (a new round) */
	while (pr.waiters) {
		struct gw_probe_wait *w = pr.waiters;
		pr.waiters = w->next;
		w->next = NULL;
		w->cb(w);
	}
}

static void round_check(int i)
{
	pr.awaited[i] = 0;
	round_over();
}

static int apply_reply(struct gw_up *u, const cJSON *o, int ok, const char *why);

static int probe_reply(struct gw_up *u, const cJSON *o, int ok, const char *why, int fd)
{
	int i = idx(((struct probe *)u->owner)->rn);
	int rc = apply_reply(u, o, ok, why);

	(void)fd;
	round_check(i);
	return rc;
}

static int apply_reply(struct gw_up *u, const cJSON *o, int ok, const char *why)
{
	struct probe *p = u->owner;
	struct gw_runner *rn = p->rn;
	struct gw_vh *vh = u->vh;

	answered(p);
	if (!o) {
		char b[200];
		if (gw_up_unreachable(u))   /* why names the runner and the reason */
			snprintf(b, sizeof b, "%s", why);
		else
			snprintf(b, sizeof b, "its %s reply: %s", p->op, why);
		gw_runner_set_state(vh, rn, GW_RUNNER_DOWN, b);
		return 1;
	}
	if (!ok) {
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "error");
		const char *code = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "code"));
		const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "message"));
		if (!strcmp(p->op, "status") && code && !strcmp(code, "bad_request")) {
			/* a runner without `status`: ask it the older way, now */
			rn->no_status_op = 1;   /* its name first (ping), then its capabilities */
			pr.last_sent[idx(rn)] = 0;
			pr.tried[idx(rn)] = 0;
			return 1;
		}
		char b[200];
		snprintf(b, sizeof b, "its %s answered %s", p->op, msg ? msg : "an error");
		gw_runner_set_state(vh, rn, GW_RUNNER_DOWN, b);
		return 1;
	}
	const cJSON *body = cJSON_GetObjectItemCaseSensitive(o, !strcmp(p->op, "capabilities") ?
							    "capabilities" : "runner");
	if (!cJSON_IsObject(body)) {
		gw_runner_set_state(vh, rn, GW_RUNNER_DOWN, "a reply without its object");
		return 1;
	}
	if (!strcmp(p->op, "capabilities"))
		pr.need_caps[idx(rn)] = 0;
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(body, "name"));
	if (rn->kind == GW_RUNNER_TLS && name && !gw_up_peer_names(u, name)) {
		/* whoever holds a certificate of our CA could claim any name */
		char b[200];
		snprintf(b, sizeof b, "it says it is runner %.20s, its certificate does not name it", name);
		gw_runner_set_state(vh, rn, GW_RUNNER_REFUSED, b);
		return 1;
	}
	if (gw_probe_apply(vh, rn, body, p->seq) == 0 && rn->name[0]) {
		if (rn->state != GW_RUNNER_UP && strcmp(p->op, "capabilities"))
			pr.need_caps[idx(rn)] = 1;   /* its isolation list and reasons, once per time up */
		gw_runner_set_state(vh, rn, GW_RUNNER_UP, "");
		if (pr.need_caps[idx(rn)])
			pr.last_sent[idx(rn)] = 0;
	}
	return 1;
}

static void probe_closed(struct gw_up *u, int by_peer, int lost)
{
	struct probe *p = u->owner;
	(void)by_peer;
	(void)lost;
	if (!p->answered) {
		answered(p);
		gw_runner_set_state(u->vh, p->rn, GW_RUNNER_DOWN, "closed the connection without answering");
		round_check(idx(p->rn));
	}
	gw_up_release(u);
	free(p);
}

static const struct gw_up_ops probe_ops = { .reply = probe_reply, .closed = probe_closed };

static void send_probe(struct gw_vh *vh, struct gw_runner *rn)
{
	struct probe *p = calloc(1, sizeof *p);
	cJSON *req = cJSON_CreateObject();
	int i = idx(rn);

	pr.last_sent[i] = sbx_now_ms();
	if (!p || !req) {
		free(p);
		cJSON_Delete(req);
		return;
	}
	p->rn = rn;
	p->op = pr.need_caps[i] && rn->name[0] ? "capabilities" : !rn->no_status_op ? "status" : "ping";
	cJSON_AddStringToObject(req, "op", p->op);
	gw_up_init(&p->up, vh, &probe_ops, p);
	int rc = gw_up_open_runner(&p->up, NULL, rn, req, NULL, GW_UP_REPLY | GW_UP_PROBE);
	if (rc) {
		int e = errno;
		pr.tried[i] = 1;
		if (rc != GW_UP_ECONNECT)   /* a failed connect marked it down already */
			gw_runner_failed(vh, rn, e, "cannot start the status probe");
		gw_up_release(&p->up);
		free(p);
		pr.awaited[i] = 0;   /* answered: not there (the caller ends the round) */
		return;
	}
	rn->probe = &p->up;
	rn->probe_sent_ms = pr.last_sent[i];
	p->seq = gw_runner_seq_next();
}

static void missed_apply(struct gw_vh *vh, struct gw_runner *rn);

/* rn's status went unanswered for GW_PROBE_TIMEOUT_MS. */
static void missed(struct gw_vh *vh, struct gw_runner *rn)
{
	missed_apply(vh, rn);
	round_check(idx(rn));
}

static void missed_apply(struct gw_vh *vh, struct gw_runner *rn)
{
	struct probe *p = rn->probe->owner;
	int i = idx(rn), n = pr.missed[i] + 1;
	int unreached = gw_up_connect_unanswered(&p->up);
	char b[80];

	answered(p);
	gw_up_release(&p->up);
	free(p);
	/* its kept connections may be as dead as this one was: the next
	 * status goes on a new one, whose TCP connect tells a vanished host */
	gw_up_keep_sweep(rn, 0, 1);
	if (unreached) {
		snprintf(b, sizeof b, "no answer to a TCP connect in %d ms", GW_PROBE_TIMEOUT_MS);
		gw_runner_set_state(vh, rn, GW_RUNNER_DOWN, b);
		return;
	}
	if (rn->replied_ms >= rn->probe_sent_ms) {
		pr.last_sent[i] = 0;   /* busy, not gone: asked again at once */
		return;
	}
	if (rn->state == GW_RUNNER_UP && n < 2) {
		pr.missed[i] = (unsigned char)n;
		pr.last_sent[i] = 0;   /* asked again at once */
		sbx_warn("runner %s: no status reply in %d ms; asking again", rn->name,
			 GW_PROBE_TIMEOUT_MS);
		return;
	}
	snprintf(b, sizeof b, "no status reply in %d ms%s", GW_PROBE_TIMEOUT_MS,
		 rn->state == GW_RUNNER_UP ? ", twice running" : "");
	gw_runner_set_state(vh, rn, GW_RUNNER_DOWN, b);
}

static void tick(lws_sorted_usec_list_t *sul)
{
	struct gw_vh *vh = pr.vh;
	int64_t now = sbx_now_ms();

	(void)sul;
	for (int i = 0; i < vh->nrunners; i++) {
		struct gw_runner *rn = &vh->runners[i];
		if (rn->state == GW_RUNNER_REFUSED)
			continue;   /* never used again (its name is taken, or not its own) */
		if (rn->gone && rn->state == GW_RUNNER_DOWN)
			continue;   /* left DNS and stopped answering */
		gw_up_keep_sweep(rn, now, 0);
		if (rn->probe && now - rn->probe_sent_ms >= GW_PROBE_TIMEOUT_MS)
			missed(vh, rn);
		if (!rn->probe && now - pr.last_sent[i] >= GW_PROBE_EVERY_MS)
			send_probe(vh, rn);
	}
	lws_sul_schedule(vh->ctx, 0, &pr.sul, tick, PROBE_TICK_US);
}

void gw_probe_start(struct gw_vh *vh)
{
	pr.vh = vh;
	pr.started = 1;
	tick(&pr.sul);
}

void gw_probe_forget(struct gw_vh *vh, struct gw_runner *rn)
{
	int i = (int)(rn - vh->runners);

	pr.last_sent[i] = 0;
	pr.tried[i] = 0;
	pr.need_caps[i] = 0;
	pr.missed[i] = 0;
	pr.awaited[i] = 0;
	gw_up_keep_sweep(rn, 0, 1);
	rn->keep_alive = 0;
}

void gw_probe_soon(struct gw_vh *vh, struct gw_runner *rn)
{
	if (!rn->probe)
		pr.last_sent[rn - vh->runners] = 0;   /* the next tick asks it */
}

void gw_probe_again(struct gw_vh *vh, struct gw_probe_wait *w, void (*cb)(struct gw_probe_wait *w))
{
	w->cb = cb;
	w->next = pr.waiters;
	pr.waiters = w;
	for (int i = 0; pr.started && i < vh->nrunners; i++) {
		struct gw_runner *rn = &vh->runners[i];
		if (rn->state == GW_RUNNER_UP || rn->state == GW_RUNNER_REFUSED ||
		    (rn->gone && rn->state == GW_RUNNER_DOWN))
			continue;
		pr.awaited[i] = 1;
		if (!rn->probe)
			send_probe(vh, rn);   /* a connect refused at once ends it here */
		if (!rn->probe)
			pr.awaited[i] = 0;
	}
	round_over();
}

void gw_probe_wait_cancel(struct gw_probe_wait *w)
{
	for (struct gw_probe_wait **p = &pr.waiters; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			w->next = NULL;
			return;
		}
}

int gw_probe_first_round(struct gw_vh *vh)
{
	for (int i = 0; i < vh->nrunners; i++)
		if ((!pr.tried[i] && vh->runners[i].state == GW_RUNNER_UNKNOWN) ||
		    (pr.need_caps[i] && vh->runners[i].state == GW_RUNNER_UP))
			return 1;   /* its status, then its capabilities (their reasons) */
	return 0;
}

void gw_probe_stop(struct gw_vh *vh)
{
	if (!pr.started)
		return;
	lws_sul_cancel(&pr.sul);
	for (int i = 0; i < vh->nrunners; i++) {
		struct gw_runner *rn = &vh->runners[i];
		gw_up_keep_sweep(rn, 0, 1);
		if (rn->probe) {
			struct probe *p = rn->probe->owner;
			rn->probe = NULL;
			gw_up_release(&p->up);
			free(p);
		}
	}
	pr.started = 0;
	pr.waiters = NULL;
}
