/* The layer store's garbage collection (rn_oci_gc.h). */
#include "rn_oci_gc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "rn_oci_compose.h"
#include "rn_spec.h"

#define CONFIG_MAX (256 * 1024)   /* as rn_images.c reads it */
#define USED_MAX 4096             /* layers named by all images together */

struct used {
	char (*hex)[65];
	int n;
};

static int is_hex64(const char *s)
{
	return strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

/* Add the layers image name's config.json lists. 0 (none: an image not
 * imported), or -1 with err when it is there but unreadable. */
static int add_image(int store, const char *name, struct used *u, struct sbx_err *err)
{
	char rel[300], *txt;
	int fd;
	ssize_t k;
	cJSON *o;
	const cJSON *it;

	snprintf(rel, sizeof rel, "%s/config.json", name);
	fd = openat(store, rel, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : sbx_err_sys(err, "image %s: config.json", name);
	txt = malloc(CONFIG_MAX + 1);
	k = txt ? read(fd, txt, CONFIG_MAX) : -1;
	close(fd);
	if (k < 0 || k == CONFIG_MAX) {
		free(txt);
		return sbx_err_set(err, EIO, "image %s: config.json unreadable", name);
	}
	txt[k] = '\0';
	o = cJSON_Parse(txt);
	free(txt);
	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return sbx_err_set(err, EINVAL, "image %s: config.json is not JSON", name);
	}
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(o, "layers")) {
		const char *d = cJSON_GetStringValue(it);
		if (!d || strncmp(d, "sha256:", 7) || !is_hex64(d + 7))
			continue;
		if (u->n == USED_MAX) {
			cJSON_Delete(o);
			return sbx_err_set(err, E2BIG, "over %d layers in use", USED_MAX);
		}
		memcpy(u->hex[u->n++], d + 7, 65);
	}
	cJSON_Delete(o);
	return 0;
}

static int used_has(const struct used *u, const char *hex)
{
	for (int i = 0; i < u->n; i++)
		if (!strcmp(u->hex[i], hex))
			return 1;
	return 0;
}

/* Every image's layers (the entries that may name an image; a tree being
 * deleted has a dot-name and counts for nothing). */
static int collect(int store, struct used *u, struct sbx_err *err)
{
	int dfd = dup(store), rc = 0;
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *e;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return sbx_err_sys(err, "reading the image dir");
	}
	while (!rc && (e = readdir(d)))
		if (rn_image_name_ok(e->d_name))
			rc = add_image(store, e->d_name, u, err);
	closedir(d);
	return rc;
}

static int sweep(int layers, const struct used *u, int *removed, struct sbx_err *err)
{
	int dfd = dup(layers), rc = 0;
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *e;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return sbx_err_sys(err, "reading the layer store");
	}
	while ((e = readdir(d)))
		if (is_hex64(e->d_name) && !used_has(u, e->d_name)) {
			if (oci_remove_at(layers, e->d_name) < 0)
				rc = sbx_err_sys(err, "removing layer %.12s", e->d_name);
			else
				(*removed)++;
		}
	closedir(d);
	return rc;
}

int oci_gc_layers(const char *image_dir, int *removed, struct sbx_err *err)
{
	struct used u = { calloc(USED_MAX, 65), 0 };
	int store = -1, lock = -1, layers = -1, rc = 0;

	*removed = 0;
	if (!u.hex)
		return sbx_err_set(err, ENOMEM, "out of memory");
	store = open(image_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (store < 0) {
		rc = sbx_err_sys(err, "image dir %s", image_dir);
		goto out;
	}
	lock = openat(store, ".layers", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (lock < 0) {
		rc = errno == ENOENT ? 0 : sbx_err_sys(err, "the layer store");
		goto out;
	}
	while (flock(lock, LOCK_EX) < 0)
		if (errno != EINTR) {
			rc = sbx_err_sys(err, "locking the layer store");
			goto out;
		}
	layers = openat(lock, "sha256", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (layers < 0) {
		rc = errno == ENOENT ? 0 : sbx_err_sys(err, "the layer store");
		goto out;
	}
	/* the images are read under the lock: an import renames its image
	 * into place before it lets go */
	rc = collect(store, &u, err);
	if (!rc)
		rc = sweep(layers, &u, removed, err);
out:
	if (layers >= 0)
		close(layers);
	if (lock >= 0)
		close(lock);
	if (store >= 0)
		close(store);
	free(u.hex);
	return rc;
}
