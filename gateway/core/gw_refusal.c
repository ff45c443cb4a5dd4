/* Upstream failures as values (gw_refusal.h): one mapping for every front
 * end, so a refusal has the same status and code wherever it is answered. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "gw.h"
#include "gw_refusal.h"
#include "sbx_log.h"

static void set(struct gw_refusal *out, int status, const char *code, const char *msg)
{
	out->status = status;
	out->code = code;
	snprintf(out->msg, sizeof out->msg, "%s", msg);
}

void gw_refusal_reply(struct gw_vh *vh, const cJSON *reply, struct gw_refusal *out)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(reply, "error");
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "code");
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(e, "message");
	const char *code = cJSON_IsString(c) ? c->valuestring : "internal";
	const char *msg = cJSON_IsString(m) ? m->valuestring : "upstream error";
	static const struct { const char *in, *out; int st; } map[] = {
		{ "bad_request", "invalid", 422 }, { "invalid", "invalid", 422 },
		{ "not_found", "not_found", 404 }, { "conflict", "conflict", 409 },
		{ "no_capacity", "no_capacity", 503 }, { "internal", "internal", 500 },
		{ "draining", "no_capacity", 503 },
		{ "too_many_connections", "too_many_connections", 503 },
		{ "unknown_isolation", "unknown_isolation", 422 },
		{ "isolation_unavailable", "isolation_unavailable", 422 },
		/* an image import or pull (docs/api.md, POST /v1/images) */
		{ "insufficient_storage", "insufficient_storage", 507 },
		{ "too_large", "too_large", 413 }, { "pull_failed", "pull_failed", 502 },
		{ "paused", "paused", 409 }, { "store_full", "insufficient_storage", 507 },
		{ "unsupported", "unsupported", 422 },
		/* a kept sandbox's resume past its key's sandbox limit */
		{ "limit_reached", "limit_reached", 429 },
	};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(code, map[i].in)) {
			set(out, map[i].st, map[i].out, msg);
			return;
		}
	vh->m.upstream_errors++;
	set(out, 500, "internal", msg);
}

void gw_refusal_open(struct gw_vh *vh, const struct gw_up *u, int rc, struct gw_runner *rn,
		     const char *sid, struct gw_refusal *out)
{
	char msg[200];

	switch (rc) {
	case GW_UP_ECONNECT: {
		int e = errno;
		vh->m.upstream_errors++;
		if (gw_up_unreachable(u)) {   /* a TLS runner; logged by gw_up.c */
			set(out, 503, "runner_unavailable", u->why);
			return;
		}
		sbx_warn("runner %s: %s", rn ? rn->addr : "?", strerror(e));
		if (rn && rn->state == GW_RUNNER_DOWN && sid[0]) {
			set(out, 503, "runner_unavailable", gw_runner_unavailable_msg(rn, msg, sizeof msg));
			return;
		}
		out->status = 503;
		out->code = "no_capacity";
		snprintf(out->msg, sizeof out->msg, "runner unavailable: %s", strerror(e));
		return;
	}
	case GW_UP_EDOWN:
		set(out, 503, "runner_unavailable", gw_runner_unavailable_msg(rn, msg, sizeof msg));
		return;
	case GW_UP_ENORUNNER:
		if (sid[0] && gw_runner_route_error(vh, sid, &rn, msg, sizeof msg) == 503)
			set(out, 503, "runner_unavailable", msg);
		else
			set(out, 404, "not_found", "no such sandbox");
		return;
	case GW_UP_EADOPT:
		set(out, 500, "internal", "cannot adopt runner socket");
		return;
	default:
		set(out, 500, "internal", "out of memory");
	}
}

void gw_refusal_upstream(const struct gw_up *u, const char *why, int in_reply,
			 struct gw_refusal *out)
{
	if (gw_up_unreachable(u)) {   /* a TLS runner not reached (gw_up.h) */
		if (!in_reply)
			u->vh->m.upstream_errors++;
		set(out, 503, "runner_unavailable", why);
		return;
	}
	out->status = 502;
	out->code = "internal";
	if (in_reply)
		snprintf(out->msg, sizeof out->msg, "runner reply: %s", why);
	else
		snprintf(out->msg, sizeof out->msg, why == gw_up_too_much ? "upstream %s" :
			 why == gw_up_dial_refused ? "%s" : "upstream: %s", why);
}
