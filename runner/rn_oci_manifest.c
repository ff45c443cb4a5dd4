/* Parsing an image archive's JSON (rn_oci_manifest.h). Anything not
 * understood is refused by name: a digest of another algorithm, a path
 * with "..", a layer media type that is neither tar nor gzip'd tar (zstd
 * is not read), more layers than OCI_LAYERS_MAX. */
#include "rn_oci_manifest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "sbx_tarpath.h"

int oci_digest_hex(const char *d, char hex[65])
{
	if (!d || strncmp(d, "sha256:", 7) || strlen(d) != 7 + 64)
		return -1;
	for (int i = 0; i < 64; i++) {
		char c = d[7 + i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return -1;
		hex[i] = c;
	}
	hex[64] = '\0';
	return 0;
}

static cJSON *parse(const char *json, size_t n, const char *what, struct sbx_err *err)
{
	cJSON *o;

	if (n > OCI_JSON_MAX) {
		sbx_err_set(err, EINVAL, "%s: over %u bytes", what, OCI_JSON_MAX);
		return NULL;
	}
	o = cJSON_ParseWithLength(json, n);
	if (!o)
		sbx_err_set(err, EINVAL, "%s: not JSON", what);
	return o;
}

/* A descriptor {"mediaType","digest"} into b (the blob path from the digest). */
static int descriptor(const cJSON *d, struct oci_blob *b, const char *what, struct sbx_err *err)
{
	const cJSON *dg = cJSON_GetObjectItemCaseSensitive(d, "digest");

	if (!cJSON_IsString(dg) || oci_digest_hex(dg->valuestring, b->hex) < 0)
		return sbx_err_set(err, EINVAL, "%s: digest must be sha256:<64 hex>", what);
	snprintf(b->path, sizeof b->path, "blobs/sha256/%s", b->hex);
	return 0;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int oci_is_index(const char *json, size_t n)
{
	cJSON *o = n <= OCI_JSON_MAX ? cJSON_ParseWithLength(json, n) : NULL;
	const char *mt = o ? str(o, "mediaType") : NULL;
	int yes = o && (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(o, "manifests")) ||
			(mt && (strstr(mt, "image.index") || strstr(mt, "manifest.list"))));

	cJSON_Delete(o);
	return yes;
}

int oci_index_pick(const char *json, size_t n, struct oci_blob *m, struct sbx_err *err)
{
	cJSON *o = parse(json, n, "index", err), *ms, *d;
	int rc = -1;

	if (!o)
		return -1;
	ms = cJSON_GetObjectItemCaseSensitive(o, "manifests");
	if (!cJSON_IsArray(ms) || !cJSON_GetArraySize(ms)) {
		sbx_err_set(err, EINVAL, "index: no manifests");
		goto out;
	}
	cJSON_ArrayForEach(d, ms) {
		const cJSON *pl = cJSON_GetObjectItemCaseSensitive(d, "platform");
		const char *os = str(pl, "os"), *arch = str(pl, "architecture");

		if (!cJSON_IsObject(d))
			continue;
		if (pl && !((!os || !strcmp(os, "linux")) && (!arch || !strcmp(arch, "amd64"))))
			continue;
		rc = descriptor(d, m, "index: manifest", err);
		goto out;
	}
	sbx_err_set(err, EINVAL, "index: no manifest for linux/amd64");
out:
	cJSON_Delete(o);
	return rc;
}

static int layer_type_ok(const char *mt)
{
	/* absent (docker-archive) or a tar, plain or gzip; zstd is refused */
	return !mt || !strcmp(mt, "application/vnd.oci.image.layer.v1.tar") ||
	       !strcmp(mt, "application/vnd.oci.image.layer.v1.tar+gzip") ||
	       !strcmp(mt, "application/vnd.docker.image.rootfs.diff.tar.gzip") ||
	       !strcmp(mt, "application/vnd.docker.image.rootfs.diff.tar");
}

int oci_manifest_parse(const char *json, size_t n, struct oci_plan *p, struct sbx_err *err)
{
	cJSON *o = parse(json, n, "manifest", err), *ls, *l;
	int rc = -1;

	memset(p, 0, sizeof *p);
	if (!o)
		return -1;
	if (descriptor(cJSON_GetObjectItemCaseSensitive(o, "config"), &p->config,
		       "manifest: config", err) < 0)
		goto out;
	ls = cJSON_GetObjectItemCaseSensitive(o, "layers");
	if (!cJSON_IsArray(ls)) {
		sbx_err_set(err, EINVAL, "manifest: layers must be an array");
		goto out;
	}
	cJSON_ArrayForEach(l, ls) {
		if (p->n_layers == OCI_LAYERS_MAX) {
			sbx_err_set(err, EINVAL, "manifest: more than %d layers", OCI_LAYERS_MAX);
			goto out;
		}
		if (!layer_type_ok(str(l, "mediaType"))) {
			sbx_err_set(err, EINVAL, "manifest: layer media type %.100s is not read "
				    "(tar or tar+gzip)", str(l, "mediaType"));
			goto out;
		}
		if (descriptor(l, &p->layer[p->n_layers], "manifest: layer", err) < 0)
			goto out;
		p->n_layers++;
	}
	rc = 0;
out:
	cJSON_Delete(o);
	return rc;
}

/* A path of manifest.json into b, with its digest when the name is one
 * (blobs/sha256/<hex>, <hex>.json); a legacy <id>/layer.tar has none and
 * is checked against the config's diff_id alone. */
static int docker_path(const char *s, struct oci_blob *b, const char *what, struct sbx_err *err)
{
	const char *base;
	size_t bl;

	if (!s || sbx_tar_path_clean(s, b->path, sizeof b->path) < 0)
		return sbx_err_set(err, EINVAL, "manifest.json: %s: not a clean relative path", what);
	b->hex[0] = '\0';
	base = strrchr(b->path, '/');
	base = base ? base + 1 : b->path;
	bl = strlen(base);
	if (bl == 64 || (bl == 69 && !strcmp(base + 64, ".json"))) {
		char d[80];
		snprintf(d, sizeof d, "sha256:%.64s", base);
		if (oci_digest_hex(d, b->hex) < 0)
			b->hex[0] = '\0';
	}
	return 0;
}

int oci_docker_parse(const char *json, size_t n, struct oci_plan *p, struct sbx_err *err)
{
	cJSON *o = parse(json, n, "manifest.json", err), *first, *ls, *l;
	int rc = -1;

	memset(p, 0, sizeof *p);
	p->docker = 1;
	if (!o)
		return -1;
	first = cJSON_IsArray(o) ? cJSON_GetArrayItem(o, 0) : NULL;
	if (!cJSON_IsObject(first)) {
		sbx_err_set(err, EINVAL, "manifest.json: not an array of images");
		goto out;
	}
	if (docker_path(str(first, "Config"), &p->config, "Config", err) < 0)
		goto out;
	ls = cJSON_GetObjectItemCaseSensitive(first, "Layers");
	if (!cJSON_IsArray(ls)) {
		sbx_err_set(err, EINVAL, "manifest.json: Layers must be an array");
		goto out;
	}
	cJSON_ArrayForEach(l, ls) {
		if (p->n_layers == OCI_LAYERS_MAX) {
			sbx_err_set(err, EINVAL, "manifest.json: more than %d layers", OCI_LAYERS_MAX);
			goto out;
		}
		if (docker_path(cJSON_IsString(l) ? l->valuestring : NULL, &p->layer[p->n_layers],
				"a layer", err) < 0)
			goto out;
		p->n_layers++;
	}
	rc = 0;
out:
	cJSON_Delete(o);
	return rc;
}

void oci_config_free(struct oci_config *c)
{
	for (int i = 0; i < c->n_env; i++)
		free(c->env[i]);
	c->n_env = 0;
}

int oci_config_parse(const char *json, size_t n, struct oci_config *c, struct sbx_err *err)
{
	cJSON *o = parse(json, n, "config", err), *cfg, *env, *e, *rootfs, *ids, *id;
	const char *s;
	int rc = -1;

	memset(c, 0, sizeof *c);
	if (!o)
		return -1;
	cfg = cJSON_GetObjectItemCaseSensitive(o, "config");
	env = cJSON_GetObjectItemCaseSensitive(cfg, "Env");
	if (!cJSON_IsArray(env))
		env = NULL;
	cJSON_ArrayForEach(e, env) {
		const char *eq;
		if (!cJSON_IsString(e) || !(eq = strchr(e->valuestring, '=')) ||
		    eq == e->valuestring) {
			sbx_err_set(err, EINVAL, "config: Env entries must be NAME=value");
			goto out;
		}
		if (c->n_env == OCI_ENV_MAX) {
			sbx_err_set(err, EINVAL, "config: more than %d Env entries", OCI_ENV_MAX);
			goto out;
		}
		if (!(c->env[c->n_env] = strdup(e->valuestring))) {
			sbx_err_set(err, ENOMEM, "out of memory");
			goto out;
		}
		c->n_env++;
	}
	if ((s = str(cfg, "WorkingDir")) && *s) {
		if (s[0] != '/' || strlen(s) >= sizeof c->workdir) {
			sbx_err_set(err, EINVAL, "config: WorkingDir must be an absolute path");
			goto out;
		}
		snprintf(c->workdir, sizeof c->workdir, "%s", s);
	}
	if ((s = str(cfg, "User")))
		snprintf(c->user, sizeof c->user, "%s", s);
	rootfs = cJSON_GetObjectItemCaseSensitive(o, "rootfs");
	ids = cJSON_GetObjectItemCaseSensitive(rootfs, "diff_ids");
	if (!cJSON_IsArray(ids)) {
		sbx_err_set(err, EINVAL, "config: rootfs.diff_ids must be an array");
		goto out;
	}
	cJSON_ArrayForEach(id, ids) {
		if (c->n_diff == OCI_LAYERS_MAX) {
			sbx_err_set(err, EINVAL, "config: more than %d diff_ids", OCI_LAYERS_MAX);
			goto out;
		}
		if (!cJSON_IsString(id) || oci_digest_hex(id->valuestring, c->diff_id[c->n_diff]) < 0) {
			sbx_err_set(err, EINVAL, "config: a diff_id is not sha256:<64 hex>");
			goto out;
		}
		c->n_diff++;
	}
	rc = 0;
out:
	if (rc < 0)
		oci_config_free(c);
	cJSON_Delete(o);
	return rc;
}
