/* Snapshots: a sandbox's files as a read-only layer its runner keeps
 * (docs/api.md, "Snapshots"). A snapshot belongs to the key that took it:
 * every runner request carries the key's owner tag and the runner answers
 * not_found for another's, so another key gets the same 404 as for an id
 * that never was. A snapshot id names its runner as a sandbox id does
 * (snp_<runner>_<random>): get, delete and a create from it go to that
 * runner; the list asks every runner that is up. */
#include <stdio.h>
#include <string.h>
#include "svc.h"

#define SNAP_PREFIX "snp_"

/* The runner that holds snapshot id, or NULL (not an id of ours). */
static struct gw_runner *snap_runner(struct svc_call *c, const char *id)
{
	char as_sid[96];

	if (strncmp(id, SNAP_PREFIX, 4) || strlen(id) > 80)
		return NULL;
	snprintf(as_sid, sizeof as_sid, "sbx_%s", id + 4);
	return gw_runner_for_sid(c->vh, as_sid);
}

/* The runner's snapshot object as the API's: without the owner tag. */
static cJSON *public_snapshot(const cJSON *s)
{
	cJSON *o = cJSON_Duplicate(s, 1);

	cJSON_DeleteItemFromObjectCaseSensitive(o, "owner");
	return o;
}

static int one_snapshot(struct svc_call *c, const struct sbx_frame *f, int status)
{
	cJSON *o = svc_reply_json(c, f, 1, "runner reply");
	const cJSON *s;

	if (!o)
		return -1;
	svc_note_resumed(c, o);
	s = cJSON_GetObjectItemCaseSensitive(o, "snapshot");
	if (!cJSON_IsObject(s)) {
		cJSON_Delete(o);
		return svc_fail(c, 502, "internal", "runner reply without snapshot");
	}
	svc_reply(c, status, public_snapshot(s));
	cJSON_Delete(o);
	return 1;
}

static int on_taken(struct svc_call *c, const struct sbx_frame *f)
{
	return one_snapshot(c, f, 201);
}

static int on_one(struct svc_call *c, const struct sbx_frame *f)
{
	return one_snapshot(c, f, 200);
}

static cJSON *owned_req(struct svc_call *c, const char *op, const char *id)
{
	cJSON *req = cJSON_CreateObject();

	cJSON_AddStringToObject(req, "op", op);
	cJSON_AddStringToObject(req, "id", id);
	cJSON_AddStringToObject(req, "owner", c->vh->key_tags[c->key]);
	return req;
}

void svc_snapshot_take(struct svc_call *c, cJSON *body)
{
	struct sbx_err err = { 0 };
	int64_t exp = 0, keep = 0;

	if (sbx_json_refuse_nul(body, &err) < 0 ||
	    sbx_json_get_i64(body, "expires_in_ms", 1, 30LL * 24 * 3600 * 1000, &exp, &err) < 0 ||
	    sbx_json_get_i64(body, "keep_last", 1, 100, &keep, &err) < 0) {
		cJSON_Delete(body);
		svc_fail(c, 422, "invalid", "%s", err.msg);
		return;
	}
	cJSON_Delete(body);
	cJSON *req = owned_req(c, "snapshot", c->sid);
	if (exp)
		cJSON_AddNumberToObject(req, "expires_in_ms", (double)exp);
	if (keep)
		cJSON_AddNumberToObject(req, "keep_last", (double)keep);
	svc_resume_mark(c, req, 0);   /* a kept one comes back first */
	svc_runner(c, req, on_taken);
}

/* One request to the runner of snapshot c->cid: 404 for an id that
 * names no runner we know. */
static void to_holder(struct svc_call *c, const char *op, svc_frame_cb cb)
{
	struct gw_runner *rn = snap_runner(c, c->cid);
	int rc;

	if (!rn) {
		svc_fail(c, 404, "not_found", "no snapshot %.80s", c->cid);
		return;
	}
	rc = svc_runner_on(c, rn, owned_req(c, op, c->cid), cb);
	if (rc == GW_UP_ECONNECT || rc == GW_UP_EDOWN)
		svc_fail(c, 503, "runner_unavailable", "runner %s, which holds snapshot %.80s, "
			 "is not answering", rn->name, c->cid);
}

void svc_snapshot_get(struct svc_call *c)
{
	to_holder(c, "snapshot_get", on_one);
}

void svc_snapshot_delete(struct svc_call *c)
{
	to_holder(c, "snapshot_delete", on_one);
}

/* ---- the list: each runner that is up in turn (c->step), merged ---- */

static int ask_next(struct svc_call *c);

static int on_listed(struct svc_call *c, const struct sbx_frame *f)
{
	struct sbx_err err = { 0 };
	cJSON *o = f->type == SBX_FRAME_JSON ? sbx_json_parse_object(f->payload, f->len, &err) : NULL;
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "snapshots"), *s;
	cJSON *out = cJSON_GetObjectItemCaseSensitive(c->op.acc, "snapshots");

	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "ok")))
		cJSON_ArrayForEach(s, a)
			cJSON_AddItemToArray(out, public_snapshot(s));
	else
		cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(c->op.acc,
			"unavailable_runners"), cJSON_CreateString(c->vh->runners[c->step - 1].name));
	cJSON_Delete(o);
	return ask_next(c);
}

/* 0: asked the next runner; 1: answered (none left). */
static int ask_next(struct svc_call *c)
{
	while (c->step < c->vh->nrunners) {
		struct gw_runner *rn = &c->vh->runners[c->step++];
		cJSON *req;
		int rc;
		if (rn->state != GW_RUNNER_UP || !rn->name[0])
			continue;
		req = cJSON_CreateObject();
		cJSON_AddStringToObject(req, "op", "snapshots");
		cJSON_AddStringToObject(req, "owner", c->vh->key_tags[c->key]);
		rc = svc_runner_on(c, rn, req, on_listed);
		if (rc == 0)
			return 0;
		if (rc == 1)
			return 1;   /* answered (failed) */
		cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(c->op.acc,
			"unavailable_runners"), cJSON_CreateString(rn->name));
	}
	cJSON *out = c->op.acc;
	c->op.acc = NULL;
	svc_reply(c, 200, out);
	return 1;
}

void svc_snapshots(struct svc_call *c)
{
	c->step = 0;
	c->op.acc = cJSON_CreateObject();
	cJSON_AddArrayToObject(c->op.acc, "snapshots");
	cJSON_AddArrayToObject(c->op.acc, "unavailable_runners");
	ask_next(c);
}

/* ---- a create from a snapshot ---- */

int svc_snapshot_source(struct svc_call *c, cJSON *body, char *out, size_t n)
{
	cJSON *src = cJSON_DetachItemFromObjectCaseSensitive(body, "source");
	const cJSON *id;

	out[0] = 0;
	if (!src)
		return 0;
	id = cJSON_GetObjectItemCaseSensitive(src, "snapshot");
	if (!cJSON_IsObject(src) || !cJSON_IsString(id) || strlen(id->valuestring) >= n) {
		cJSON_Delete(src);
		return svc_fail(c, 422, "invalid", "source: expected {\"snapshot\":\"snp_...\"}");
	}
	snprintf(out, n, "%s", id->valuestring);
	cJSON_Delete(src);
	return 0;
}

void svc_snapshot_place(struct svc_call *c, const char *snap, cJSON *req, svc_frame_cb cb)
{
	struct gw_runner *rn = snap_runner(c, snap);
	int rc;

	if (!rn) {
		cJSON_Delete(req);
		svc_fail(c, 404, "not_found", "no snapshot %.80s", snap);
		return;
	}
	rc = svc_runner_on(c, rn, req, cb);
	if (rc == GW_UP_ECONNECT || rc == GW_UP_EDOWN)
		svc_fail(c, 503, "runner_unavailable", "runner %s, which holds snapshot %.80s, "
			 "is not answering", rn->name, snap);
}
