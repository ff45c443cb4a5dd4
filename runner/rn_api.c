/* The control API's operations (docs/runner.md): create, get, list,
 * extend, stop, connect, capabilities, ping, status, drain, set_network,
 * network_log. Each request gets exactly one reply. */
#include "rn_conn.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rn_api_snap.h"
#include "rn_drivers.h"
#include "rn_egress.h"
#include "rn_policy.h"
#include "rn_image_config.h"
#include "rn_image_import.h"
#include "rn_images.h"
#include "rn_image_pull_create.h"
#include "rn_warm.h"
#include "rn_list.h"
#include "rn_persist.h"
#include "rn_sandbox.h"
#include "rn_snap.h"
#include "rn_status.h"
#include "sbx_id.h"
#include "sbx_json.h"

static const char *err_code(int code)
{
	switch (code) {
	case EINVAL: case ERANGE: return "invalid";
	case ENOENT: return "not_found";
	case EBUSY: return "conflict";
	case EAGAIN: case ENOSPC: return "no_capacity";
	case ENOTSUP: return "unsupported";
	default: return "internal";
	}
}

/* The sandbox named by "id", or NULL after replying not_found/invalid. */
static struct rn_sandbox *find(struct runner *r, struct rn_conn *c, const cJSON *req)
{
	struct sbx_err err = { 0, "" };
	const char *id = NULL;
	char prefix[40], msg[200];
	struct rn_sandbox *sb;
	int rc = sbx_json_get_str(req, "id", &id, &err);

	if (rc < 0) {
		rn_conn_reply_err(c, "invalid", err.msg);
		return NULL;
	}
	if (rc == 0) {
		rn_conn_reply_err(c, "invalid", "id: required");
		return NULL;
	}
	snprintf(prefix, sizeof(prefix), "sbx_%s_", r->name);
	sb = sbx_id_valid(prefix, id) ? rn_sandbox_find(r, id) : NULL;
	if (!sb) {
		snprintf(msg, sizeof(msg), "id: no sandbox %.80s on runner %s", id, r->name);
		rn_conn_reply_err(c, "not_found", msg);
	}
	return sb;
}

int rn_api_resume_refused(struct rn_conn *c, const struct rn_sandbox *sb, const cJSON *req)
{
	const cJSON *lim = cJSON_GetObjectItemCaseSensitive(req, "resume_limit");
	char msg[200];

	if (!lim || !rn_persist_resumable(sb))
		return 0;
	/* the create's own words for the same limit (gateway/svc/svc_sandbox.c) */
	snprintf(msg, sizeof msg, "this key already has %d sandboxes: resuming %s would pass "
		 "its limit", cJSON_IsNumber(lim) ? lim->valueint : 0, sb->id);
	rn_conn_reply_err(c, "limit_reached", msg);
	return 1;
}

int rn_api_resume_first(struct runner *r, struct rn_conn *c, struct rn_sandbox *sb,
			const cJSON *req)
{
	struct sbx_err err = { 0, "" };
	int resume = 0;

	if (sbx_json_get_bool(req, "resume", &resume, &err) < 0) {
		rn_conn_reply_err(c, "invalid", err.msg);
		return 1;
	}
	if (!resume || !sb->spec.persistent ||
	    !(rn_persist_resumable(sb) || (sb->status == RN_STARTING && sb->revived)))
		return 0;
	if (rn_api_resume_refused(c, sb, req))
		return 1;
	if (rn_persist_resume(r, sb, &err) < 0) {
		rn_conn_reply_err(c, err_code(err.code), err.msg);
		return 1;
	}
	rn_conn_set_resumed(c);
	if (sb->status == RN_RUNNING)   /* resumed where it stood (gvisor) */
		return 0;
	rn_conn_wait_redo(c, sb, req);   /* started again (jail): once it runs */
	return 1;
}

/* The driver for "isolation" (absent: the default), or NULL after replying
 * invalid, unknown_isolation or isolation_unavailable. */
static struct rn_driver *pick_driver(struct runner *r, struct rn_conn *c, const cJSON *req)
{
	struct sbx_err err = { 0, "" };
	const char *name = NULL;
	struct rn_driver *d;

	if (sbx_json_get_str(req, "isolation", &name, &err) < 0) {
		rn_conn_reply_err(c, "invalid", err.msg);
		return NULL;
	}
	d = rn_drivers_pick(r, name, &err);
	if (!d)
		rn_conn_reply_err(c, err.code == ENOENT ? "unknown_isolation" :
				  "isolation_unavailable", err.msg);
	return d;
}

static void create(struct runner *r, struct rn_conn *c, const cJSON *req, int pulled);

static void create_pulled(struct runner *r, struct rn_conn *c, const cJSON *req, void *arg)
{
	(void)arg;
	create(r, c, req, 1);
}

/* An image named by registry reference: its local name into spec->image
 * (1), or 0 after parking the create on its pull or replying. */
static int resolve_ref(struct runner *r, struct rn_conn *c, const cJSON *req,
		       struct rn_spec *spec, int pulled)
{
	char msg[400];

	if (rn_images_by_ref(r, spec->image_ref, spec->image, sizeof spec->image))
		return 1;
	if (pulled) {   /* pulled, yet gone (deleted at once): no second pull */
		snprintf(msg, sizeof msg, "image: %s was pulled and is gone again", spec->image_ref);
		rn_conn_reply_err(c, "not_found", msg);
	} else {
		rn_image_pull_for_create(r, c, req, spec->image_ref, create_pulled);
	}
	return 0;
}

static void op_create(struct runner *r, struct rn_conn *c, const cJSON *req)
{
	create(r, c, req, 0);
}

static void create(struct runner *r, struct rn_conn *c, const cJSON *req, int pulled)
{
	struct sbx_err err = { 0, "" };
	struct rn_spec spec;
	struct rn_sandbox *sb;
	struct rn_driver *drv;

	if (r->draining) {
		char msg[96];
		snprintf(msg, sizeof(msg), "runner %s is draining: no new sandboxes", r->name);
		rn_conn_reply_err(c, "draining", msg);
		return;
	}
	if (rn_spec_parse(req, &spec, &err) < 0) {
		rn_conn_reply_err(c, err_code(err.code), err.msg);
		return;
	}
	drv = pick_driver(r, c, req);
	if (!drv) {
		rn_spec_free(&spec);
		return;
	}
	if (spec.persistent && !drv->ops->snapshot && !drv->ops->persist_paused) {
		/* a persistent sandbox is kept as a snapshot of its files (or
		 * paused to disk): refused now, not at its first stop */
		char msg[200];
		snprintf(msg, sizeof msg, "persistent: isolation %s cannot keep a sandbox "
			 "(it takes no snapshots of its files)", drv->ops->name);
		rn_spec_free(&spec);
		rn_conn_reply_err(c, "unsupported", msg);
		return;
	}
	if (spec.image_ref[0] && !resolve_ref(r, c, req, &spec, pulled)) {
		rn_spec_free(&spec);
		return;
	}
	if (rn_image_config_apply(r, &spec, &err) < 0) {
		rn_spec_free(&spec);
		rn_conn_reply_err(c, err_code(err.code), err.msg);
		return;
	}
	if (spec.snapshot[0]) {
		/* from a snapshot of this owner's: its image, under its isolation */
		const struct rn_snap *s = rn_snap_find(r, spec.snapshot, spec.owner);
		char msg[200];
		if (!s || strcmp(s->isolation, drv->ops->name)) {
			if (s)
				snprintf(msg, sizeof msg, "isolation: snapshot %s was taken under %s, "
					 "not %s", s->id, s->isolation, drv->ops->name);
			else
				snprintf(msg, sizeof msg, "snapshot: no snapshot %.80s", spec.snapshot);
			rn_spec_free(&spec);
			rn_conn_reply_err(c, s ? "invalid" : "not_found", msg);
			return;
		}
		snprintf(spec.image, sizeof spec.image, "%s", s->image);
	}
	/* a warm sandbox of the pool, when the spec is one it can become */
	sb = rn_warm_take(r, drv, &spec);
	if (sb) {
		rn_conn_reply_ok(c, "sandbox", rn_sandbox_json(r, sb));
		return;
	}
	sb = rn_sandbox_create(r, drv, &spec, &err);
	if (!sb) {
		rn_conn_reply_err(c, err_code(err.code), err.msg);
		return;
	}
	/* The reply waits for the agent to answer (or for the failure). */
	rn_conn_wait(c, sb, RN_WAIT_READY);
}

static void op_extend(struct runner *r, struct rn_conn *c, const cJSON *req)
{
	struct sbx_err err = { 0, "" };
	struct rn_sandbox *sb = find(r, c, req);
	int64_t ms = 0, max_life = RN_TIMEOUT_MAX_MS;
	int rc;

	if (!sb || rn_api_resume_first(r, c, sb, req))
		return;
	rc = sbx_json_get_i64(req, "duration_ms", 1, RN_EXTEND_MAX_MS, &ms, &err);
	if (rc <= 0) {
		rn_conn_reply_err(c, "invalid", rc < 0 ? err.msg : "duration_ms: required");
		return;
	}
	/* the client's own cap on a sandbox's life (the gateway's
	 * --max-timeout-ms), below the runner's */
	rc = sbx_json_get_i64(req, "max_lifetime_ms", 1, RN_TIMEOUT_MAX_MS, &max_life, &err);
	if (rc < 0) {
		rn_conn_reply_err(c, "invalid", err.msg);
		return;
	}
	if (rn_sandbox_extend(r, sb, ms, max_life, &err) < 0) {
		rn_conn_reply_err(c, err_code(err.code), err.msg);
		return;
	}
	rn_conn_reply_ok(c, "sandbox", rn_sandbox_json(r, sb));
}

/* "persist":true keeps a persistent sandbox (rn_persist.h); without it
 * the stop is for good, what was kept of it included. */
static void op_stop(struct runner *r, struct rn_conn *c, const cJSON *req)
{
	struct sbx_err err = { 0, "" };
	struct rn_sandbox *sb = find(r, c, req);
	int persist = 0;

	if (!sb)
		return;
	if (sbx_json_get_bool(req, "persist", &persist, &err) < 0) {
		rn_conn_reply_err(c, "invalid", err.msg);
		return;
	}
	if (sb->transition) {
		/* its checkpoint or restore runs off the loop, in its dir: the
		 * stop comes once that is over */
		rn_conn_wait_settled(c, sb, req);
		return;
	}
	if (!persist)
		rn_persist_forget(r, sb);
	if (rn_sandbox_final(sb) || (persist && sb->status == RN_PAUSED && sb->spec.persistent)) {
		rn_conn_reply_ok(c, "sandbox", rn_sandbox_json(r, sb));
		return;
	}
	if (persist)
		rn_persist_stop(r, sb, RN_REASON_REQUESTED);
	else
		rn_sandbox_stop(r, sb, RN_REASON_REQUESTED);
	if (sb->status == RN_PAUSED)   /* kept paused (a driver without snapshots) */
		rn_conn_reply_ok(c, "sandbox", rn_sandbox_json(r, sb));
	else
		rn_conn_wait(c, sb, sb->transition ? RN_WAIT_PAUSE : RN_WAIT_FINAL);
}

/* "resume":true brings a kept persistent sandbox back first (or waits
 * for one coming back); the ok then says "resumed":true. */
static void op_connect(struct runner *r, struct rn_conn *c, const cJSON *req)
{
	struct sbx_err err = { 0, "" };
	struct rn_sandbox *sb = find(r, c, req);
	int64_t port = 0;
	int rc, resume = 0;

	if (!sb)
		return;
	rc = sbx_json_get_i64(req, "port", 1, 65535, &port, &err);
	if (rc <= 0 || sbx_json_get_bool(req, "resume", &resume, &err) < 0) {
		rn_conn_reply_err(c, "invalid", rc == 0 ? "port: required" : err.msg);
		return;
	}
	if (resume && sb->spec.persistent &&
	    (rn_persist_resumable(sb) || (sb->status == RN_STARTING && sb->revived))) {
		if (rn_api_resume_refused(c, sb, req))
			return;
		if (rn_persist_resume(r, sb, &err) < 0) {
			rn_conn_reply_err(c, err_code(err.code), err.msg);
			return;
		}
		rn_conn_wait_connect(c, sb, (int)port,
				     cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(req, "fd")));
		return;
	}
	rn_api_connect(r, c, sb, (int)port, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(req, "fd")));
}

void rn_api_connect(struct runner *r, struct rn_conn *c, struct rn_sandbox *sb, int port,
		    int want_fd)
{
	struct sbx_err err = { 0, "" };

	(void)r;
	if (sb->status == RN_PAUSED || sb->transition == RN_TR_PAUSING) {
		char msg[160];
		snprintf(msg, sizeof(msg), "sandbox %s is %s: resume it first", sb->id,
			 sb->transition == RN_TR_PAUSING ? "being paused" : "paused");
		rn_conn_reply_err(c, "paused", msg);
		return;
	}
	if (sb->status != RN_RUNNING) {
		char msg[160];
		snprintf(msg, sizeof(msg), "sandbox %s is %s, not running", sb->id,
			 rn_status_name(sb->status));
		rn_conn_reply_err(c, "conflict", msg);
		return;
	}
	if (want_fd && !rn_conn_remote(c) && sb->drv->ops->open_port) {
		/* the caller is on this host (it reached our UNIX socket): give it
		 * the guest connection itself instead of splicing it; a remote
		 * caller gets the relayed stream */
		int fd = sb->drv->ops->open_port(sb, port, &err);
		if (fd < 0) {
			rn_conn_reply_err(c, "conflict", err.code == ECONNREFUSED ?
					  "nothing listens on that port in the sandbox" : err.msg);
			return;
		}
		rn_conn_reply_fd(c, fd);
		return;
	}
	rn_conn_connect(c, sb, port);
}

/* A new network policy for a running sandbox: new connections and DNS
 * queries follow it at once (rn_egress.h). */
static void op_set_network(struct runner *r, struct rn_conn *c, const cJSON *req)
{
	struct sbx_err err = { 0, "" };
	struct rn_sandbox *sb = find(r, c, req);
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(req, "network");
	struct rn_policy *p;
	enum rn_network mode;

	if (!sb || rn_api_resume_first(r, c, sb, req))
		return;
	if (!v) {
		rn_conn_reply_err(c, "invalid", "network: required");
		return;
	}
	if (rn_policy_parse(v, &mode, &p, &err) < 0 ||
	    rn_egress_set_policy(sb, mode, p, &err) < 0) {
		rn_conn_reply_err(c, err_code(err.code), err.msg);
		return;
	}
	rn_conn_reply_ok(c, "sandbox", rn_sandbox_json(r, sb));
}

/* The egress log after "since" (a seq; absent: all that is kept). */
static void op_network_log(struct runner *r, struct rn_conn *c, const cJSON *req)
{
	struct sbx_err err = { 0, "" };
	struct rn_sandbox *sb = find(r, c, req);
	int64_t since = 0;

	if (!sb)
		return;
	if (sbx_json_get_i64(req, "since", 0, INT64_MAX, &since, &err) < 0) {
		rn_conn_reply_err(c, "invalid", err.msg);
		return;
	}
	rn_conn_reply_ok(c, "entries", rn_egress_log_json(sb, (unsigned long long)since));
}

/* Drain on or off: only on the local control socket (an operator or the
 * orchestrator on this host), never from a gateway over the network. */
static void op_drain(struct runner *r, struct rn_conn *c, const cJSON *req)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(req, "draining");

	if (rn_conn_remote(c)) {
		rn_conn_reply_err(c, "bad_request", "drain is only accepted on the local "
				  "control socket");
		return;
	}
	if (!cJSON_IsBool(v)) {
		rn_conn_reply_err(c, "invalid", "draining: required, true or false");
		return;
	}
	rn_drain_set(r, cJSON_IsTrue(v), "op drain");
	rn_conn_reply_ok(c, "runner", rn_status_json(r));
}

void rn_api_handle(struct runner *r, struct rn_conn *c, const cJSON *req)
{
	struct sbx_err err = { 0, "" };
	const char *op = NULL;
	int rc;

	/* no string of a request is data (an environment variable cannot hold
	 * a NUL either): one that holds U+0000 is refused by name, never cut
	 * short ("jail\u0000gvisor" is no "jail"; lib/sbx_json.h) */
	if (sbx_json_refuse_nul(req, &err) < 0) {
		rn_conn_reply_err(c, "invalid", err.msg);
		return;
	}
	rc = sbx_json_get_str(req, "op", &op, &err);
	if (rc <= 0) {
		rn_conn_reply_err(c, "bad_request", rc < 0 ? err.msg : "op: required");
		return;
	}
	if (strcmp(op, "create") == 0)
		op_create(r, c, req);
	else if (strcmp(op, "get") == 0) {
		struct rn_sandbox *sb = find(r, c, req);
		if (sb)
			rn_conn_reply_ok(c, "sandbox", rn_sandbox_json(r, sb));
	} else if (strcmp(op, "list") == 0)
		rn_list(r, c, req);
	else if (strcmp(op, "extend") == 0)
		op_extend(r, c, req);
	else if (strcmp(op, "stop") == 0)
		op_stop(r, c, req);
	else if (strcmp(op, "connect") == 0)
		op_connect(r, c, req);
	else if (strcmp(op, "capabilities") == 0)
		rn_conn_reply_ok(c, "capabilities", rn_drivers_json(r));
	else if (strcmp(op, "images") == 0)
		rn_conn_reply_ok(c, "images", rn_images_json(r));
	else if (strcmp(op, "image_delete") == 0)
		rn_images_delete(r, c, req);
	else if (strcmp(op, "image_import") == 0)
		rn_image_import_op(r, c, req, 0);
	else if (strcmp(op, "image_pull") == 0)
		rn_image_import_op(r, c, req, 1);
	else if (strcmp(op, "ping") == 0) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", r->name);
		/* the default isolation, under the runner's older name */
		cJSON_AddStringToObject(o, "driver", r->default_drv->ops->name);
		rn_conn_reply_ok(c, "runner", o);
	} else if (strcmp(op, "status") == 0)
		rn_conn_reply_ok(c, "runner", rn_status_json(r));
	else if (strcmp(op, "drain") == 0)
		op_drain(r, c, req);
	else if (strcmp(op, "set_network") == 0)
		op_set_network(r, c, req);
	else if (strcmp(op, "network_log") == 0)
		op_network_log(r, c, req);
	else if (rn_api_snap(r, c, op, req))
		;   /* snapshot, snapshots, snapshot_get, snapshot_delete, pause, resume */
	else
		rn_conn_reply_err(c, "bad_request", "op: unknown operation (create, get, "
				  "list, extend, stop, connect, capabilities, images, image_import, "
				  "image_pull, ping, status, drain, snapshot, snapshots, snapshot_get, "
				  "snapshot_delete, pause, resume, set_network, network_log)");
}
