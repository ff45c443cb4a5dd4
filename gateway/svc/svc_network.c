/* A sandbox's egress log (docs/api.md): the runner keeps the entries
 * (runner/rn_egress_log.c); this streams them to the front end, one
 * event each, in order. */
#include "svc.h"

static int on_log(struct svc_call *c, const struct sbx_frame *f)
{
	cJSON *o = svc_reply_json(c, f, 1, "runner reply");
	const cJSON *e, *entries;

	if (!o)
		return -1;
	entries = cJSON_GetObjectItemCaseSensitive(o, "entries");
	if (!cJSON_IsArray(entries)) {
		cJSON_Delete(o);
		return svc_fail(c, 502, "internal", "runner reply without entries");
	}
	if (svc_begin(c, -1) < 0) {
		cJSON_Delete(o);
		return -1;
	}
	cJSON_ArrayForEach(e, entries)
		if (c->sink->event && c->sink->event(c, "entry", e) < 0)
			break;
	cJSON_Delete(o);
	svc_end(c, 0);
	return 1;
}

void svc_network_log(struct svc_call *c, int64_t since)
{
	cJSON *req = cJSON_CreateObject();

	cJSON_AddStringToObject(req, "op", "network_log");
	cJSON_AddStringToObject(req, "id", c->sid);
	cJSON_AddNumberToObject(req, "since", (double)since);
	svc_runner(c, req, on_log);
}
