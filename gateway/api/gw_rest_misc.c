/* The /v1 routes that are the gateway's own rather than a sandbox
 * operation: stream tokens, the health check, the metrics. */
#include <string.h>
#include "../http/gw_req.h"
#include "gw_rest.h"

/* The scopes a token request names: {"scopes":["read","write","terminal"]},
 * read alone when it names none. 0 after answering 422. */
static unsigned token_scopes(struct gw_req *r, const cJSON *body)
{
	static const struct { const char *name; unsigned bit; } names[] = {
		{ "read", GW_SCOPE_READ }, { "write", GW_SCOPE_WRITE },
		{ "terminal", GW_SCOPE_TERMINAL },
	};
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(body, "scopes"), *e;
	unsigned scope = 0;
	struct sbx_err err = { 0 };

	if (sbx_json_refuse_nul(body, &err) < 0) {
		gw_resp_error(r, 422, "invalid", "%s", err.msg);
		return 0;
	}
	if (!a)
		return GW_SCOPE_READ;
	if (!cJSON_IsArray(a) || !cJSON_GetArraySize(a)) {
		gw_resp_error(r, 422, "invalid", "scopes must be a non-empty array of \"read\", \"write\", \"terminal\"");
		return 0;
	}
	cJSON_ArrayForEach(e, a) {
		size_t i = 0;
		while (i < sizeof names / sizeof names[0] &&
		       !(cJSON_IsString(e) && !strcmp(e->valuestring, names[i].name)))
			i++;
		if (i == sizeof names / sizeof names[0]) {
			gw_resp_error(r, 422, "invalid", "unknown scope (read, write, terminal)");
			return 0;
		}
		scope |= names[i].bit;
	}
	return scope;
}

/* POST .../token: a stream token for WebSocket URLs (docs/api.md) */
void gw_token_create(struct gw_req *r, cJSON *body)
{
	char t[128];
	int64_t exp = sbx_now_ms() + GW_TOKEN_TTL_MS;
	unsigned scope = token_scopes(r, body);
	cJSON *o, *a;

	cJSON_Delete(body);
	if (!scope)
		return;
	if (gw_token_make(r->vh, r->key, r->sid, exp, scope, t, sizeof t)) {
		gw_resp_error(r, 500, "internal", "cannot make a token");
		return;
	}
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "token", t);
	cJSON_AddNumberToObject(o, "expires_at", (double)exp);
	a = cJSON_AddArrayToObject(o, "scopes");
	if (scope & GW_SCOPE_READ)
		cJSON_AddItemToArray(a, cJSON_CreateString("read"));
	if (scope & GW_SCOPE_WRITE)
		cJSON_AddItemToArray(a, cJSON_CreateString("write"));
	if (scope & GW_SCOPE_TERMINAL)
		cJSON_AddItemToArray(a, cJSON_CreateString("terminal"));
	gw_resp_json(r, 201, o);
}

void gw_healthz(struct gw_req *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "status", "ok");
	gw_resp_json(r, 200, o);
}

/* every tenant's counters: only for the metrics key */
void gw_metrics_get(struct gw_req *r)
{
	if (!gw_auth_metrics(r->vh, r->wsi)) {
		gw_resp_error(r, 401, "unauthorized", r->vh->metrics_key[0] ?
			      "metrics need the metrics key (Authorization: Bearer <metrics key>)" :
			      "metrics are off: start the gateway with --metrics-key-file or SANDBOX_METRICS_KEY");
		return;
	}
	gw_metrics_reply(r);
}
