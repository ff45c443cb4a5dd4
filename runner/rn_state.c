#include "rn_state.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rn_loop.h"
#include "rn_policy.h"
#include "rn_warm.h"
#include "sbx_fs.h"
#include "sbx_id.h"
#include "sbx_log.h"

#define STATE_MAX 4096          /* state.json is a few hundred bytes */

unsigned long long rn_proc_starttime(pid_t pid)
{
	char path[64], buf[1024], *p;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* field 3 (state) follows ") "; starttime is field 22 */
	p = strrchr(buf, ')');
	if (!p || p[2] == 'Z' || p[2] == 'X')
		return 0;
	p += 2;
	for (int field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	return p ? strtoull(p, NULL, 10) : 0;
}

void rn_state_path(char *out, const struct rn_sandbox *sb, const char *name)
{
	if (snprintf(out, PATH_MAX, "%s/%s", sb->dir, name) >= PATH_MAX)
		out[0] = 0;
}

/* o (consumed) as <dir>/<name>, never torn (sbx_replace_file): the file
 * only has to survive a crash of the runner; after a host crash the
 * sandboxes and cgroups are gone anyway and the dir alone is enough to
 * clean. */
static int json_save(const char *dir, const char *name, cJSON *o, struct sbx_err *err)
{
	char dst[PATH_MAX + 32], *txt = cJSON_PrintUnformatted(o);
	int rc = 0;

	cJSON_Delete(o);
	if (!txt)
		return sbx_err_set(err, ENOMEM, "%s: out of memory", name);
	snprintf(dst, sizeof(dst), "%s/%s", dir, name);
	if (sbx_replace_file(dst, txt, 0600) < 0)
		rc = sbx_err_sys(err, "write %s", dst);
	cJSON_free(txt);
	return rc;
}

/* <dir>/<name> parsed (never through a symlink, at most max bytes read),
 * or NULL. */
static cJSON *json_read(const char *dir, const char *name, size_t max)
{
	char path[PATH_MAX + 32], *buf;
	cJSON *o = NULL;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(max);
	n = buf ? read(fd, buf, max) : -1;
	close(fd);
	if (n > 0)
		o = cJSON_ParseWithLength(buf, (size_t)n);
	free(buf);
	return o;
}

int rn_state_save(const struct rn_sandbox *sb, const char *driver, int slot,
		  struct sbx_err *err)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "id", sb->id);
	if (slot >= 0)
		cJSON_AddNumberToObject(o, "slot", slot);
	cJSON_AddNumberToObject(o, "pid", sb->pid);
	cJSON_AddNumberToObject(o, "starttime",
				(double)(sb->pid > 0 ? rn_proc_starttime(sb->pid) : 0));
	cJSON_AddStringToObject(o, "driver", driver);
	/* what `get` shows of the sandbox should the runner die under it */
	cJSON_AddStringToObject(o, "owner", sb->spec.owner);
	cJSON_AddNumberToObject(o, "created_at", (double)sb->created_wall);
	cJSON_AddStringToObject(o, "image", sb->spec.image);
	cJSON_AddStringToObject(o, "network", rn_network_name(sb->spec.network));
	rn_spec_limits_json(o, &sb->spec);
	cJSON_AddBoolToObject(o, "preview_auth", sb->spec.preview_auth);
	return json_save(sb->dir, "state.json", o, err);
}

/* <dir>/state.json parsed (never through a symlink), or NULL. */
static cJSON *state_read(const char *dir)
{
	return json_read(dir, "state.json", STATE_MAX);
}

void rn_state_kill(const char *dir)
{
	cJSON *o = state_read(dir), *v, *s;

	v = o ? cJSON_GetObjectItemCaseSensitive(o, "pid") : NULL;
	s = o ? cJSON_GetObjectItemCaseSensitive(o, "starttime") : NULL;
	if (v && cJSON_IsNumber(v) && v->valueint > 1 && s && cJSON_IsNumber(s)) {
		pid_t pid = (pid_t)v->valueint;
		unsigned long long st = rn_proc_starttime(pid);

		/* only the process we started, not a reused pid */
		if (st && (unsigned long long)s->valuedouble == st) {
			kill(pid, SIGKILL);
			for (int i = 0; i < 400 && rn_proc_starttime(pid) == st; i++)
				usleep(5000);
		}
	}
	cJSON_Delete(o);
}

int rn_state_slot(const char *dir)
{
	cJSON *o = state_read(dir), *v;
	int slot = -1;

	v = o ? cJSON_GetObjectItemCaseSensitive(o, "slot") : NULL;
	if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e6)
		slot = v->valueint;
	cJSON_Delete(o);
	return slot;
}

/* A number of o within [lo, hi], else def. */
static int64_t num(const cJSON *o, const char *key, int64_t lo, int64_t hi, int64_t def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(v) || v->valuedouble < (double)lo || v->valuedouble > (double)hi)
		return def;
	return (int64_t)v->valuedouble;
}

/* A string of o made only of allowed characters, at most n - 1 long. */
static void str(const cJSON *o, const char *key, const char *allowed, char *out, size_t n)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	out[0] = 0;
	if (cJSON_IsString(v) && strlen(v->valuestring) < n &&
	    strspn(v->valuestring, allowed) == strlen(v->valuestring))
		snprintf(out, n, "%s", v->valuestring);
}

#define OWNER_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
#define IMAGE_CHARS "abcdefghijklmnopqrstuvwxyz0123456789._-"

void rn_state_keep_lost(struct runner *r, struct rn_driver *drv, const char *id,
			const char *dir)
{
	char prefix[40], net[16];
	struct rn_sandbox *sb;
	cJSON *o;

	char mark[PATH_MAX];

	snprintf(prefix, sizeof(prefix), "sbx_%s_", r->name);
	if (!sbx_id_valid(prefix, id) || rn_sandbox_find(r, id))
		return;
	/* a warm sandbox (rn_warm.h) was nobody's: no record of it */
	if (snprintf(mark, sizeof mark, "%s/" RN_WARM_MARK, dir) < (int)sizeof mark &&
	    access(mark, F_OK) == 0)
		return;
	sb = calloc(1, sizeof(*sb));
	if (!sb)
		return;
	/* a dir whose start was cut short has no state.json: the record
	 * still says what happened, without an owner */
	o = state_read(dir);
	snprintf(sb->id, sizeof(sb->id), "%s", id);
	snprintf(sb->dir, sizeof(sb->dir), "%s", dir);
	sb->drv = drv;
	sb->status = RN_FAILED;
	sb->reason = RN_REASON_RUNNER_RESTART;
	snprintf(sb->error, sizeof(sb->error), "the runner restarted (killed or crashed): "
		 "this sandbox's processes were ended and its files removed");
	sb->reaped = 1;
	sb->oom_kills = sb->pids_hits = -1;
	str(o, "owner", OWNER_CHARS, sb->spec.owner, sizeof(sb->spec.owner));
	str(o, "image", IMAGE_CHARS, sb->spec.image, sizeof(sb->spec.image));
	str(o, "network", IMAGE_CHARS, net, sizeof(net));
	sb->spec.network = !strcmp(net, "allow-all") ? RN_NET_ALLOW_ALL : RN_NET_DENY_ALL;
	sb->created_wall = num(o, "created_at", 0, INT64_C(1) << 52, 0);
	sb->spec.timeout_ms = num(o, "timeout_ms", 0, RN_TIMEOUT_MAX_MS, 0);
	sb->spec.vcpus = num(o, "vcpus", 0, 1024, 0);
	sb->spec.memory_mb = num(o, "memory_mb", 0, INT64_C(1) << 30, 0);
	sb->spec.pids = num(o, "pids", 0, INT64_C(1) << 30, 0);
	sb->spec.disk_mb = num(o, "disk_mb", 0, INT64_C(1) << 30, 0);
	sb->spec.nofile = num(o, "nofile", 0, INT64_C(1) << 30, 0);
	sb->spec.preview_auth = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "preview_auth"));
	/* expires_at = created_at + timeout_ms, as it was set */
	sb->deadline_mono = sb->spec.timeout_ms;
	cJSON_Delete(o);
	sb->next = r->sandboxes;
	r->sandboxes = sb;
	sbx_info("%s: failed (runner_restart): left by a previous run of the runner%s%s",
		 id, sb->spec.owner[0] ? ", owner " : "", sb->spec.owner);
}

/* ---- a paused sandbox that outlives the runner ---- */

/* 1 when p has a rule that sets headers (a brokered credential): its
 * values are secrets, which no file of the runner holds. */
static int brokers(const struct rn_policy *p)
{
	for (int i = 0; p && i < p->n_allow; i++)
		for (int k = 0; p->rules[i] && k < p->rules[i]->n; k++)
			if (p->rules[i]->r[k].kind == RN_RULE_TRANSFORM)
				return 1;
	return 0;
}

int rn_state_save_paused(const struct rn_sandbox *sb, struct sbx_err *err)
{
	cJSON *o = cJSON_CreateObject(), *a;
	int64_t left = sb->deadline_mono - rn_now_mono();

	cJSON_AddNumberToObject(o, "left_ms", (double)(left > 0 ? left : 0));
	cJSON_AddNumberToObject(o, "lifetime_ms", (double)(sb->deadline_mono - sb->created_mono));
	cJSON_AddNumberToObject(o, "idle_timeout_ms", (double)sb->spec.idle_timeout_ms);
	a = cJSON_AddArrayToObject(o, "ports");
	for (int i = 0; i < sb->spec.n_ports; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber(sb->spec.ports[i]));
	a = cJSON_AddArrayToObject(o, "env_names");    /* names only, never values */
	for (int i = 0; i < sb->spec.n_env; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(sb->spec.env_names[i]));
	cJSON_AddStringToObject(o, "workdir", sb->spec.workdir);
	cJSON_AddStringToObject(o, "snapshot", sb->spec.snapshot);
	cJSON_AddBoolToObject(o, "persistent", sb->spec.persistent);
	/* the network policy, to enforce again after a restart; one that
	 * brokers credentials is not written (a restart loses the sandbox,
	 * rn_state_adopt_paused) */
	if (brokers(sb->spec.policy))
		cJSON_AddBoolToObject(o, "brokered", 1);
	else
		cJSON_AddItemToObject(o, "network", rn_policy_json(sb->spec.network,
								   sb->spec.policy));
	return json_save(sb->dir, "paused.json", o, err);
}

/* <dir>/paused.json parsed (never through a symlink), or NULL. */
static cJSON *paused_read(const char *dir)
{
	return json_read(dir, "paused.json", RN_ENV_BYTES + STATE_MAX);
}

/* The network of paused.json p into spec: the policy in force at the
 * pause (a PATCH may have changed the mode state.json, net, was written
 * with). A file of a runner before allow-all sandboxes were paused to
 * disk has none, and was deny-all. 0, or -1 when bad or brokered. */
static int paused_network(const cJSON *p, const char *net, struct rn_spec *spec)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, "network");
	struct sbx_err err = { 0, "" };

	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "brokered")))
		return -1;
	if (!v) {
		spec->network = RN_NET_DENY_ALL;
		return strcmp(net, "deny-all") ? -1 : 0;
	}
	return rn_policy_parse(v, &spec->network, &spec->policy, &err) < 0 ? -1 : 0;
}

/* ports and env names of p into spec; -1 when one is bad. */
static int paused_lists(const cJSON *p, struct rn_spec *spec)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(p, "ports")) {
		if (!cJSON_IsNumber(v) || v->valueint < 1 || v->valueint > 65535 ||
		    spec->n_ports >= RN_MAX_PORTS)
			return -1;
		spec->ports[spec->n_ports++] = v->valueint;
	}
	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(p, "env_names")) {
		if (!cJSON_IsString(v) || spec->n_env >= RN_MAX_ENV ||
		    !(spec->env_names[spec->n_env] = strdup(v->valuestring)))
			return -1;
		spec->n_env++;
	}
	return 0;
}

struct rn_sandbox *rn_state_adopt_paused(struct runner *r, struct rn_driver *drv,
					 const char *id, const char *dir)
{
	char prefix[40], net[16];
	struct rn_sandbox *sb;
	cJSON *o, *p;
	int64_t now = rn_now_mono();

	snprintf(prefix, sizeof(prefix), "sbx_%s_", r->name);
	if (!sbx_id_valid(prefix, id) || rn_sandbox_find(r, id))
		return NULL;
	o = state_read(dir);
	p = paused_read(dir);
	sb = o && p ? calloc(1, sizeof(*sb)) : NULL;
	if (!sb)
		goto out;
	snprintf(sb->id, sizeof(sb->id), "%s", id);
	snprintf(sb->dir, sizeof(sb->dir), "%s", dir);
	sb->drv = drv;
	str(o, "owner", OWNER_CHARS, sb->spec.owner, sizeof(sb->spec.owner));
	str(o, "image", IMAGE_CHARS, sb->spec.image, sizeof(sb->spec.image));
	str(o, "network", IMAGE_CHARS, net, sizeof(net));
	sb->spec.timeout_ms = num(o, "timeout_ms", 0, RN_TIMEOUT_MAX_MS, -1);
	sb->spec.vcpus = num(o, "vcpus", 1, 1024, -1);
	sb->spec.memory_mb = num(o, "memory_mb", 1, INT64_C(1) << 30, -1);
	sb->spec.pids = num(o, "pids", 1, INT64_C(1) << 30, -1);
	sb->spec.disk_mb = num(o, "disk_mb", 1, INT64_C(1) << 30, -1);
	sb->spec.nofile = num(o, "nofile", 1, INT64_C(1) << 30, -1);
	sb->spec.idle_timeout_ms = num(p, "idle_timeout_ms", 0, RN_TIMEOUT_MAX_MS, -1);
	sb->spec.preview_auth = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "preview_auth"));
	sb->spec.persistent = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "persistent"));
	str(p, "workdir", "/ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-",
	    sb->spec.workdir, sizeof(sb->spec.workdir));
	str(p, "snapshot", OWNER_CHARS, sb->spec.snapshot, sizeof(sb->spec.snapshot));
	if (!sb->spec.owner[0] || !sb->spec.image[0] || paused_network(p, net, &sb->spec) < 0 ||
	    sb->spec.timeout_ms < 0 || sb->spec.vcpus < 0 || sb->spec.memory_mb < 0 ||
	    sb->spec.pids < 0 || sb->spec.disk_mb < 0 || sb->spec.nofile < 0 ||
	    sb->spec.idle_timeout_ms < 0 || paused_lists(p, &sb->spec) < 0) {
		rn_spec_free(&sb->spec);
		free(sb);
		sb = NULL;
		goto out;
	}
	sb->created_wall = num(o, "created_at", 0, INT64_C(1) << 52, 0);
	/* its age and the timeout left as they were at the pause: the clock
	 * stood still while the runner was away too */
	sb->deadline_mono = now + num(p, "left_ms", 0, RN_TIMEOUT_MAX_MS, 0);
	sb->created_mono = sb->deadline_mono -
			   num(p, "lifetime_ms", 0, 2 * RN_TIMEOUT_MAX_MS, sb->spec.timeout_ms);
	sb->paused_mono = now;
	sb->status = RN_PAUSED;
	sb->reaped = 1;
	sb->oom_kills = sb->pids_hits = -1;
	sb->next = r->sandboxes;
	r->sandboxes = sb;
	r->n_live++;
	sbx_info("%s: paused, taken back from a previous run of the runner (owner %s)", id,
		 sb->spec.owner);
out:
	cJSON_Delete(o);
	cJSON_Delete(p);
	return sb;
}
