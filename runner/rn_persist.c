#include "rn_persist.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rn_conn.h"
#include "rn_drivers.h"
#include "rn_image_config.h"
#include "rn_loop.h"
#include "rn_pause.h"
#include "rn_policy.h"
#include "rn_sandbox.h"
#include "rn_snap.h"
#include "sbx_fs.h"
#include "sbx_id.h"
#include "sbx_json.h"
#include "sbx_log.h"

#define RECORD_MAX 16384

/* <state>/persistent (made on first use) and a record's path in it */
static void record_path(char *out, const struct runner *r, const char *id)
{
	if (snprintf(out, PATH_MAX, "%s/persistent%s%s%s", r->state_dir, id ? "/" : "",
		     id ? id : "", id ? ".json" : "") >= PATH_MAX)
		out[0] = 0;
}

/* What a restarted runner needs to start sb again: its create's fields
 * (never env) with the hidden snapshot it starts from. */
static cJSON *record_json(const struct rn_sandbox *sb)
{
	cJSON *o = cJSON_CreateObject(), *spec = cJSON_AddObjectToObject(o, "spec"), *a;

	cJSON_AddStringToObject(o, "id", sb->id);
	cJSON_AddStringToObject(o, "isolation", sb->drv->ops->name);
	cJSON_AddStringToObject(o, "source", sb->revived ? sb->source_snap : sb->spec.snapshot);
	cJSON_AddNumberToObject(o, "created_at", (double)sb->created_wall);
	rn_spec_limits_json(spec, &sb->spec);
	cJSON_AddNumberToObject(spec, "idle_timeout_ms", (double)sb->spec.idle_timeout_ms);
	a = cJSON_AddArrayToObject(spec, "ports");
	for (int i = 0; i < sb->spec.n_ports; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber(sb->spec.ports[i]));
	cJSON_AddItemToObject(spec, "network", rn_policy_json(sb->spec.network, sb->spec.policy));
	cJSON_AddStringToObject(spec, "image", sb->spec.image);
	cJSON_AddStringToObject(spec, "snapshot", sb->persist_snap);
	cJSON_AddStringToObject(spec, "owner", sb->spec.owner);
	cJSON_AddBoolToObject(spec, "preview_auth", sb->spec.preview_auth);
	cJSON_AddBoolToObject(spec, "persistent", 1);
	cJSON_AddNumberToObject(spec, "snapshot_expires_in_ms", (double)sb->spec.snapshot_expires_in_ms);
	cJSON_AddNumberToObject(spec, "snapshot_keep_last", (double)sb->spec.snapshot_keep_last);
	return o;
}

/* The record, written whole then renamed: a crash leaves the old or the new. */
static int save_record(const struct runner *r, const struct rn_sandbox *sb, struct sbx_err *err)
{
	char dir[PATH_MAX], p[PATH_MAX];
	cJSON *o = record_json(sb);
	char *txt = sbx_json_print(o);
	int rc;

	cJSON_Delete(o);
	if (!txt)
		return sbx_err_set(err, ENOMEM, "out of memory");
	record_path(dir, r, NULL);
	record_path(p, r, sb->id);
	if (sbx_mkdir_p(dir, 0711, 0700) < 0) {
		cJSON_free(txt);
		return sbx_err_sys(err, "mkdir %s", dir);
	}
	rc = sbx_replace_file(p, txt, 0600);
	cJSON_free(txt);
	if (rc < 0)
		return sbx_err_sys(err, "write %s", p);
	return 0;
}

int rn_persist_resumable(const struct rn_sandbox *sb)
{
	return sb->spec.persistent && (sb->status == RN_PAUSED ||
				       (rn_sandbox_final(sb) && sb->persist_snap[0]));
}

/* gvisor: kept paused, memory and all (rn_driver_ops.persist_paused) */
static void keep_paused(struct runner *r, struct rn_sandbox *sb, enum rn_reason reason)
{
	struct sbx_err err = { 0, "" };
	int rc = sb->status == RN_PAUSED ? 0 : rn_sandbox_pause(r, sb, &err);

	if (rc == 1) {   /* off the loop: stopped after all if it fails */
		sb->tr_keep = 1;
		sb->tr_reason = reason;
		sbx_info("%s: being kept paused (%s)", sb->id, rn_reason_name(reason));
		return;
	}
	if (rc == 0) {
		sbx_info("%s: kept paused (%s)", sb->id, rn_reason_name(reason));
		return;
	}
	sbx_err_log("%s: cannot keep it paused: %s", sb->id, err.msg);
	snprintf(sb->error, sizeof sb->error, "it could not be kept paused: %.200s", err.msg);
	rn_sandbox_stop(r, sb, reason);
}

void rn_persist_stop(struct runner *r, struct rn_sandbox *sb, enum rn_reason reason)
{
	struct sbx_err err = { 0, "" };
	char old[RN_ID_MAX], prev[RN_ID_MAX];
	struct rn_snap *s, *o;

	if (sb->transition)
		return;   /* being paused (kept) or resumed: what it asked goes on */
	if (!sb->spec.persistent || (sb->status != RN_RUNNING && sb->status != RN_PAUSED)) {
		rn_sandbox_stop(r, sb, reason);
		return;
	}
	if (!sb->drv->ops->snapshot || sb->drv->ops->persist_paused) {
		keep_paused(r, sb, reason);
		return;
	}
	snprintf(old, sizeof old, "%s", sb->persist_snap);
	s = rn_snap_take_hidden(r, sb, &err);
	if (s) {
		snprintf(prev, sizeof prev, "%s", sb->persist_snap);
		snprintf(sb->persist_snap, sizeof sb->persist_snap, "%s", s->id);
		if (save_record(r, sb, &err) < 0) {
			snprintf(sb->persist_snap, sizeof sb->persist_snap, "%s", prev);
			rn_snap_delete(r, s);
			s = NULL;
		}
	}
	if (!s) {
		/* the sandbox still ends: its last kept files (if any) stay */
		sbx_err_log("%s: cannot keep its files: %s", sb->id, err.msg);
		snprintf(sb->error, sizeof sb->error, "its files could not be kept: %.200s",
			 err.msg);
	} else {
		sbx_info("%s: kept as snapshot %s (%s)", sb->id, s->id, rn_reason_name(reason));
		if (old[0] && (o = rn_snap_get(r, old)))
			rn_snap_delete(r, o);   /* its layer stays while the new one stacks it */
	}
	rn_sandbox_stop(r, sb, reason);
}

int rn_persist_resume(struct runner *r, struct rn_sandbox *sb, struct sbx_err *err)
{
	if (sb->status == RN_PAUSED)   /* 1, in progress: wait for it as for a start */
		return rn_sandbox_resume(r, sb, err) < 0 ? -1 : 0;
	if (sb->status == RN_RUNNING || sb->status == RN_STARTING)
		return 0;
	if (!rn_persist_resumable(sb) || !rn_snap_get(r, sb->persist_snap))
		return sbx_err_set(err, EBUSY, "sandbox %s is %s and keeps nothing to resume",
				   sb->id, rn_status_name(sb->status));
	if (!sb->revived) {
		snprintf(sb->source_snap, sizeof sb->source_snap, "%s", sb->spec.snapshot);
		sb->revived = 1;
	}
	snprintf(sb->spec.snapshot, sizeof sb->spec.snapshot, "%s", sb->persist_snap);
	/* env values were wiped when it stopped: it starts again without env */
	for (int i = 0; i < sb->spec.n_env; i++)
		free(sb->spec.env_names[i]);
	sb->spec.n_env = 0;
	return rn_sandbox_restart(r, sb, err);
}

void rn_persist_forget(struct runner *r, struct rn_sandbox *sb)
{
	char p[PATH_MAX];
	struct rn_snap *s;

	if (!sb->spec.persistent)
		return;
	if (sb->persist_snap[0] && (s = rn_snap_get(r, sb->persist_snap)))
		rn_snap_delete(r, s);   /* removed once nothing stacks it */
	sb->persist_snap[0] = 0;
	record_path(p, r, sb->id);
	if (p[0] && unlink(p) < 0 && errno != ENOENT)
		sbx_warn("%s: cannot remove %s: %s", sb->id, p, strerror(errno));
	else
		sbx_info("%s: deleted for good", sb->id);
}

static const char *str_of(const cJSON *o, const char *k)
{
	const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
	return v ? v : "";
}

/* One record: the sandbox it keeps, as a stopped record that resumes
 * (it replaces the runner_restart record reconciliation made of it when
 * it was running at the crash). 0, or -1 (the record is removed). */
static int load_one(struct runner *r, const char *id, const char *path)
{
	struct sbx_err err = { 0, "" };
	char buf[RECORD_MAX];
	ssize_t n = sbx_read_file(path, buf, sizeof buf);
	cJSON *o = n > 0 ? sbx_json_parse_object(buf, (size_t)n, &err) : NULL;
	struct rn_spec spec;
	struct rn_sandbox *sb;
	struct rn_driver *drv;
	int lost;

	if (!o || strcmp(str_of(o, "id"), id) ||
	    rn_spec_parse(cJSON_GetObjectItemCaseSensitive(o, "spec"), &spec, &err) < 0) {
		sbx_warn("%s: unreadable record %s: %s", id, path, err.msg);
		cJSON_Delete(o);
		return -1;
	}
	drv = rn_drivers_pick(r, str_of(o, "isolation"), &err);
	if (!drv || !rn_snap_get(r, spec.snapshot) ||
	    rn_image_config_apply(r, &spec, &err) < 0) {
		sbx_warn("%s: cannot keep it: %s", id, drv ? err.msg : "its snapshot is gone");
		rn_spec_free(&spec);
		cJSON_Delete(o);
		return -1;
	}
	sb = rn_sandbox_find(r, id);
	lost = sb != NULL;
	if (sb && !rn_sandbox_final(sb)) {
		rn_spec_free(&spec);
		cJSON_Delete(o);
		return 0;
	}
	if (!sb) {
		if (!(sb = calloc(1, sizeof *sb))) {
			rn_spec_free(&spec);
			cJSON_Delete(o);
			return 0;
		}
		sb->next = r->sandboxes;
		r->sandboxes = sb;
	}
	rn_spec_free(&sb->spec);
	sb->spec = spec;
	snprintf(sb->id, sizeof sb->id, "%s", id);
	if (snprintf(sb->dir, sizeof sb->dir, "%s/%s", r->sbx_root, id) >= (int)sizeof sb->dir)
		sb->dir[0] = 0;   /* never: the state dir is short (checked at start-up) */
	snprintf(sb->persist_snap, sizeof sb->persist_snap, "%s", spec.snapshot);
	snprintf(sb->source_snap, sizeof sb->source_snap, "%s", str_of(o, "source"));
	sb->revived = 1;
	sb->drv = drv;
	sb->status = RN_STOPPED;
	sb->reason = lost ? RN_REASON_RUNNER_RESTART : RN_REASON_REQUESTED;
	snprintf(sb->error, sizeof sb->error, "%s", lost ? "the runner restarted while it ran: "
		 "it resumes from the files kept when it last stopped" : "");
	sb->reaped = 1;
	sb->oom_kills = sb->pids_hits = -1;
	sb->created_wall = (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o,
											  "created_at"));
	sb->created_mono = 0;
	sb->deadline_mono = sb->spec.timeout_ms;
	cJSON_Delete(o);
	return 0;
}

void rn_persist_load(struct runner *r)
{
	char dir[PATH_MAX], p[PATH_MAX], prefix[40], id[RN_ID_MAX];
	struct dirent *e;
	DIR *d;
	int n = 0;

	record_path(dir, r, NULL);
	if (!(d = opendir(dir)))
		return;
	snprintf(prefix, sizeof prefix, "sbx_%s_", r->name);
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len < 6 || len - 5 >= sizeof id || strcmp(e->d_name + len - 5, ".json"))
			continue;
		memcpy(id, e->d_name, len - 5);
		id[len - 5] = 0;
		if (!sbx_id_valid(prefix, id))
			continue;
		record_path(p, r, id);
		if (load_one(r, id, p) < 0)
			unlink(p);
		else
			n++;
	}
	closedir(d);
	if (n)
		sbx_info("persistent: %d sandboxes kept in %s", n, dir);
}
