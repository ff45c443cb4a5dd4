#include "rn_spec.h"

#include <errno.h>
#include <string.h>
#include <stdlib.h>

#include "rn_policy.h"
#include "sbx_json.h"

struct limit {
	const char *name;
	int64_t min, def, max;
	size_t off;
};

/* Defaults follow API.md; maxima keep one sandbox from taking the host. */
static const struct limit limits[] = {
	{ "timeout_ms", 1000, 300000, RN_TIMEOUT_MAX_MS, offsetof(struct rn_spec, timeout_ms) },
	{ "vcpus", 1, 1, 8, offsetof(struct rn_spec, vcpus) },
	{ "memory_mb", 32, 512, 8192, offsetof(struct rn_spec, memory_mb) },
	{ "pids", 16, 512, 4096, offsetof(struct rn_spec, pids) },
	{ "disk_mb", 16, 1024, 16384, offsetof(struct rn_spec, disk_mb) },
	{ "nofile", 64, 1024, RN_NOFILE_MAX, offsetof(struct rn_spec, nofile) },
	{ "idle_timeout_ms", 0, 0, RN_TIMEOUT_MAX_MS, offsetof(struct rn_spec, idle_timeout_ms) },
	/* defaults of its snapshots (rn_snap.h's bounds) */
	{ "snapshot_expires_in_ms", 0, 0, 30LL * 24 * 3600 * 1000,
	  offsetof(struct rn_spec, snapshot_expires_in_ms) },
	{ "snapshot_keep_last", 0, 0, 100, offsetof(struct rn_spec, snapshot_keep_last) },
};

static const char *const known[] = {
	"op", "timeout_ms", "vcpus", "memory_mb", "pids", "disk_mb", "nofile",
	"ports", "env", "network", "image", "idle_timeout_ms", "owner",
	"preview_auth", "isolation", "snapshot", "persistent", "snapshot_expires_in_ms",
	"snapshot_keep_last", NULL
};

const char *rn_network_name(enum rn_network n)
{
	return n == RN_NET_ALLOW_ALL ? "allow-all" : n == RN_NET_POLICY ? "allow-list" : "deny-all";
}

void rn_spec_wipe_values(struct rn_spec *spec)
{
	for (int i = 0; i < spec->n_env; i++)
		if (spec->env_values[i]) {
			explicit_bzero(spec->env_values[i], strlen(spec->env_values[i]));
			free(spec->env_values[i]);
			spec->env_values[i] = NULL;
		}
}

void rn_spec_free(struct rn_spec *spec)
{
	for (int i = 0; i < spec->n_env; i++) {
		free(spec->env_names[i]);
		if (spec->env_values[i]) {
			/* secrets: do not leave them in freed heap */
			explicit_bzero(spec->env_values[i], strlen(spec->env_values[i]));
			free(spec->env_values[i]);
		}
	}
	spec->n_env = 0;
	rn_policy_free(spec->policy);
	spec->policy = NULL;
}

static int env_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 128 || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

static int parse_ports(const cJSON *req, struct rn_spec *spec, struct sbx_err *err)
{
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(req, "ports"), *it;

	if (!p || cJSON_IsNull(p))
		return 0;
	if (!cJSON_IsArray(p))
		return sbx_err_set(err, EINVAL, "ports: expected an array of port numbers");
	cJSON_ArrayForEach(it, p) {
		/* range first: casting an out-of-range double is undefined */
		if (!cJSON_IsNumber(it) || !(it->valuedouble >= 1 && it->valuedouble <= 65535) ||
		    it->valuedouble != (double)(int)it->valuedouble)
			return sbx_err_set(err, EINVAL, "ports: each port must be an integer 1..65535");
		if (it->valueint == 1024)
			return sbx_err_set(err, EINVAL, "ports: 1024 is the agent's port");
		if (spec->n_ports >= RN_MAX_PORTS)
			return sbx_err_set(err, EINVAL, "ports: at most %d ports", RN_MAX_PORTS);
		spec->ports[spec->n_ports++] = it->valueint;
	}
	return 0;
}

static int parse_env(const cJSON *req, struct rn_spec *spec, struct sbx_err *err)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(req, "env"), *it;
	size_t total = 0;

	if (!e || cJSON_IsNull(e))
		return 0;
	if (!cJSON_IsObject(e))
		return sbx_err_set(err, EINVAL, "env: expected an object of strings");
	cJSON_ArrayForEach(it, e) {
		if (!env_name_ok(it->string))
			return sbx_err_set(err, EINVAL, "env: invalid variable name \"%.64s\"",
					   it->string);
		if (!cJSON_IsString(it))
			return sbx_err_set(err, EINVAL, "env.%.64s: expected a string", it->string);
		total += strlen(it->string) + strlen(it->valuestring) + 2;
		if (spec->n_env >= RN_MAX_ENV || total > RN_ENV_BYTES)
			return sbx_err_set(err, EINVAL, "env: at most %d variables and %d bytes",
					   RN_MAX_ENV, RN_ENV_BYTES);
		spec->env_names[spec->n_env] = strdup(it->string);
		spec->env_values[spec->n_env] = strdup(it->valuestring);
		spec->n_env++;
		if (!spec->env_names[spec->n_env - 1] || !spec->env_values[spec->n_env - 1])
			return sbx_err_set(err, ENOMEM, "env: out of memory");
	}
	return 0;
}

int rn_image_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 32 || s[0] == '.' || s[0] == '-')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '-' || s[i] == '_' || s[i] == '.'))
			return 0;
	return 1;
}

int rn_image_ref_ok(const char *ref)
{
	size_t n = strlen(ref);

	if (!n || n > 255)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = ref[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		if (!alnum && !strchr("._-:/@", c))
			return 0;
		/* each path component starts with a letter or digit: no "..",
		 * no empty one, nothing skopeo could read as an option */
		if ((i == 0 || ref[i - 1] == '/') && !alnum)
			return 0;
	}
	return ref[n - 1] != '/';
}

static int parse_rest(const cJSON *req, struct rn_spec *spec, struct sbx_err *err)
{
	const char *s = NULL;
	const cJSON *it;

	cJSON_ArrayForEach(it, req) {
		int ok = 0;
		for (int i = 0; known[i]; i++)
			ok |= strcmp(known[i], it->string) == 0;
		if (!ok)
			return sbx_err_set(err, EINVAL, "%.64s: unknown field", it->string);
	}
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		int64_t *v = (int64_t *)((char *)spec + limits[i].off);
		*v = limits[i].def;
		if (sbx_json_get_i64(req, limits[i].name, limits[i].min, limits[i].max,
				     v, err) < 0)
			return -1;
	}
	if (spec->nofile > spec->memory_mb * RN_NOFILE_PER_MB)
		return sbx_err_set(err, EINVAL, "nofile: at most %lld with memory_mb %lld "
				   "(%d per MB: each descriptor may hold a socket's kernel buffers)",
				   (long long)(spec->memory_mb * RN_NOFILE_PER_MB),
				   (long long)spec->memory_mb, RN_NOFILE_PER_MB);
	if (rn_policy_parse(cJSON_GetObjectItemCaseSensitive(req, "network"), &spec->network,
			    &spec->policy, err) < 0)
		return -1;
	s = "default";
	if (sbx_json_get_str(req, "image", &s, err) < 0)
		return -1;
	/* a name has no '/'; a reference (pulled when this runner lacks it,
	 * rn_image_pull_create.c) has one */
	if (strchr(s, '/') && rn_image_ref_ok(s))
		strcpy(spec->image_ref, s);
	else if (!rn_image_name_ok(s))
		return sbx_err_set(err, EINVAL, "image: invalid image name (a name, or a registry "
				   "reference host[:port]/path[:tag])");
	else
		strcpy(spec->image, s);
	s = "";
	if (sbx_json_get_str(req, "snapshot", &s, err) < 0)
		return -1;
	if (strlen(s) >= sizeof(spec->snapshot) || strspn(s, "abcdefghijklmnopqrstuvwxyz"
			"0123456789_") != strlen(s))
		return sbx_err_set(err, EINVAL, "snapshot: not a snapshot id");
	strcpy(spec->snapshot, s);
	s = "";
	if (sbx_json_get_str(req, "owner", &s, err) < 0)
		return -1;
	if (strlen(s) >= sizeof(spec->owner) || strspn(s, "abcdefghijklmnopqrstuvwxyz"
			"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != strlen(s))
		return sbx_err_set(err, EINVAL, "owner: up to 64 of [A-Za-z0-9_-]");
	strcpy(spec->owner, s);
	/* the gateway's flag, kept here with the owner tag so that a restarted
	 * gateway still knows the sandbox's previews are private */
	if (sbx_json_get_bool(req, "preview_auth", &spec->preview_auth, err) < 0 ||
	    sbx_json_get_bool(req, "persistent", &spec->persistent, err) < 0)
		return -1;
	if (parse_ports(req, spec, err) < 0)
		return -1;
	return parse_env(req, spec, err);
}

int rn_spec_parse(const cJSON *req, struct rn_spec *spec, struct sbx_err *err)
{
	memset(spec, 0, sizeof(*spec));
	if (parse_rest(req, spec, err) < 0) {
		err->code = err->code == ENOMEM || err->code == ENOTSUP ? err->code : EINVAL;
		rn_spec_free(spec);
		return -1;
	}
	return 0;
}

void rn_spec_limits_json(cJSON *o, const struct rn_spec *spec)
{
	cJSON_AddNumberToObject(o, "timeout_ms", (double)spec->timeout_ms);
	cJSON_AddNumberToObject(o, "vcpus", (double)spec->vcpus);
	cJSON_AddNumberToObject(o, "memory_mb", (double)spec->memory_mb);
	cJSON_AddNumberToObject(o, "pids", (double)spec->pids);
	cJSON_AddNumberToObject(o, "disk_mb", (double)spec->disk_mb);
	cJSON_AddNumberToObject(o, "nofile", (double)spec->nofile);
}
