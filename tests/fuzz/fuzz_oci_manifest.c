/* libFuzzer target: the JSON of an image archive (runner/rn_oci_manifest.c)
 * as a hostile archive gives it: the same bytes as an index, a manifest, a
 * docker-archive manifest.json and a config. Whatever parses names only
 * clean relative paths and sha256 digests of 64 hex. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../runner/rn_oci_manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_blob(const struct oci_blob *b)
{
	size_t n = strlen(b->hex);

	size_t l = strlen(b->path);

	/* ".." as a component, never as part of a name ("..x" is a name) */
	if (b->path[0] == '/' || !strcmp(b->path, "..") || !strncmp(b->path, "../", 3) ||
	    strstr(b->path, "/../") || (l >= 3 && !strcmp(b->path + l - 3, "/..")) ||
	    (n != 0 && n != 64))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *json = (const char *)data;
	struct sbx_err err;
	struct oci_blob m;
	struct oci_plan p;
	struct oci_config c;

	if (oci_index_pick(json, size, &m, &err) == 0)
		check_blob(&m);
	(void)oci_is_index(json, size);
	if (oci_manifest_parse(json, size, &p, &err) == 0 || oci_docker_parse(json, size, &p, &err) == 0) {
		if (p.n_layers < 0 || p.n_layers > OCI_LAYERS_MAX)
			__builtin_trap();
		check_blob(&p.config);
		for (int i = 0; i < p.n_layers; i++)
			check_blob(&p.layer[i]);
	}
	if (oci_config_parse(json, size, &c, &err) == 0) {
		if (c.n_env > OCI_ENV_MAX || c.n_diff > OCI_LAYERS_MAX ||
		    (c.workdir[0] && c.workdir[0] != '/'))
			__builtin_trap();
		for (int i = 0; i < c.n_env; i++)
			if (!strchr(c.env[i], '=') || c.env[i][0] == '=')
				__builtin_trap();
		oci_config_free(&c);
	}
	return 0;
}
