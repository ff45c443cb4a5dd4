/* Snapshots on the @vercel/sandbox surface: sandbox.snapshot() (POST
 * .../sessions/{id}/snapshot), Snapshot.get/list/delete, and a create with
 * source {type:"snapshot"} (compat_vercel_box.c), as the operations /v1
 * runs (svc_snapshot.c). One difference, in docs/vercel.md: the sandbox
 * runs on after snapshot() (Vercel stops it). */
#include <stdio.h>
#include <string.h>
#include "compat_vercel.h"
#include "../http/gw_rest_sink.h"

/* Our snapshot object in the SDK's shape (its Snapshot validator). */
static cJSON *cv_snapshot(const cJSON *s, const char *status)
{
	cJSON *o = cJSON_CreateObject();
	const cJSON *v;
	double created = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, "created_at"));

	cJSON_AddStringToObject(o, "id", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "id")));
	cJSON_AddStringToObject(o, "sourceSessionId",
		cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "sandbox_id")));
	cJSON_AddStringToObject(o, "region", "local");
	cJSON_AddStringToObject(o, "status", status);
	cJSON_AddNumberToObject(o, "sizeBytes", cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, "size")));
	if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(s, "expires_at")))
		cJSON_AddNumberToObject(o, "expiresAt", v->valuedouble);
	cJSON_AddNumberToObject(o, "createdAt", created);
	cJSON_AddNumberToObject(o, "updatedAt", created);
	if (cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(s, "parent")))
		cJSON_AddStringToObject(o, "parentId", v->valuestring);
	return o;
}

static cJSON *wrap_one(const cJSON *s, const char *status)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddItemToObject(o, "snapshot", cv_snapshot(s, status));
	return o;
}

static void with_session(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	cJSON *o;

	if (a->status >= 400) {
		cv_fail_answer(r, a);
		return;
	}
	o = wrap_one(c->keep, "created");
	cJSON_AddItemToObject(o, "session", cv_session(r->vh, a->json));
	gw_resp_json(r, 201, o);
}

static void snapped(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	if (a->status >= 400) {
		cv_fail_answer(r, a);
		return;
	}
	c->keep = cJSON_Duplicate(a->json, 1);
	svc_get(cv_step(c, with_session));
}

void cv_session_snapshot(struct gw_req *r, struct cv_call *c)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(c->body, "expiration");
	cJSON *b = cJSON_CreateObject();

	if (e && !cJSON_IsNull(e) && (!cJSON_IsNumber(e) || e->valuedouble < 0)) {
		cJSON_Delete(b);
		gw_resp_error(r, 422, "invalid", "expiration: milliseconds, 0 for none");
		return;
	}
	if (cJSON_IsNumber(e) && e->valuedouble > 0)   /* 0: no expiration, as the SDK says */
		cJSON_AddNumberToObject(b, "expires_in_ms", e->valuedouble);
	svc_snapshot_take(cv_step(c, snapped), b);
}

static void got(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	if (a->status >= 400) {
		cv_fail_answer(r, a);
		return;
	}
	gw_resp_json(r, 200, wrap_one(a->json, c->op ? "deleted" : "created"));
}

void cv_snap_get(struct gw_req *r, struct cv_call *c)
{
	(void)r;
	svc_snapshot_get(cv_step(c, got));
}

void cv_snap_delete(struct gw_req *r, struct cv_call *c)
{
	(void)r;
	svc_snapshot_delete(cv_step(c, got));
}

static void listed(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	cJSON *o, *arr, *pg;
	const cJSON *s;

	(void)c;
	if (a->status >= 400) {
		cv_fail_answer(r, a);
		return;
	}
	o = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(o, "snapshots");
	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(a->json, "snapshots"))
		cJSON_AddItemToArray(arr, cv_snapshot(s, "created"));
	pg = cJSON_AddObjectToObject(o, "pagination");
	cJSON_AddNumberToObject(pg, "count", cJSON_GetArraySize(arr));
	cJSON_AddNullToObject(pg, "next");
	gw_resp_json(r, 200, o);
}

void cv_snap_list(struct gw_req *r, struct cv_call *c)
{
	(void)r;
	svc_snapshots(cv_step(c, listed));
}
