/* Placement of a create (docs/api.md, "Runners"): the candidates are the
 * runners that are up, not draining, offer the isolation (the asked one,
 * else the runner's default) and report at least the asked memory free;
 * best first by free memory, then fewest sandboxes, then lowest load
 * (gw_place_order), a runner that has the image asked for (its status
 * lists it) ahead of those that would pull it first. The create goes to the first; a refusal for want of
 * room (no_capacity, draining) or a failed connect moves it to the next,
 * GW_PLACE_TRIES at most. None left: 503 no_capacity naming each
 * runner's reason. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "svc.h"
#include "sbx_log.h"

#define DEFAULT_MEMORY_MB 512   /* the runner's default (docs/runner.md) */

/* The create on p->counted failed (refused, closed): it leaves the
 * runner's count at once. */
static void settle(struct gw_place *p)
{
	if (p->counted && !p->answered)
		gw_runner_create_failed(p->counted, p->seq);
	p->counted = NULL;
}

static void note(struct gw_place *p, const struct gw_runner *rn, const char *why)
{
	size_t k = strlen(p->why);
	if (k + 8 < sizeof p->why)
		snprintf(p->why + k, sizeof p->why - k, "%s%s: %s", k ? "; " : "",
			 rn->name[0] ? rn->name : rn->addr, why);
}

static int none_up(struct svc_call *c);

static void answer_none(struct svc_call *c)
{
	if (none_up(c))
		return;   /* no runner answers at all: runner_unavailable */
	svc_fail(c, 503, "no_capacity", "no runner can take this sandbox (%s)",
		      c->place->why[0] ? c->place->why : "no runner is known");
}

/* Open the create on the next candidate: 1 opened, 2 answered (none left). */
static int try_next(struct svc_call *c)
{
	struct gw_place *p = c->place;

	while (p->next < p->n) {
		struct gw_runner *rn = &c->vh->runners[p->order[p->next++]];
		int rc = svc_runner_on(c, rn, cJSON_Duplicate(p->req, 1), p->cb);
		if (rc == 0) {
			p->at = rn;
			p->counted = rn;
			p->seq = gw_runner_seq_next();
			gw_runner_create_sent(rn, p->seq, p->memory_mb);
			return 1;
		}
		if (rc != GW_UP_ECONNECT && rc != GW_UP_EDOWN)
			return 2;   /* answered (no memory, adoption) */
		note(p, rn, rc == GW_UP_EDOWN ? "down" : "connect failed");
	}
	answer_none(c);
	return 2;
}

int svc_place_retry(struct svc_call *c, const cJSON *reply)
{
	struct gw_place *p = c->place;
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(reply, "error");
	const char *code = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "code"));
	const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "message"));

	if (reply && !(code && (!strcmp(code, "no_capacity") || !strcmp(code, "draining"))))
		return 0;   /* the runner's answer is the client's */
	settle(p);
	if (p->at)
		note(p, p->at, reply ? (msg ? msg : code) : "closed before answering");
	if (p->at && code && !strcmp(code, "draining"))
		p->at->draining = 1;   /* until its next status says otherwise */
	p->at = NULL;
	return try_next(c);
}

void svc_place_taken(struct svc_call *c)
{
	/* it stays counted until a status requested after it was sent */
	c->place->answered = 1;
}

void gw_place_free(struct gw_place *p)
{
	if (p) {
		settle(p);
		cJSON_Delete(p->req);
		free(p);
	}
}

/* None reports the room: the free memory seen is up to a second old (a
 * sandbox stopped meanwhile gave its memory back), so the runners whose
 * cap could hold it are asked anyway, most free first; each one's own
 * answer decides (no_capacity moves the create on). */
static int stale_room(const struct gw_runner *const *rs, int n, const char *iso, int64_t memory_mb,
		      int *order)
{
	int all[GW_RUNNERS_MAX], k = gw_place_order(rs, n, iso, 0, all, GW_RUNNERS_MAX), m = 0;

	for (int i = 0; i < k && m < GW_PLACE_TRIES; i++)
		if (rs[all[i]]->memory_mb_cap < 0 || rs[all[i]]->memory_mb_cap >= memory_mb)
			order[m++] = all[i];
	return m;
}

/* No runner answers at all: 503 runner_unavailable, each runner and why
 * (its address and the connect's or handshake's reason). 1 when answered. */
static int none_up(struct svc_call *c)
{
	struct gw_vh *vh = c->vh;
	char why[600] = "";
	size_t k = 0;

	for (int i = 0; i < vh->nrunners; i++) {
		const struct gw_runner *rn = &vh->runners[i];
		if (rn->state == GW_RUNNER_UP)
			return 0;
		if (rn->gone || k + 8 >= sizeof why)
			continue;
		k += (size_t)snprintf(why + k, sizeof why - k, "%s%s: %s", k ? "; " : "",
				      rn->name[0] ? rn->name : rn->addr,
				      rn->state == GW_RUNNER_UNKNOWN ? "not answered yet" : rn->why);
		if (k >= sizeof why)
			k = sizeof why - 1;
	}
	svc_fail(c, 503, "runner_unavailable", "no runner is answering (%s)",
		      why[0] ? why : "none is known");
	return 1;
}

/* The isolation names the runners that are up know, once each. */
static void known_names(struct gw_vh *vh, char *b, size_t n)
{
	size_t k = 0;

	for (int i = 0; i < vh->nrunners; i++) {
		const struct gw_runner *rn = &vh->runners[i];
		if (rn->state != GW_RUNNER_UP)
			continue;
		for (int j = 0; j < rn->niso; j++) {
			const char *name = rn->iso[j].name;
			size_t len = strlen(name);
			const char *at = strstr(b, name);
			if (at && (at == b || at[-1] == ' ') && (at[len] == ',' || !at[len]))
				continue;   /* listed already */
			if (k + len + 3 >= n)
				return;
			k += (size_t)snprintf(b + k, n - k, "%s%s", k ? ", " : "", name);
		}
	}
}

/* No candidate because the isolation (asked, or each runner's default)
 * is available on no runner that could otherwise take it: 422
 * isolation_unavailable with the runner's own reason, as one runner
 * answers. 1 when answered. */
static int iso_is_why(struct svc_call *c, const struct gw_runner *const *rs, int n, const char *iso)
{
	const char *reason = "", *why, *name = iso, *who = "";
	int up = 0, blocked = 0;

	for (int i = 0; i < n; i++) {
		if (rs[i]->state != GW_RUNNER_UP || rs[i]->gone || rs[i]->draining)
			continue;
		up++;
		if (gw_runner_iso_state(rs[i], iso, &why) != 1) {
			blocked++;
			if (!reason[0]) {
				reason = why;
				name = iso && *iso ? iso : rs[i]->default_iso;
				who = rs[i]->name;
			}
		}
	}
	if (!up || blocked < up)
		return 0;
	if (reason[0])   /* with the runner's own reason */
		svc_fail(c, 422, "isolation_unavailable", "isolation: %s is not available on any "
			      "runner (%s: %s)", name, who, reason);
	else
		svc_fail(c, 422, "isolation_unavailable", "isolation %.32s is not available on any "
			      "runner", iso && *iso ? iso : rs[0]->default_iso);
	return 1;
}

/* A runner the periodic status shows not up may be back already (restarted
 * a moment ago: a get by a sandbox's id reaches it at once). A create
 * that found no runner to take it asks those once more (gw_probe_again),
 * then places again: never a 422 for a runner whose state is a second
 * old. 1 when it waits for that. */
static void reprobed(struct gw_probe_wait *w)
{
	struct svc_call *c = lws_container_of(w, struct svc_call, probe_wait);
	struct gw_place *p = c->place;
	cJSON *req = p->req;
	svc_frame_cb cb = p->cb;

	p->req = NULL;
	gw_place_free(p);
	c->place = NULL;
	svc_place_create(c, req, cb);
}

static int reprobe(struct svc_call *c)
{
	struct gw_vh *vh = c->vh;
	int some = 0;

	for (int i = 0; i < vh->nrunners && !some; i++)
		some = vh->runners[i].state == GW_RUNNER_UNKNOWN ||
		       (vh->runners[i].state == GW_RUNNER_DOWN && !vh->runners[i].gone);
	if (!some || c->reprobed)
		return 0;
	c->reprobed = 1;
	gw_probe_again(vh, &c->probe_wait, reprobed);   /* may call reprobed at once */
	return 1;
}

/* A runner not up whose last status offered iso: the isolation is there,
 * its runner is not answering (503 runner_unavailable, as for its
 * sandboxes). 1 when answered. */
static int iso_on_down(struct svc_call *c, const struct gw_runner *const *rs, int n,
		       const char *iso)
{
	const char *why;

	for (int i = 0; i < n; i++)
		if (rs[i]->state == GW_RUNNER_DOWN && !rs[i]->gone &&
		    gw_runner_iso_state(rs[i], iso, &why) == 1) {
			svc_fail(c, 503, "runner_unavailable", "isolation %.32s is offered by runner "
				 "%s, which is not answering (%s)", iso, rs[i]->name[0] ? rs[i]->name :
				 rs[i]->addr, rs[i]->why);
			return 1;
		}
	return 0;
}

/* The candidates best first (gw_place_order), those that have the image
 * asked for ahead of the rest (a runner without it pulls it first), at
 * most GW_PLACE_TRIES. */
static int place_order(const struct gw_runner *const *rs, int n, const char *iso,
		       int64_t memory_mb, const char *image, int *order)
{
	int all[GW_RUNNERS_MAX], k = gw_place_order(rs, n, iso, memory_mb, all, GW_RUNNERS_MAX);

	if (image && *image)
		gw_place_prefer_image(rs, all, k, image);
	if (k > GW_PLACE_TRIES)
		k = GW_PLACE_TRIES;
	memcpy(order, all, (size_t)k * sizeof *order);
	return k;
}

void svc_place_create(struct svc_call *c, cJSON *req, svc_frame_cb cb)
{
	struct gw_vh *vh = c->vh;
	const struct gw_runner *rs[GW_RUNNERS_MAX];
	const char *iso = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "isolation"));
	const char *image = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "image"));
	const cJSON *mem = cJSON_GetObjectItemCaseSensitive(req, "memory_mb");
	int64_t memory_mb = cJSON_IsNumber(mem) && mem->valuedouble > 0 && mem->valuedouble < 1e9 ?
		(int64_t)mem->valuedouble : DEFAULT_MEMORY_MB;
	struct gw_place *p = calloc(1, sizeof *p);

	if (!p) {
		cJSON_Delete(req);
		svc_fail(c, 500, "internal", "out of memory");
		return;
	}
	c->place = p;
	p->req = req;
	p->memory_mb = memory_mb;
	p->cb = cb;
	for (int i = 0; i < vh->nrunners; i++)
		rs[i] = &vh->runners[i];
	if (iso && *iso) {
		/* the runners' own errors, as one runner gives them (the runner
		 * still checks the name: it may know one no runner reported) */
		int known = gw_place_iso_known(rs, vh->nrunners, iso);
		if (known == 0) {
			char names[200] = "";
			known_names(vh, names, sizeof names);
			svc_fail(c, 422, "unknown_isolation", "isolation: no isolation \"%.32s\" "
				      "(known: %s)", iso, names[0] ? names : "none: no runner is up");
			return;
		}
		if (known == 1 && reprobe(c))
			return;
		if (known == 1 && (none_up(c) || iso_on_down(c, rs, vh->nrunners, iso)))
			return;
		if (known == 1 && !iso_is_why(c, rs, vh->nrunners, iso)) {
			svc_fail(c, 422, "isolation_unavailable", "isolation %.32s is not available on "
				      "any runner that is up", iso);
			return;
		}
		if (known == 1)
			return;
	}
	p->n = place_order(rs, vh->nrunners, iso, memory_mb, image, p->order);
	if (!p->n)
		p->n = stale_room(rs, vh->nrunners, iso, memory_mb, p->order);
	/* none up: a runner on this host that refused a connect may be back
	 * already (a connect says so at once; its status follows) */
	for (int i = 0, none = !p->n; none && i < vh->nrunners && p->n < GW_PLACE_TRIES; i++)
		if (vh->runners[i].state == GW_RUNNER_DOWN && gw_runner_usable(&vh->runners[i]) &&
		    !vh->runners[i].gone)
			p->order[p->n++] = i;
	if (!p->n && reprobe(c))
		return;
	if (!p->n && none_up(c))
		return;
	if (!p->n && iso_is_why(c, rs, vh->nrunners, iso))
		return;
	if (!p->n) {
		char why[64];
		for (int i = 0; i < vh->nrunners; i++)
			if (!vh->runners[i].gone || vh->runners[i].state == GW_RUNNER_UP)
				note(p, rs[i], gw_place_why_not(rs[i], iso, memory_mb, why, sizeof why));
		answer_none(c);
		return;
	}
	try_next(c);
}
