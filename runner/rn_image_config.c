/* Applying an image's config.json (rn_image_config.h). The file is the
 * runner's own (written at import); it is still read without following a
 * symlink and up to a bound. */
#include "rn_image_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#define CONFIG_MAX (256 * 1024)

static int has_env(const struct rn_spec *s, const char *name, size_t n)
{
	for (int i = 0; i < s->n_env; i++)
		if (strlen(s->env_names[i]) == n && !strncmp(s->env_names[i], name, n))
			return 1;
	return 0;
}

static int add_env(struct rn_spec *s, const char *kv, struct sbx_err *err)
{
	const char *eq = strchr(kv, '=');
	size_t total = 0;

	if (!eq || eq == kv || has_env(s, kv, (size_t)(eq - kv)))
		return 0;
	for (int i = 0; i < s->n_env; i++)
		total += strlen(s->env_names[i]) + strlen(s->env_values[i]);
	if (s->n_env >= RN_MAX_ENV || total + strlen(kv) > RN_ENV_BYTES)
		return sbx_err_set(err, EINVAL, "env: with the image's Env, over %d variables or "
				   "%d bytes", RN_MAX_ENV, RN_ENV_BYTES);
	s->env_names[s->n_env] = strndup(kv, (size_t)(eq - kv));
	s->env_values[s->n_env] = strdup(eq + 1);
	s->n_env++;
	if (!s->env_names[s->n_env - 1] || !s->env_values[s->n_env - 1])
		return sbx_err_set(err, ENOMEM, "out of memory");
	return 0;
}

int rn_image_config_apply(const struct runner *r, struct rn_spec *spec, struct sbx_err *err)
{
	char path[PATH_MAX + 64], *buf;
	const cJSON *env, *e, *wd;
	cJSON *o;
	ssize_t n;
	int fd, rc = 0;

	snprintf(path, sizeof path, "%s/%s/config.json", r->image_dir, spec->image);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;   /* not an imported image */
	buf = malloc(CONFIG_MAX + 1);
	n = buf ? read(fd, buf, CONFIG_MAX) : -1;
	close(fd);
	o = n > 0 ? cJSON_ParseWithLength(buf, (size_t)n) : NULL;
	free(buf);
	if (!o)
		return sbx_err_set(err, EINVAL, "image %s: its config.json is unreadable", spec->image);
	env = cJSON_GetObjectItemCaseSensitive(o, "env");
	if (!cJSON_IsArray(env))
		env = NULL;
	cJSON_ArrayForEach(e, env)
		if (cJSON_IsString(e) && (rc = add_env(spec, e->valuestring, err)) < 0)
			break;
	wd = cJSON_GetObjectItemCaseSensitive(o, "workdir");
	if (!rc && cJSON_IsString(wd) && wd->valuestring[0] == '/')
		snprintf(spec->workdir, sizeof spec->workdir, "%s", wd->valuestring);
	cJSON_Delete(o);
	return rc;
}
