/* The JSON of an image archive, parsed and checked before any blob is
 * used: an OCI layout's index.json and manifest, a docker-archive's
 * manifest.json, and the image config (Env, WorkingDir, User, the
 * layers' diff_ids). Pure functions of the text (fuzzed:
 * tests/fuzz/fuzz_oci_manifest.c); every digest is sha256 and every path
 * a clean relative one. */
#ifndef RN_OCI_MANIFEST_H
#define RN_OCI_MANIFEST_H
#include <stddef.h>

#include "sbx_err.h"

#define OCI_LAYERS_MAX 128
#define OCI_ENV_MAX 64
#define OCI_JSON_MAX (4u << 20)        /* index, manifest or config */

struct oci_blob {
	char path[256];                 /* relative to the archive's root */
	char hex[65];                   /* its sha256; "" when the archive names none */
};

struct oci_plan {
	int docker;                     /* a docker-archive (else an OCI layout) */
	struct oci_blob config;
	struct oci_blob layer[OCI_LAYERS_MAX];
	int n_layers;
};

struct oci_config {
	char *env[OCI_ENV_MAX];         /* "NAME=value", owned */
	int n_env;
	char workdir[1024];
	char user[128];
	char diff_id[OCI_LAYERS_MAX][65];
	int n_diff;
};

/* index.json (or a nested image index): the manifest to use, the first
 * for linux/amd64 or with no platform, into m (path and hex). 0, or -1 (EINVAL). */
int oci_index_pick(const char *json, size_t n, struct oci_blob *m, struct sbx_err *err);
/* 1 when the text is an image index (a manifest list), 0 when not. */
int oci_is_index(const char *json, size_t n);
/* An OCI image manifest into p (config and layers). 0, or -1 (EINVAL). */
int oci_manifest_parse(const char *json, size_t n, struct oci_plan *p, struct sbx_err *err);
/* A docker-archive's manifest.json (its first image) into p. */
int oci_docker_parse(const char *json, size_t n, struct oci_plan *p, struct sbx_err *err);
/* The image config into c (free with oci_config_free). 0, or -1 (EINVAL). */
int oci_config_parse(const char *json, size_t n, struct oci_config *c, struct sbx_err *err);
void oci_config_free(struct oci_config *c);
/* "sha256:<64 lowercase hex>" into hex; 0, or -1. */
int oci_digest_hex(const char *digest, char hex[65]);
#endif
