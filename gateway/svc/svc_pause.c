/* Pause, resume and fork of a sandbox (docs/api.md). Pause stops every
 * process of the sandbox where it stands (memory kept) and its timeout
 * clock; commands, files and previews answer 409 paused until resume. A
 * fork is a snapshot of the sandbox and count creates from it, on its
 * runner, with its settings (limits, ports, network, isolation, private
 * previews) and without its env: secrets are given again. A kept
 * persistent source is resumed for its snapshot, as a snapshot of it is. */
#include <stdio.h>
#include <string.h>
#include "svc.h"

#define FORK_MAX 10

static cJSON *id_req(struct svc_call *c, const char *op)
{
	cJSON *req = cJSON_CreateObject();

	cJSON_AddStringToObject(req, "op", op);
	cJSON_AddStringToObject(req, "id", c->sid);
	return req;
}

static int on_sandbox(struct svc_call *c, const struct sbx_frame *f)
{
	return svc_sandbox_reply(c, f, 200);
}

void svc_sandbox_pause(struct svc_call *c)
{
	svc_runner(c, id_req(c, "pause"), on_sandbox);
}

void svc_sandbox_resume(struct svc_call *c)
{
	cJSON *req = id_req(c, "resume");

	/* a kept one started again passes the key's sandbox limit as a create */
	svc_resume_mark(c, req, 1);
	svc_runner(c, req, on_sandbox);
}

/* ---- fork: get (the settings), snapshot, then the creates ----
 * c->op.acc holds {"settings":{...},"snapshot":{...},"sandboxes":[...]},
 * c->step the creates still to make. */

/* The members of the runner's sandbox object a fork copies. */
static const char *const fork_fields[] = {
	"timeout_ms", "vcpus", "memory_mb", "pids", "disk_mb", "nofile", "idle_timeout_ms",
	"ports", "network", "isolation", "preview_auth", "persistent", "snapshot_expires_in_ms",
	"snapshot_keep_last",
};
/* ... and what a fork's body may set for its sandboxes */
static const char *const fork_overrides[] = { "env", "persistent", "timeout_ms", "network" };

static int create_next(struct svc_call *c);

static cJSON *reply_member(struct svc_call *c, const struct sbx_frame *f, const char *key,
			   cJSON **whole)
{
	cJSON *o = svc_reply_json(c, f, 1, "runner reply"), *m;

	if (!o)
		return NULL;
	m = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsObject(m)) {
		cJSON_Delete(o);
		svc_fail(c, 502, "internal", "runner reply without %s", key);
		return NULL;
	}
	*whole = o;
	return m;
}

static int on_created(struct svc_call *c, const struct sbx_frame *f)
{
	cJSON *whole, *s = reply_member(c, f, "sandbox", &whole);
	const cJSON *id;

	if (!s)
		return -1;
	id = cJSON_GetObjectItemCaseSensitive(s, "id");
	if (!cJSON_IsString(id) || gw_owner_add(c->vh, id->valuestring, c->key)) {
		cJSON_Delete(whole);
		return svc_fail(c, 503, "no_capacity", "gateway sandbox table full");
	}
	gw_owner_set_agent(c->vh, id->valuestring, cJSON_GetStringValue(
		cJSON_GetObjectItemCaseSensitive(s, "agent_socket")));
	/* counted as live from here on, no longer as on its way */
	if (c->create_pending > 0) {
		c->create_pending--;
		c->vh->creating[c->key]--;
	}
	c->vh->m.sandboxes_created++;
	cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(c->op.acc, "sandboxes"),
			     svc_sandbox_public(c->vh, s));
	cJSON_Delete(whole);
	return create_next(c);
}

/* 0: a create was sent; 1: answered (all made, or failed). */
static int create_next(struct svc_call *c)
{
	const cJSON *snap = cJSON_GetObjectItemCaseSensitive(c->op.acc, "snapshot");
	const char *snap_id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(snap, "id"));
	cJSON *req, *out;

	if (c->step > 0) {
		if (!c->vh->keys[c->key][0]) {
			svc_fail(c, 401, "unauthorized", "the API key was revoked during the fork");
			return 1;
		}
		c->step--;
		req = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(c->op.acc, "settings"), 1);
		cJSON_AddStringToObject(req, "op", "create");
		cJSON_AddStringToObject(req, "owner", c->vh->key_tags[c->key]);
		cJSON_AddStringToObject(req, "snapshot", snap_id);
		svc_snapshot_place(c, snap_id, req, on_created);
		return c->answered ? 1 : 0;
	}
	out = cJSON_CreateObject();
	cJSON_AddItemToObject(out, "snapshot", cJSON_Duplicate(snap, 1));
	cJSON_AddItemToObject(out, "sandboxes", cJSON_DetachItemFromObjectCaseSensitive(
		c->op.acc, "sandboxes"));
	svc_reply(c, 201, out);
	return 1;
}

static int on_snapshot(struct svc_call *c, const struct sbx_frame *f)
{
	cJSON *whole, *s = reply_member(c, f, "snapshot", &whole);

	if (!s)
		return -1;
	svc_note_resumed(c, whole);   /* a kept source came back for it */
	cJSON_DeleteItemFromObjectCaseSensitive(s, "owner");
	cJSON_AddItemToObject(c->op.acc, "snapshot", cJSON_DetachItemViaPointer(whole, s));
	cJSON_Delete(whole);
	return create_next(c);
}

static int on_settings(struct svc_call *c, const struct sbx_frame *f)
{
	cJSON *whole, *s = reply_member(c, f, "sandbox", &whole);
	cJSON *set, *req, *over;

	if (!s)
		return -1;
	set = cJSON_AddObjectToObject(c->op.acc, "settings");
	sbx_json_move(set, s, fork_fields, sizeof fork_fields / sizeof fork_fields[0]);
	cJSON_Delete(whole);
	over = cJSON_DetachItemFromObjectCaseSensitive(c->op.acc, "overrides");
	for (cJSON *o = over ? over->child : NULL; o; o = o->next) {
		cJSON_DeleteItemFromObjectCaseSensitive(set, o->string);
		cJSON_AddItemToObject(set, o->string, cJSON_Duplicate(o, 1));
	}
	cJSON_Delete(over);
	/* a transform's values come back redacted (secrets are never kept):
	 * a fork is given the policy again, as it is its env, before anything
	 * is made */
	char *net = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(set, "network"));
	int redacted = net && strstr(net, "\"<redacted>\"");
	cJSON_free(net);
	if (redacted) {
		svc_fail(c, 422, "invalid", "network: the sandbox's policy injects headers whose "
			 "values are not kept; give the policy again as \"network\" in the fork's body");
		return -1;
	}
	req = id_req(c, "snapshot");
	cJSON_AddStringToObject(req, "owner", c->vh->key_tags[c->key]);
	/* a kept source comes back first, as for a snapshot of it */
	svc_resume_mark(c, req, 0);
	return svc_runner(c, req, on_snapshot) < 0 ? -1 : 0;
}

void svc_fork(struct svc_call *c, cJSON *body)
{
	struct sbx_err err = { 0 };
	int64_t n = 1;

	if (sbx_json_refuse_nul(body, &err) < 0 ||
	    sbx_json_get_i64(body, "count", 1, FORK_MAX, &n, &err) < 0) {
		cJSON_Delete(body);
		svc_fail(c, 422, "invalid", "%s", err.msg);
		return;
	}
	cJSON *over = cJSON_CreateObject();
	sbx_json_move(over, body, fork_overrides, sizeof fork_overrides / sizeof fork_overrides[0]);
	cJSON_Delete(body);
	/* the per-key limit, counted before anything is made: the forks, and
	 * a kept source that comes back for its snapshot */
	int have = gw_owner_count_live(c->vh, c->key) + c->vh->creating[c->key];
	int back = !gw_owner_counted(c->vh, c->sid);
	if (have + back + n > c->vh->max_sandboxes_per_key) {
		cJSON_Delete(over);
		svc_fail(c, 429, "limit_reached", "this key has %d sandboxes; %lld more%s would pass "
			 "its limit of %d", have, (long long)n, back ? " and resuming the kept source" :
			 "", c->vh->max_sandboxes_per_key);
		return;
	}
	c->step = (int)n;
	/* the forks count as creates on their way until each is made, as a
	 * create does: a burst of forks and creates cannot all pass the check
	 * before the first is answered */
	c->vh->creating[c->key] += (int)n;
	c->create_pending = (int)n;
	c->op.acc = cJSON_CreateObject();
	cJSON_AddArrayToObject(c->op.acc, "sandboxes");
	cJSON_AddItemToObject(c->op.acc, "overrides", over);
	svc_runner(c, id_req(c, "get"), on_settings);
}
