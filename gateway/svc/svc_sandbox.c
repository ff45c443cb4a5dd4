/* Sandboxes: create/list/get/extend/stop through the runner's control
 * socket, with per-key ownership and quotas. The runner's sandbox object
 * is passed on without agent_socket, plus the preview routes. */
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "svc.h"

static cJSON *public_sandbox(struct gw_vh *vh, const cJSON *s)
{
	cJSON *o = cJSON_Duplicate(s, 1);
	if (!o)
		return NULL;
	cJSON_DeleteItemFromObjectCaseSensitive(o, "agent_socket");
	cJSON_DeleteItemFromObjectCaseSensitive(o, "owner");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
	const cJSON *ports = cJSON_GetObjectItemCaseSensitive(o, "ports");
	cJSON *routes = cJSON_AddArrayToObject(o, "routes");
	const cJSON *p;
	cJSON_ArrayForEach(p, ports) {
		char url[300];
		if (!cJSON_IsNumber(p) || !cJSON_IsString(id))
			continue;
		snprintf(url, sizeof url, "%s://%d-%s.%s:%d", vh->tls ? "https" : "http",
			 p->valueint, id->valuestring, vh->preview_domain, vh->port);
		cJSON *rt = cJSON_CreateObject();
		cJSON_AddNumberToObject(rt, "port", p->valueint);
		cJSON_AddStringToObject(rt, "url", url);
		cJSON_AddItemToArray(routes, rt);
	}
	/* the runner keeps the flag (a restarted gateway must still know it) */
	int pa = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "preview_auth"));
	cJSON_DeleteItemFromObjectCaseSensitive(o, "preview_auth");
	char tok[33];
	if (pa && cJSON_IsString(id) && !gw_ptoken(vh, id->valuestring, tok)) {
		/* only ever shown to the owner: every caller of this checked the key */
		cJSON_AddTrueToObject(o, "preview_auth");
		cJSON_AddStringToObject(o, "preview_token", tok);
	}
	return o;
}

static void track(struct svc_call *c, const cJSON *s)
{
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(s, "status");
	if (cJSON_IsString(st) && (!strcmp(st->valuestring, "stopped") ||
				   !strcmp(st->valuestring, "failed")))
		gw_owner_set_live(c->vh, c->sid, 0);
	else if (cJSON_IsString(st) && !strcmp(st->valuestring, "running"))
		gw_owner_set_live(c->vh, c->sid, 1);   /* a kept sandbox resumed */
}

static int one_sandbox(struct svc_call *c, const struct sbx_frame *f, int status)
{
	cJSON *o = svc_reply_json(c, f, 1, "runner reply");
	if (!o)
		return -1;
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "sandbox");
	if (!cJSON_IsObject(s)) {
		cJSON_Delete(o);
		return svc_fail(c, 502, "internal", "runner reply without sandbox");
	}
	svc_note_resumed(c, o);
	if (c->op.mode == GW_OP_CREATE) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(s, "id");
		if (!cJSON_IsString(id) || gw_owner_add(c->vh, id->valuestring, c->key)) {
			cJSON_Delete(o);
			return svc_fail(c, 503, "no_capacity", "gateway sandbox table full");
		}
		gw_owner_set_agent(c->vh, id->valuestring, cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(s, "agent_socket")));
		c->vh->m.sandboxes_created++;
	} else {
		track(c, s);
	}
	svc_reply(c, status, public_sandbox(c->vh, s));
	cJSON_Delete(o);
	return 1;
}

static int on_one_200(struct svc_call *c, const struct sbx_frame *f)
{
	return one_sandbox(c, f, 200);
}

static int on_create(struct svc_call *c, const struct sbx_frame *f)
{
	struct sbx_err err = { 0 };
	cJSON *o = f->type == SBX_FRAME_JSON ? sbx_json_parse_object(f->payload, f->len, &err) : NULL;

	if (o && c->place && !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "ok"))) {
		/* refused for want of room: the next runner (gw_place.c) */
		int k = svc_place_retry(c, o);
		cJSON_Delete(o);
		if (k)
			return k == 1 ? 0 : -1;   /* 1: c->up was opened again */
	} else {
		cJSON_Delete(o);
		if (c->place)
			svc_place_taken(c);
	}
	return one_sandbox(c, f, 201);
}

static const char *id_of(const cJSON *s)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "id"));
}

static int by_id(const void *a, const void *b)
{
	return strcmp(id_of(*(const cJSON *const *)a), id_of(*(const cJSON *const *)b));
}

/* Every runner's page, merged: the caller's sandboxes in id order after
 * the cursor, up to the page's size and never past the cutoff (a runner
 * that stopped early may have ids below another's), and the runners that
 * did not answer (their sandboxes are missing from it). */
static void listed(struct gw_vh *vh, void *arg, const cJSON *sandboxes,
		   const cJSON *unavailable, const unsigned char *answered, const char *cutoff)
{
	struct svc_call *c = arg;
	cJSON *out = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(out, "sandboxes");
	const cJSON *s, **v = malloc(((size_t)cJSON_GetArraySize(sandboxes) + 1) * sizeof *v);
	const char *next = cutoff;
	int n = 0;

	(void)answered;
	c->fan = NULL;   /* no longer ours to cancel */
	if (!v) {
		cJSON_Delete(out);
		svc_fail(c, 500, "internal", "out of memory");
		return;
	}
	cJSON_ArrayForEach(s, sandboxes) {
		const char *id = id_of(s);
		if (id && gw_owner_get(vh, id) == c->key && strcmp(id, c->op.cursor) > 0 &&
		    (!cutoff || strcmp(id, cutoff) <= 0))
			v[n++] = s;
	}
	qsort(v, (size_t)n, sizeof *v, by_id);
	if (n > c->op.limit) {
		n = c->op.limit;
		next = id_of(v[n - 1]);
	}
	for (int i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, public_sandbox(vh, v[i]));
	if (next)
		cJSON_AddStringToObject(out, "next_cursor", next);
	else
		cJSON_AddNullToObject(out, "next_cursor");
	cJSON_AddItemToObject(out, "unavailable_runners", cJSON_Duplicate(unavailable, 1));
	free(v);
	svc_reply(c, 200, out);
}

static const char *const create_fields[] = {
	"timeout_ms", "vcpus", "memory_mb", "ports", "env", "network", "image",
	"pids", "disk_mb", "nofile", "idle_timeout_ms", "isolation", "persistent",
	"snapshot_expires_in_ms", "snapshot_keep_last",
};

static void create_refreshed(struct gw_owner_wait *w)
{
	struct svc_call *c = lws_container_of(w, struct svc_call, owner_wait);
	cJSON *body = c->held_body;

	c->held_body = NULL;
	svc_create(c, body);
}

void svc_create(struct svc_call *c, cJSON *body)
{
	struct sbx_err err = { 0 };
	int64_t t = 300000;
	/* no string of a create is data (an environment variable cannot hold
	 * a NUL): one in isolation, image, network, env... is refused by name,
	 * never cut (lib/sbx_json.h) */
	if (sbx_json_refuse_nul(body, &err) < 0 ||
	    sbx_json_get_i64(body, "timeout_ms", 1, INT64_MAX, &t, &err) < 0) {
		cJSON_Delete(body);
		svc_fail(c, 422, "invalid", "%s", err.msg);
		return;
	}
	if (t > c->vh->max_timeout_ms) {
		cJSON_Delete(body);
		svc_fail(c, 429, "limit_reached", "timeout_ms over this key's limit of %lld",
			      (long long)c->vh->max_timeout_ms);
		return;
	}
	/* creates still on their way count too, or a burst of them would all
	 * pass the check before the first is answered */
	int have = gw_owner_count_live(c->vh, c->key) + c->vh->creating[c->key];
	if (have >= c->vh->max_sandboxes_per_key && !c->refreshed) {
		/* some may have ended unseen: ask the runner, then look again */
		c->refreshed = 1;
		c->held_body = body;
		gw_owner_refresh(c->vh, &c->owner_wait, create_refreshed);
		return;
	}
	if (have >= c->vh->max_sandboxes_per_key) {
		cJSON_Delete(body);
		svc_fail(c, 429, "limit_reached", "this key already has %d sandboxes",
			      c->vh->max_sandboxes_per_key);
		return;
	}
	/* checked here for the API's error; the runner keeps it with the owner tag */
	cJSON *pa = cJSON_DetachItemFromObjectCaseSensitive(body, "preview_auth");
	if (pa && !cJSON_IsBool(pa)) {
		cJSON_Delete(pa);
		cJSON_Delete(body);
		svc_fail(c, 422, "invalid", "preview_auth: must be true or false");
		return;
	}
	int private_preview = cJSON_IsTrue(pa);
	cJSON_Delete(pa);
	/* {"source":{"snapshot":"snp_..."}}: from a snapshot, on its runner */
	char snap[80] = "";
	if (svc_snapshot_source(c, body, snap, sizeof snap) < 0) {
		cJSON_Delete(body);
		return;
	}
	cJSON *req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", "create");
	/* unknown fields are ignored, as the API says; the runner refuses them */
	sbx_json_move(req, body, create_fields, sizeof create_fields / sizeof create_fields[0]);
	cJSON_Delete(body);
	cJSON_AddStringToObject(req, "owner", c->vh->key_tags[c->key]);
	cJSON_AddBoolToObject(req, "preview_auth", private_preview);
	c->op.mode = GW_OP_CREATE;
	c->vh->creating[c->key]++;
	c->create_pending = 1;
	if (snap[0]) {
		cJSON_AddStringToObject(req, "snapshot", snap);
		svc_snapshot_place(c, snap, req, on_create);
		return;
	}
	svc_place_create(c, req, on_create);
}

/* The union over the runners that are up: an isolation is available when
 * some runner offers it; the default is the local runner's (else the
 * first's). */
void svc_capabilities(struct svc_call *c)
{
	cJSON *caps = gw_runners_capabilities(c->vh);

	if (!caps) {
		svc_fail(c, 503, "runner_unavailable", "no runner is answering");
		return;
	}
	svc_reply(c, 200, caps);
}

void svc_list_page(struct svc_call *c, int limit, const char *cursor)
{
	cJSON *args = cJSON_CreateObject();

	c->op.limit = limit < 1 ? 1 : limit > SVC_LIST_MAX ? SVC_LIST_MAX : limit;
	snprintf(c->op.cursor, sizeof c->op.cursor, "%s", cursor ? cursor : "");
	/* each runner's first limit of the key's after the cursor hold the
	 * page: the runner filters, so a reply carries only the key's */
	cJSON_AddStringToObject(args, "owner", c->vh->key_tags[c->key]);
	cJSON_AddNumberToObject(args, "limit", c->op.limit);
	if (c->op.cursor[0])
		cJSON_AddStringToObject(args, "after", c->op.cursor);
	c->fan = gw_fan_list_args(c->vh, args, listed, c);   /* listed may run first */
	cJSON_Delete(args);
	if (!c->fan && !c->answered)
		svc_fail(c, 500, "internal", "out of memory");
}

void svc_list(struct svc_call *c)
{
	svc_list_page(c, SVC_LIST_DEFAULT, NULL);
}

static cJSON *id_req(struct svc_call *c, const char *op)
{
	cJSON *req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", op);
	cJSON_AddStringToObject(req, "id", c->sid);
	return req;
}

void svc_get(struct svc_call *c)
{
	svc_runner(c, id_req(c, "get"), on_one_200);
}

void svc_extend(struct svc_call *c, cJSON *body)
{
	struct sbx_err err = { 0 };
	if (sbx_json_refuse_nul(body, &err) < 0) {
		cJSON_Delete(body);
		svc_fail(c, 422, "invalid", "%s", err.msg);
		return;
	}
	cJSON *req = id_req(c, "extend");
	cJSON *d = cJSON_DetachItemFromObjectCaseSensitive(body, "duration_ms");
	cJSON_Delete(body);
	if (!d) {
		cJSON_Delete(req);
		svc_fail(c, 422, "invalid", "duration_ms is required");
		return;
	}
	cJSON_AddItemToObject(req, "duration_ms", d);
	/* the rule create's timeout_ms check stands for: a sandbox lives at most
	 * --max-timeout-ms from its creation. The runner applies it against its
	 * own clock (422 invalid naming duration_ms beyond it). */
	int64_t max = c->vh->max_timeout_ms;
	if (max > 86400000)   /* the runner's own bound (docs/runner.md) */
		max = 86400000;
	cJSON_AddNumberToObject(req, "max_lifetime_ms", (double)(max < 1 ? 1 : max));
	svc_resume_mark(c, req, 0);   /* a kept one comes back first */
	svc_runner(c, req, on_one_200);
}

/* A running sandbox's new network policy (docs/api.md): the runner checks
 * it (422 invalid or unsupported, naming the field) and applies it to new
 * connections at once. */
void svc_network(struct svc_call *c, cJSON *body)
{
	struct sbx_err err = { 0 };
	if (sbx_json_refuse_nul(body, &err) < 0) {
		cJSON_Delete(body);
		svc_fail(c, 422, "invalid", "%s", err.msg);
		return;
	}
	cJSON *net = cJSON_DetachItemFromObjectCaseSensitive(body, "network");
	cJSON_Delete(body);
	if (!net) {
		svc_fail(c, 422, "invalid", "network is required");
		return;
	}
	cJSON *req = id_req(c, "set_network");
	cJSON_AddItemToObject(req, "network", net);
	svc_resume_mark(c, req, 0);   /* a kept one comes back first */
	svc_runner(c, req, on_one_200);
}

static int on_delete(struct svc_call *c, const struct sbx_frame *f)
{
	int rc = one_sandbox(c, f, 200);
	if (rc == 1) {
		gw_owner_set_live(c->vh, c->sid, 0);
		c->vh->m.sandboxes_deleted++;
	}
	return rc;
}

void svc_stop(struct svc_call *c)
{
	svc_runner(c, id_req(c, "stop"), on_delete);
}

void svc_stop_keep(struct svc_call *c)
{
	cJSON *req = id_req(c, "stop");

	cJSON_AddTrueToObject(req, "persist");
	svc_runner(c, req, on_one_200);
}

/* A runner's {"sandbox":...} reply answered as the API's sandbox object
 * (pause, resume, fork's creates: svc_snapshot.c). */
int svc_sandbox_reply(struct svc_call *c, const struct sbx_frame *f, int status)
{
	return one_sandbox(c, f, status);
}

/* The runner's sandbox object as the API shows it to its owner. */
cJSON *svc_sandbox_public(struct gw_vh *vh, const cJSON *s)
{
	return public_sandbox(vh, s);
}
