/* The runners table (gw_runner.h): entries from --runner-socket (or the
 * embedded runner), --runners and discovery; lookups by a sandbox id's
 * runner name; state changes, logged once each. Entries are never moved
 * or freed while the gateway runs (probes point into them): an address
 * that went away stays as an entry, out of placement. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gw.h"
#include "gw_runner_addr.h"
#include "sbx_log.h"

static const char *state_name(enum gw_runner_state s)
{
	switch (s) {
	case GW_RUNNER_UP: return "up";
	case GW_RUNNER_DOWN: return "down";
	case GW_RUNNER_REFUSED: return "refused";
	default: return "unknown";
	}
}

const char *gw_runner_state_name(enum gw_runner_state s)
{
	return state_name(s);
}

struct gw_runner *gw_runners_add(struct gw_vh *vh, const char *addr, char *why, size_t whylen)
{
	struct sbx_err err = { 0 };
	struct gw_runner tmp;

	memset(&tmp, 0, sizeof tmp);
	if (gw_runner_parse(&tmp, addr, &err)) {
		snprintf(why, whylen, "%s", err.msg);
		return NULL;
	}
	for (int i = 0; i < vh->nrunners; i++)
		if (!strcmp(vh->runners[i].addr, tmp.addr)) {
			snprintf(why, whylen, "%s is listed twice", tmp.addr);
			return NULL;
		}
	struct gw_runner *rn = NULL;
	if (vh->nrunners < GW_RUNNERS_MAX) {
		rn = &vh->runners[vh->nrunners++];
	} else {
		/* full: an address that left DNS and no longer answers makes room
		 * (runner pods come back with new addresses) */
		for (int i = 0; i < vh->nrunners && !rn; i++)
			if (vh->runners[i].gone && vh->runners[i].state != GW_RUNNER_UP &&
			    !vh->runners[i].probe)
				rn = &vh->runners[i];
		if (!rn) {
			snprintf(why, whylen, "more than %d runner addresses", GW_RUNNERS_MAX);
			return NULL;
		}
		sbx_info("runner %s (%s) forgotten: it left DNS and does not answer", rn->name, rn->addr);
		gw_probe_forget(vh, rn);
	}
	*rn = tmp;
	rn->state = GW_RUNNER_UNKNOWN;
	rn->since_ms = sbx_now_ms();
	rn->memory_mb_free = rn->memory_mb_cap = -1;
	return rn;
}

/* --runners: comma-separated addresses. 0, or -1 after saying why. */
static int add_list(struct gw_vh *vh, const char *csv)
{
	char *copy = strdup(csv), *save = NULL, why[200];
	int n = 0, rc = 0;

	if (!copy)
		return -1;
	for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
		while (*t == ' ')
			t++;
		if (!gw_runners_add(vh, t, why, sizeof why)) {
			fprintf(stderr, "sandbox-gateway: --runners: %s\n", why);
			rc = -1;
		}
		n++;
	}
	free(copy);
	if (!rc && !n) {
		fprintf(stderr, "sandbox-gateway: --runners: no address given\n");
		rc = -1;
	}
	return rc;
}

int gw_runners_init(struct gw_vh *vh, const char *runner_socket, const char *runners)
{
	char why[200];

	vh->runners = calloc(GW_RUNNERS_MAX, sizeof *vh->runners);
	vh->nrunners = 0;
	if (!vh->runners) {
		fprintf(stderr, "sandbox-gateway: out of memory for the runners table\n");
		return -1;
	}
	if (runner_socket) {
		struct gw_runner *rn = gw_runners_add(vh, runner_socket, why, sizeof why);
		if (!rn) {
			fprintf(stderr, "sandbox-gateway: --runner-socket: %s\n", why);
			return -1;
		}
		rn->local = 1;
	}
	return runners ? add_list(vh, runners) : 0;
}

int gw_runners_tls(const struct gw_vh *vh)
{
	for (int i = 0; i < vh->nrunners; i++)
		if (vh->runners[i].kind == GW_RUNNER_TLS)
			return 1;
	return 0;
}

int gw_runners_add_local(struct gw_vh *vh, const char *path)
{
	char why[200];
	struct gw_runner *rn = gw_runners_add(vh, path, why, sizeof why);

	if (!rn) {
		sbx_err_log("the local runner: %s", why);
		return -1;
	}
	rn->local = 1;
	return 0;
}

void gw_runners_free(struct gw_vh *vh)
{
	free(vh->runners);
	vh->runners = NULL;
	vh->nrunners = 0;
}

struct gw_runner *gw_runner_local(struct gw_vh *vh)
{
	for (int i = 0; i < vh->nrunners; i++)
		if (vh->runners[i].local)
			return &vh->runners[i];
	for (int i = 0; i < vh->nrunners; i++)
		if (vh->runners[i].state == GW_RUNNER_UP)
			return &vh->runners[i];
	return vh->nrunners ? &vh->runners[0] : NULL;
}

static struct gw_runner *by_name(struct gw_vh *vh, const char *name, const struct gw_runner *not)
{
	for (int i = 0; i < vh->nrunners; i++) {
		struct gw_runner *rn = &vh->runners[i];
		if (rn != not && rn->state != GW_RUNNER_REFUSED && rn->name[0] &&
		    !strcmp(rn->name, name))
			return rn;
	}
	return NULL;
}

struct gw_runner *gw_runner_by_name(struct gw_vh *vh, const char *name)
{
	return by_name(vh, name, NULL);
}

struct gw_runner *gw_runner_for_sid(struct gw_vh *vh, const char *sid)
{
	char name[GW_RUNNER_NAME_MAX + 1];

	if (gw_sid_runner_name(sid, name, sizeof name))
		return NULL;
	return by_name(vh, name, NULL);
}

int gw_runner_usable(const struct gw_runner *rn)
{
	return rn->state == GW_RUNNER_UP ||
	       (rn->state == GW_RUNNER_DOWN && rn->kind == GW_RUNNER_UNIX && rn->down_connect);
}

enum gw_runner_state gw_runner_route(struct gw_vh *vh, const char *sid, struct gw_runner **rn)
{
	*rn = gw_runner_for_sid(vh, sid);
	if (*rn)
		return gw_runner_usable(*rn) ? GW_RUNNER_UP : GW_RUNNER_DOWN;
	/* a runner that has not said its name may be this one */
	for (int i = 0; i < vh->nrunners; i++)
		if (!vh->runners[i].name[0] && vh->runners[i].state != GW_RUNNER_REFUSED)
			return GW_RUNNER_UNKNOWN;
	return GW_RUNNER_REFUSED;
}

static void rfc3339(int64_t ms, char *buf, size_t n)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

const char *gw_runner_unavailable_msg(const struct gw_runner *rn, char *buf, size_t n)
{
	char when[32];

	if (!rn) {
		snprintf(buf, n, "no known runner has this sandbox's name, and a runner has not said "
			 "its name yet (not answering); try again when it does");
		return buf;
	}
	rfc3339(rn->since_ms, when, sizeof when);
	snprintf(buf, n, "runner %s is not answering (since %s); its sandboxes are unreachable "
		 "until it is back", rn->name[0] ? rn->name : rn->addr, when);
	return buf;
}

int gw_runner_route_error(struct gw_vh *vh, const char *sid, struct gw_runner **rn, char *msg,
			  size_t n)
{
	switch (gw_runner_route(vh, sid, rn)) {
	case GW_RUNNER_UP:
		return 0;
	case GW_RUNNER_DOWN:
		gw_runner_unavailable_msg(*rn, msg, n);
		return 503;
	case GW_RUNNER_UNKNOWN:
		gw_runner_unavailable_msg(NULL, msg, n);
		return 503;
	default:
		return 404;
	}
}

void gw_runner_set_state(struct gw_vh *vh, struct gw_runner *rn, enum gw_runner_state st,
			 const char *why)
{
	enum gw_runner_state was = rn->state;

	if (why)
		snprintf(rn->why, sizeof rn->why, "%s", why);
	if (was == st)
		return;
	rn->state = st;
	rn->since_ms = sbx_now_ms();
	if (st != GW_RUNNER_DOWN)
		rn->down_connect = 0;
	if (st != GW_RUNNER_UP)
		gw_up_keep_sweep(rn, 0, 1);   /* the next requests connect anew */
	switch (st) {
	case GW_RUNNER_UP:
		sbx_info("runner %s (%s) is %s", rn->name, rn->addr,
			 was == GW_RUNNER_DOWN ? "back" : "up");
		break;
	case GW_RUNNER_DOWN:
		sbx_warn("runner %s (%s) is down: %s", rn->name[0] ? rn->name : "?", rn->addr,
			 rn->why);
		break;
	case GW_RUNNER_REFUSED:
		sbx_err_log("runner at %s refused: %s", rn->addr, rn->why);
		break;
	default:
		break;
	}
	(void)vh;
}

void gw_runner_failed(struct gw_vh *vh, struct gw_runner *rn, int e, const char *why)
{
	char b[160];

	if (!rn || rn->state == GW_RUNNER_REFUSED)
		return;
	/* no descriptor to spare, no memory: says nothing about the runner */
	if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM || e == EAGAIN)
		return;
	snprintf(b, sizeof b, "%s", why ? why : strerror(e));
	gw_runner_set_state(vh, rn, GW_RUNNER_DOWN, b);
	rn->down_connect = e == ECONNREFUSED || e == ENOENT;
	/* a UNIX runner that no longer listens has lost its sandboxes: the
	 * streams that went straight to their agents end now */
	if (rn->kind == GW_RUNNER_UNIX && (e == ECONNREFUSED || e == ENOENT))
		gw_runner_watch_lost(vh, rn);
}

/* ---- what the API shows of the table ---- */

static cJSON *iso_json(const struct gw_runner *rn)
{
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; i < rn->niso; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", rn->iso[i].name);
		cJSON_AddBoolToObject(o, "available", rn->iso[i].available);
		if (!rn->iso[i].available && rn->iso[i].reason[0])
			cJSON_AddStringToObject(o, "reason", rn->iso[i].reason);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* An API key sees what placement errors tell it (each runner's name, state
 * and draining flag); where a runner is, what it holds and its free memory
 * are every tenant's business, so only the operator's metrics key (full)
 * sees them, as /metrics does. */
cJSON *gw_runners_json(struct gw_vh *vh, int full)
{
	cJSON *out = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(out, "runners");
	char when[32];

	for (int i = 0; i < vh->nrunners; i++) {
		const struct gw_runner *rn = &vh->runners[i];
		if (rn->gone && rn->state != GW_RUNNER_UP)
			continue;   /* left DNS and stopped answering: of no use to anyone */
		cJSON *o = cJSON_CreateObject();
		if (rn->name[0])
			cJSON_AddStringToObject(o, "name", rn->name);
		else
			cJSON_AddNullToObject(o, "name");
		cJSON_AddStringToObject(o, "state", state_name(rn->state));
		cJSON_AddBoolToObject(o, "draining", rn->draining);
		cJSON_AddItemToArray(a, o);
		if (!full)
			continue;
		cJSON_AddStringToObject(o, "address", rn->addr);
		cJSON_AddNumberToObject(o, "sandboxes", rn->sandboxes);
		if (rn->memory_mb_free >= 0) {
			cJSON_AddNumberToObject(o, "memory_mb_free", (double)rn->memory_mb_free);
			cJSON_AddNumberToObject(o, "slots_free", rn->slots_free);
		} else {
			cJSON_AddNullToObject(o, "memory_mb_free");
			cJSON_AddNullToObject(o, "slots_free");
		}
		cJSON_AddNumberToObject(o, "load1", rn->load1);
		cJSON_AddItemToObject(o, "isolation", iso_json(rn));
		cJSON_AddNumberToObject(o, "images", rn->nimages);
		rfc3339(rn->since_ms, when, sizeof when);
		cJSON_AddStringToObject(o, "since", when);
		if (rn->gone)
			cJSON_AddTrueToObject(o, "undiscovered");
		if (rn->state == GW_RUNNER_DOWN || rn->state == GW_RUNNER_REFUSED)
			cJSON_AddStringToObject(o, "reason", rn->why);
	}
	return out;
}

cJSON *gw_runners_capabilities(struct gw_vh *vh)
{
	cJSON *out = NULL, *a = NULL;
	const char *def = NULL;
	const struct gw_runner *local = gw_runner_local(vh);

	for (int i = 0; i < vh->nrunners; i++) {
		const struct gw_runner *rn = &vh->runners[i];
		if (rn->state != GW_RUNNER_UP)
			continue;
		if (!out) {
			out = cJSON_CreateObject();
			a = cJSON_AddArrayToObject(out, "isolation");
		}
		if (!def || (rn == local && rn->default_iso[0]))
			def = rn->default_iso[0] ? rn->default_iso : def;
		for (int k = 0; k < rn->niso; k++) {
			cJSON *e, *hit = NULL;
			cJSON_ArrayForEach(e, a)
				if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "name")),
					    rn->iso[k].name))
					hit = e;
			if (!hit) {
				hit = cJSON_CreateObject();
				cJSON_AddStringToObject(hit, "name", rn->iso[k].name);
				cJSON_AddFalseToObject(hit, "available");
				if (rn->iso[k].reason[0])
					cJSON_AddStringToObject(hit, "reason", rn->iso[k].reason);
				else
					cJSON_AddNullToObject(hit, "reason");
				cJSON_AddItemToArray(a, hit);
			}
			if (rn->iso[k].available) {   /* available somewhere: no reason */
				cJSON_ReplaceItemInObjectCaseSensitive(hit, "available", cJSON_CreateTrue());
				cJSON_ReplaceItemInObjectCaseSensitive(hit, "reason", cJSON_CreateNull());
				/* how the first runner that offers it runs guests */
				if (rn->iso[k].accel[0] &&
				    !cJSON_GetObjectItemCaseSensitive(hit, "accel"))
					cJSON_AddStringToObject(hit, "accel", rn->iso[k].accel);
				if (rn->iso[k].machine[0] &&
				    !cJSON_GetObjectItemCaseSensitive(hit, "machine"))
					cJSON_AddStringToObject(hit, "machine", rn->iso[k].machine);
			}
		}
	}
	if (out)
		cJSON_AddStringToObject(out, "default", def ? def : "");
	return out;
}

int gw_runners_metrics(struct gw_vh *vh, char *b, size_t n)
{
	int st[4] = { 0 }, k;
	size_t at;

	for (int i = 0; i < vh->nrunners; i++)
		if (!vh->runners[i].gone || vh->runners[i].state == GW_RUNNER_UP)
			st[vh->runners[i].state]++;
	k = snprintf(b, n, "# TYPE sandbox_gateway_runners gauge\n"
		     "sandbox_gateway_runners{state=\"up\"} %d\n"
		     "sandbox_gateway_runners{state=\"down\"} %d\n"
		     "sandbox_gateway_runners{state=\"refused\"} %d\n"
		     "sandbox_gateway_runners{state=\"unknown\"} %d\n"
		     "# TYPE sandbox_gateway_runner_sandboxes gauge\n"
		     "# TYPE sandbox_gateway_runner_memory_mb_free gauge\n",
		     st[GW_RUNNER_UP], st[GW_RUNNER_DOWN], st[GW_RUNNER_REFUSED],
		     st[GW_RUNNER_UNKNOWN]);
	if (k < 0 || (size_t)k >= n)
		return 0;
	at = (size_t)k;
	for (int i = 0; i < vh->nrunners; i++) {
		const struct gw_runner *rn = &vh->runners[i];
		if (rn->state != GW_RUNNER_UP || !rn->name[0])
			continue;
		k = snprintf(b + at, n - at,
			     "sandbox_gateway_runner_sandboxes{runner=\"%s\"} %d\n"
			     "sandbox_gateway_runner_memory_mb_free{runner=\"%s\"} %lld\n",
			     rn->name, rn->sandboxes, rn->name, (long long)rn->memory_mb_free);
		if (k < 0 || (size_t)k >= n - at)
			break;   /* the rest does not fit: cut at a whole line */
		at += (size_t)k;
	}
	return (int)at;
}
