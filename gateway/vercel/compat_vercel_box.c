/* Sandboxes and sessions: create, get (by name or session), list, stop,
 * extend-timeout, network-policy, as operations of the service layer. */
#include <stdio.h>
#include <string.h>
#include "compat_vercel.h"
#include "../http/gw_rest_sink.h"
#include "sbx_log.h"

/* {sandbox, session, routes} (or a subset) from our sandbox object. */
static cJSON *shapes(struct gw_req *r, const cJSON *s, int sandbox, int session, int routes)
{
	cJSON *o = cJSON_CreateObject();
	if (sandbox)
		cJSON_AddItemToObject(o, "sandbox", cv_sandbox(r->vh, s));
	if (session)
		cJSON_AddItemToObject(o, "session", cv_session(r->vh, s));
	if (routes)
		cJSON_AddItemToObject(o, "routes", cv_routes(r->vh, s));
	return o;
}

static int refuse_field(struct gw_req *r, const cJSON *b, const char *name, const char *why)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(b, name);
	if (!v || cJSON_IsNull(v) || cJSON_IsFalse(v) ||
	    ((cJSON_IsObject(v) || cJSON_IsArray(v)) && !cJSON_GetArraySize(v)))
		return 0;
	gw_resp_error(r, 422, "unsupported", "%s: %s (docs/vercel.md)", name, why);
	return -1;
}

/* The SDK's networkPolicy as our network (docs/vercel.md): {"mode":
 * "allow-all"|"deny-all"} a string; {"allow":..., "subnets":{"deny":[...]}}
 * our allow-list object (allow as given: the runner checks it, names and
 * per-name rules alike). NULL after answering 422. */
static cJSON *network_of(struct gw_req *r, const cJSON *p)
{
	const char *mode = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "mode"));
	const cJSON *allow = cJSON_GetObjectItemCaseSensitive(p, "allow");
	const cJSON *sub = cJSON_GetObjectItemCaseSensitive(p, "subnets"), *f;
	cJSON *o;

	if (mode && (!strcmp(mode, "allow-all") || !strcmp(mode, "deny-all")))
		return cJSON_CreateString(mode);
	if (!cJSON_IsObject(p) || mode) {
		gw_resp_error(r, 422, "invalid", "networkPolicy: \"allow-all\", \"deny-all\" or "
			      "{allow, subnets}");
		return NULL;
	}
	cJSON_ArrayForEach(f, p)
		if (strcmp(f->string, "allow") && strcmp(f->string, "subnets")) {
			gw_resp_error(r, 422, "invalid", "networkPolicy.%.40s: unknown field", f->string);
			return NULL;
		}
	if (sub && cJSON_GetObjectItemCaseSensitive(sub, "allow")) {
		gw_resp_error(r, 422, "unsupported", "networkPolicy.subnets.allow: addresses that "
			      "bypass the name allow-list are not supported");
		return NULL;
	}
	o = cJSON_CreateObject();
	cJSON_AddItemToObject(o, "allow", allow ? cJSON_Duplicate(allow, 1) : cJSON_CreateArray());
	if (sub && cJSON_GetObjectItemCaseSensitive(sub, "deny"))
		cJSON_AddItemToObject(o, "deny_cidrs", cJSON_Duplicate(
			cJSON_GetObjectItemCaseSensitive(sub, "deny"), 1));
	return o;
}

static void created_cwd(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	if (a->status >= 400)   /* commands then fail on the missing cwd, and say so */
		sbx_warn("%s: cannot make %s: status %d", c->sid, CV_CWD, a->status);
	gw_resp_json(r, 200, shapes(r, c->keep, 1, 1, 1));
}

static void created(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a->json, "id"));
	struct svc_call *s;
	cJSON *mk;

	if (a->status >= 400 || !id) {
		cv_fail_answer(r, a);
		return;
	}
	c->keep = cJSON_Duplicate(a->json, 1);
	snprintf(c->sid, sizeof c->sid, "%s", id);
	/* the SDK's default cwd, owned by the sandbox user: in the image since
	 * its version 2 (mk/image.sh); made here for older or other images */
	s = cv_step(c, created_cwd);
	mk = cJSON_CreateObject();
	cJSON_AddStringToObject(mk, "op", "mkdir");
	cJSON_AddStringToObject(mk, "path", CV_CWD);
	cJSON_AddTrueToObject(mk, "parents");
	cJSON_AddNumberToObject(mk, "mode", 0755);
	cJSON_AddNumberToObject(mk, "uid", 1000);
	cJSON_AddNumberToObject(mk, "gid", 1000);
	svc_agent_op(s, mk, NULL);
}

/* The SDK's runtime (its RUNTIMES type) as the image that carries it
 * (mk/runtime-images.sh; python3.13 is the default image): "" for none
 * given, NULL after refusing another value with 400 bad_request, as
 * Vercel's API refuses a value outside its enum. */
static const char *image_of_runtime(struct gw_req *r, const cJSON *v)
{
	static const char *const map[][2] = {
		{ "node22", "node22" }, { "node24", "node24" }, { "node26", "node26" },
		{ "python3.13", "default" },
	};
	const char *s = cJSON_GetStringValue(v);

	if (!v || cJSON_IsNull(v))
		return "";
	for (size_t i = 0; s && i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(s, map[i][0]))
			return map[i][1];
	gw_resp_error(r, 400, "bad_request", "runtime: must be one of \"node22\", \"node24\", "
		      "\"node26\", \"python3.13\"");
	return NULL;
}

/* persistent, snapshotExpiration and keepLastSnapshots {count,
 * expiration} as our create's persistent, snapshot_expires_in_ms and
 * snapshot_keep_last (svc_create checks the values). -1 after answering. */
static int snapshot_settings(struct gw_req *r, const cJSON *b, cJSON *req)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(b, "persistent");
	const cJSON *keep = cJSON_GetObjectItemCaseSensitive(b, "keepLastSnapshots");
	const cJSON *exp = cJSON_GetObjectItemCaseSensitive(b, "snapshotExpiration");

	if (v && !cJSON_IsNull(v)) {
		if (!cJSON_IsBool(v)) {
			gw_resp_error(r, 422, "invalid", "persistent: must be true or false");
			return -1;
		}
		cJSON_AddBoolToObject(req, "persistent", cJSON_IsTrue(v));
	}
	if (cJSON_IsObject(keep)) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(keep, "count");
		if (!cJSON_IsNumber(n)) {
			gw_resp_error(r, 422, "invalid", "keepLastSnapshots.count is required");
			return -1;
		}
		cJSON_AddItemToObject(req, "snapshot_keep_last", cJSON_Duplicate(n, 1));
		if (!exp || cJSON_IsNull(exp))   /* the kept ones' expiry, else the default's */
			exp = cJSON_GetObjectItemCaseSensitive(keep, "expiration");
	}
	if (exp && !cJSON_IsNull(exp))
		cJSON_AddItemToObject(req, "snapshot_expires_in_ms", cJSON_Duplicate(exp, 1));
	return 0;
}

void cv_box_create(struct gw_req *r, struct cv_call *c)
{
	const cJSON *b = c->body, *v;
	cJSON *req = cJSON_CreateObject();
	struct svc_call *s;
	const char *img;

	/* source {type:"snapshot", snapshotId}: from one of our snapshots */
	const cJSON *src = cJSON_GetObjectItemCaseSensitive(b, "source");
	const char *st = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(src, "type"));
	const char *snap = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(src, "snapshotId"));
	if (st && !strcmp(st, "snapshot")) {
		if (!snap) {
			gw_resp_error(r, 422, "invalid", "source.snapshotId is required");
			goto out;
		}
		cJSON_AddStringToObject(cJSON_AddObjectToObject(req, "source"), "snapshot", snap);
	} else if (refuse_field(r, b, "source", "creating from a git repository or tarball is not supported")) {
		goto out;
	}
	if (refuse_field(r, b, "mounts", "drives are not supported") ||
	    refuse_field(r, b, "name", "sandboxes are named by the gateway (their id)"))
		goto out;
	if (snapshot_settings(r, b, req) < 0)
		goto out;
	if ((v = cJSON_GetObjectItemCaseSensitive(b, "timeout")) && !cJSON_IsNull(v))
		cJSON_AddItemToObject(req, "timeout_ms", cJSON_Duplicate(v, 1));
	if ((v = cJSON_GetObjectItemCaseSensitive(b, "ports")) && !cJSON_IsNull(v))
		cJSON_AddItemToObject(req, "ports", cJSON_Duplicate(v, 1));
	if ((v = cJSON_GetObjectItemCaseSensitive(b, "env")) && !cJSON_IsNull(v))
		cJSON_AddItemToObject(req, "env", cJSON_Duplicate(v, 1));
	v = cJSON_GetObjectItemCaseSensitive(b, "resources");
	if (cJSON_IsObject(v)) {
		const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(v, "vcpus");
		const cJSON *mem = cJSON_GetObjectItemCaseSensitive(v, "memory");
		if (cpu)
			cJSON_AddItemToObject(req, "vcpus", cJSON_Duplicate(cpu, 1));
		if (mem)
			cJSON_AddItemToObject(req, "memory_mb", cJSON_Duplicate(mem, 1));
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(b, "networkPolicy")) && !cJSON_IsNull(v)) {
		cJSON *net = network_of(r, v);
		if (!net)
			goto out;
		cJSON_AddItemToObject(req, "network", net);
	}
	if (!(img = image_of_runtime(r, cJSON_GetObjectItemCaseSensitive(b, "runtime"))))
		goto out;
	if ((v = cJSON_GetObjectItemCaseSensitive(b, "image")) && !cJSON_IsNull(v)) {
		/* an image of the runner's by name, or a registry reference a
		 * runner pulls (docs/api.md): checked as on /v1 */
		if (img[0]) {
			gw_resp_error(r, 400, "bad_request", "image: give runtime or image, not both");
			goto out;
		}
		cJSON_AddItemToObject(req, "image", cJSON_Duplicate(v, 1));
	} else if (img[0]) {
		cJSON_AddStringToObject(req, "image", img);
	}
	s = cv_step(c, created);
	svc_create(s, req);   /* checks the values, as on /v1 */
	return;
out:
	cJSON_Delete(req);
}

static void resumed(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	cJSON *o;

	(void)c;
	if (a->status >= 400) {
		cv_fail_answer(r, a);
		return;
	}
	o = shapes(r, a->json, 1, 1, 1);
	cJSON_AddTrueToObject(o, "resumed");
	gw_resp_json(r, 200, o);
}

static void got_box(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	const char *st = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a->json, "status"));
	if (a->status >= 400) {
		cv_fail_answer(r, a);
		return;
	}
	if (c->op == 1 && st && strcmp(st, "running")) {   /* resume asked */
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a->json, "resumable"))) {
			/* a kept persistent sandbox: started again under its name */
			svc_sandbox_resume(cv_step(c, resumed));
			return;
		}
		gw_resp_error(r, 410, "sandbox_stopped", "sandbox %s is %s and not persistent: "
			      "it cannot be resumed", c->sid, st);
		return;
	}
	gw_resp_json(r, 200, shapes(r, a->json, 1, 1, 1));
}

void cv_box_get(struct gw_req *r, struct cv_call *c)
{
	c->op = cv_query_true(r, "resume", 0);
	svc_get(cv_step(c, got_box));
}

static void got_session(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	(void)c;
	if (a->status >= 400)
		cv_fail_answer(r, a);
	else
		gw_resp_json(r, 200, shapes(r, a->json, 0, 1, 1));
}

void cv_session_get(struct gw_req *r, struct cv_call *c)
{
	(void)r;   /* a row's operation: its answer comes by c */
	svc_get(cv_step(c, got_session));
}

static void listed(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	cJSON *o, *arr, *pg;
	const cJSON *s;
	char name[80] = "";
	int n = 0;

	if (a->status >= 400) {
		cv_fail_answer(r, a);
		return;
	}
	if (c->op)   /* sessions?name=: that sandbox's one session */
		gw_query_get(r->wsi, "name", name, sizeof name, NULL, 0);
	o = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(o, c->op ? "sessions" : "sandboxes");
	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(a->json, "sandboxes")) {
		const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "id"));
		if (name[0] && (!id || strcmp(id, name)))
			continue;
		cJSON_AddItemToArray(arr, c->op ? cv_session(r->vh, s) : cv_sandbox(r->vh, s));
		n++;
	}
	pg = cJSON_AddObjectToObject(o, "pagination");
	cJSON_AddNumberToObject(pg, "count", n);
	cJSON_AddNullToObject(pg, "next");
	gw_resp_json(r, 200, o);
}

void cv_box_list(struct gw_req *r, struct cv_call *c)
{
	(void)r;   /* a row's operation: its answer comes by c */
	svc_list(cv_step(c, listed));
}

static void stopped(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	if (a->status >= 400)
		cv_fail_answer(r, a);
	else if (c->op)   /* DELETE /v2/sandboxes/{name}: {sandbox} */
		gw_resp_json(r, 200, shapes(r, a->json, 1, 0, 0));
	else
		gw_resp_json(r, 200, shapes(r, a->json, 1, 1, 0));
}

/* stop() keeps a persistent sandbox (resumed by its next call); DELETE
 * /v2/sandboxes/{name} ends it for good. */
void cv_session_stop(struct gw_req *r, struct cv_call *c)
{
	(void)r;   /* a row's operation: its answer comes by c */
	if (c->op)
		svc_stop(cv_step(c, stopped));
	else
		svc_stop_keep(cv_step(c, stopped));
}

static void forked(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	const cJSON *s = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(a->json, "sandboxes"), 0);

	(void)c;
	if (a->status >= 400)
		cv_fail_answer(r, a);
	else if (!cJSON_IsObject(s))
		gw_resp_error(r, 502, "internal", "fork made no sandbox");
	else
		gw_resp_json(r, 200, shapes(r, s, 1, 1, 1));
}

/* Sandbox.fork: a snapshot of the source and one sandbox from it with its
 * settings (svc_fork); env, persistent and timeout may be given again. */
void cv_box_fork(struct gw_req *r, struct cv_call *c)
{
	const cJSON *b = c->body, *v;
	cJSON *req;

	if (refuse_field(r, b, "name", "sandboxes are named by the gateway (their id)") ||
	    refuse_field(r, b, "image", "a fork runs on its source's image") ||
	    refuse_field(r, b, "resources", "a fork has its source's resources") ||
	    refuse_field(r, b, "ports", "a fork has its source's ports") ||
	    refuse_field(r, b, "networkPolicy", "a fork has its source's network policy") ||
	    refuse_field(r, b, "snapshotExpiration", "a fork has its source's snapshot settings") ||
	    refuse_field(r, b, "keepLastSnapshots", "a fork has its source's snapshot settings") ||
	    refuse_field(r, b, "mounts", "drives are not supported"))
		return;
	req = cJSON_CreateObject();
	cJSON_AddNumberToObject(req, "count", 1);
	if ((v = cJSON_GetObjectItemCaseSensitive(b, "env")) && !cJSON_IsNull(v))
		cJSON_AddItemToObject(req, "env", cJSON_Duplicate(v, 1));
	if ((v = cJSON_GetObjectItemCaseSensitive(b, "timeout")) && !cJSON_IsNull(v))
		cJSON_AddItemToObject(req, "timeout_ms", cJSON_Duplicate(v, 1));
	if ((v = cJSON_GetObjectItemCaseSensitive(b, "persistent")) && cJSON_IsBool(v))
		cJSON_AddBoolToObject(req, "persistent", cJSON_IsTrue(v));
	svc_fork(cv_step(c, forked), req);
}

static void session_only(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	(void)c;
	if (a->status >= 400)
		cv_fail_answer(r, a);
	else
		gw_resp_json(r, 200, shapes(r, a->json, 0, 1, 0));
}

void cv_session_extend(struct gw_req *r, struct cv_call *c)
{
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(c->body, "duration");
	struct svc_call *s;
	cJSON *b;

	if (!cJSON_IsNumber(d)) {
		gw_resp_error(r, 422, "invalid", "duration (milliseconds) is required");
		return;
	}
	s = cv_step(c, session_only);
	b = cJSON_CreateObject();
	cJSON_AddNumberToObject(b, "duration_ms", d->valuedouble);
	svc_extend(s, b);
}

/* updateNetworkPolicy: the new policy for new connections (svc_network). */
void cv_session_network(struct gw_req *r, struct cv_call *c)
{
	cJSON *net = network_of(r, c->body), *b;

	if (!net)
		return;
	b = cJSON_CreateObject();
	cJSON_AddItemToObject(b, "network", net);
	svc_network(cv_step(c, session_only), b);
}
