/* The control API's snapshot and pause operations (docs/runner.md):
 * snapshot, snapshots, snapshot_get, snapshot_delete, pause, resume.
 * Snapshots belong to an owner tag; every request names it, and another
 * owner's snapshot is not_found, as an unknown one. */
#include "rn_api_snap.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rn_pause.h"
#include "rn_persist.h"
#include "rn_sandbox.h"
#include "rn_snap.h"
#include "sbx_id.h"
#include "sbx_json.h"

static const char *err_code(int code)
{
	switch (code) {
	case EINVAL: case ELOOP: return "invalid";
	case ENOENT: return "not_found";
	case EBUSY: return "conflict";
	case EAGAIN: return "no_capacity";
	case ENOTSUP: return "unsupported";
	case ENOSPC: return "store_full";
	default: return "internal";
	}
}

/* The sandbox named by "id", or NULL after replying. */
static struct rn_sandbox *find_sandbox(struct runner *r, struct rn_conn *c, const cJSON *req)
{
	struct sbx_err err = { 0, "" };
	const char *id = NULL;
	char prefix[40], msg[200];
	struct rn_sandbox *sb;
	int rc = sbx_json_get_str(req, "id", &id, &err);

	if (rc <= 0) {
		rn_conn_reply_err(c, "invalid", rc < 0 ? err.msg : "id: required");
		return NULL;
	}
	snprintf(prefix, sizeof prefix, "sbx_%s_", r->name);
	sb = sbx_id_valid(prefix, id) ? rn_sandbox_find(r, id) : NULL;
	if (!sb) {
		snprintf(msg, sizeof msg, "id: no sandbox %.80s on runner %s", id, r->name);
		rn_conn_reply_err(c, "not_found", msg);
	}
	return sb;
}

/* "owner": required (every snapshot has one). NULL after replying. */
static const char *owner_of(struct rn_conn *c, const cJSON *req)
{
	struct sbx_err err = { 0, "" };
	const char *o = NULL;
	int rc = sbx_json_get_str(req, "owner", &o, &err);

	if (rc <= 0 || !*o) {
		rn_conn_reply_err(c, "invalid", rc < 0 ? err.msg : "owner: required");
		return NULL;
	}
	return o;
}

static struct rn_snap *find_snap(struct runner *r, struct rn_conn *c, const cJSON *req)
{
	struct sbx_err err = { 0, "" };
	const char *id = NULL, *owner = owner_of(c, req);
	struct rn_snap *s;
	char msg[160];
	int rc;

	if (!owner)
		return NULL;
	rc = sbx_json_get_str(req, "id", &id, &err);
	if (rc <= 0) {
		rn_conn_reply_err(c, "invalid", rc < 0 ? err.msg : "id: required");
		return NULL;
	}
	s = rn_snap_find(r, id, owner);
	if (!s) {
		snprintf(msg, sizeof msg, "no snapshot %.80s", id);
		rn_conn_reply_err(c, "not_found", msg);
	}
	return s;
}

static void op_snapshot(struct runner *r, struct rn_conn *c, const cJSON *req)
{
	struct sbx_err err = { 0, "" };
	struct rn_sandbox *sb = find_sandbox(r, c, req);
	const char *owner;
	int64_t exp = 0, keep = 0;
	struct rn_snap *s;

	if (!sb || !(owner = owner_of(c, req)))
		return;
	if (strcmp(sb->spec.owner, owner)) {
		rn_conn_reply_err(c, "not_found", "id: no such sandbox");
		return;
	}
	if (rn_api_resume_first(r, c, sb, req))
		return;
	/* the sandbox's defaults (its create's) unless the request says */
	exp = sb->spec.snapshot_expires_in_ms;
	keep = sb->spec.snapshot_keep_last;
	if (sbx_json_get_i64(req, "expires_in_ms", 0, RN_SNAP_EXPIRES_MAX_MS, &exp, &err) < 0 ||
	    sbx_json_get_i64(req, "keep_last", 0, RN_SNAP_KEEP_LAST_MAX, &keep, &err) < 0) {
		rn_conn_reply_err(c, "invalid", err.msg);
		return;
	}
	s = rn_snap_take(r, sb, owner, exp, (int)keep, &err);
	if (!s) {
		rn_conn_reply_err(c, err_code(err.code), err.msg);
		return;
	}
	rn_conn_reply_ok(c, "snapshot", rn_snap_json(s));
}

static void op_list(struct runner *r, struct rn_conn *c, const cJSON *req)
{
	const char *owner = owner_of(c, req);
	cJSON *a;

	if (!owner)
		return;
	a = cJSON_CreateArray();
	for (struct rn_snap *s = r->snaps; s; s = s->next)
		if (!s->deleted && !s->hidden && !strcmp(s->owner, owner))
			cJSON_AddItemToArray(a, rn_snap_json(s));
	rn_conn_reply_ok(c, "snapshots", a);
}

static void op_pause(struct runner *r, struct rn_conn *c, const cJSON *req, int pause)
{
	struct sbx_err err = { 0, "" };
	struct rn_sandbox *sb = find_sandbox(r, c, req);
	int rc;

	if (!sb)
		return;
	if (sb->transition == RN_TR_PAUSING || (pause && sb->transition)) {
		rn_conn_wait_settled(c, sb, req);   /* asked again once it is over */
		return;
	}
	if (!pause && rn_api_resume_refused(c, sb, req))
		return;
	if (!pause && rn_persist_resumable(sb) && rn_sandbox_final(sb)) {
		/* a kept persistent sandbox starts again: answered once ready */
		if (rn_persist_resume(r, sb, &err) < 0)
			rn_conn_reply_err(c, err.code == ENOSPC ? "no_capacity" : err_code(err.code),
					  err.msg);
		else
			rn_conn_wait(c, sb, RN_WAIT_READY);
		return;
	}
	rc = (pause ? rn_sandbox_pause : rn_sandbox_resume)(r, sb, &err);
	if (rc < 0) {
		rn_conn_reply_err(c, err_code(err.code), err.msg);
		return;
	}
	if (rc == 1)   /* off the loop: answered when it is over */
		rn_conn_wait(c, sb, pause ? RN_WAIT_PAUSE : RN_WAIT_READY);
	else
		rn_conn_reply_ok(c, "sandbox", rn_sandbox_json(r, sb));
}

int rn_api_snap(struct runner *r, struct rn_conn *c, const char *op, const cJSON *req)
{
	struct rn_snap *s;

	if (!strcmp(op, "snapshot"))
		op_snapshot(r, c, req);
	else if (!strcmp(op, "snapshots"))
		op_list(r, c, req);
	else if (!strcmp(op, "snapshot_get")) {
		if ((s = find_snap(r, c, req)))
			rn_conn_reply_ok(c, "snapshot", rn_snap_json(s));
	} else if (!strcmp(op, "snapshot_delete")) {
		if ((s = find_snap(r, c, req))) {
			cJSON *o = rn_snap_json(s);
			rn_snap_delete(r, s);   /* may free s */
			rn_conn_reply_ok(c, "snapshot", o);
		}
	} else if (!strcmp(op, "pause"))
		op_pause(r, c, req, 1);
	else if (!strcmp(op, "resume"))
		op_pause(r, c, req, 0);
	else
		return 0;
	return 1;
}
