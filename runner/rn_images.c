/* The images of the image dir: each <image_dir>/<name>/rootfs is one. What
 * an image is comes from its own files, never from running anything in
 * it: the OS from os-release, the runtimes from dpkg's status (the node
 * and python3 packages) unless the build's stamp (.sandbox-image, written
 * by mk/image.sh and mk/runtime-images.sh) names them, the digest and size
 * from that stamp, when it was built from the rootfs' mtime. Files are
 * opened without following a last symlink and read up to a bound. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/evp.h>
#include "runner.h"
#include "rn_images.h"
#include "rn_spec.h"

#define OS_RELEASE_MAX (64 * 1024)
#define DPKG_STATUS_MAX (32 * 1024 * 1024)
#define STAMP_MAX (16 * 1024)
#define STAMP_NAME ".sandbox-image"
#define CONFIG_MAX (256 * 1024)
#define REF_MAX 256
#define HELD_MAX 64   /* names and references in a status */

/* The file rel under dir (a directory descriptor) into a malloc'd,
 * NUL-terminated buffer of at most max bytes; NULL when absent or not a
 * regular file. */
static char *read_file(int dir, const char *rel, size_t max, size_t *len)
{
	int fd = openat(dir, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	char *buf = NULL;
	size_t n = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !(buf = malloc(max + 1)))
		goto out;
	while (n < max) {
		ssize_t k = read(fd, buf + n, max - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	buf[n] = '\0';
	*len = n;
out:
	close(fd);
	return buf;
}

int rn_images_dpkg_version(const char *p, size_t n, const char *pkg, char *out, size_t outlen)
{
	size_t plen = strlen(pkg);
	const char *end = p + n;

	/* paragraphs are blank-line separated; "Package: x" starts its own */
	for (const char *l = p; l < end;) {
		const char *nl = memchr(l, '\n', (size_t)(end - l));
		const char *le = nl ? nl : end;
		if ((size_t)(le - l) == 9 + plen && !strncmp(l, "Package: ", 9) &&
		    !strncmp(l + 9, pkg, plen)) {
			for (const char *v = le; v < end && !(v + 1 < end && v[0] == '\n' && v[1] == '\n');) {
				const char *vn = memchr(v + 1, '\n', (size_t)(end - v - 1));
				const char *ve = vn ? vn : end;
				if (ve - v > 10 && !strncmp(v + 1, "Version: ", 9)) {
					const char *s = v + 10;
					size_t k = 0;
					if (memchr(s, ':', (size_t)(ve - s)))   /* an epoch */
						s = (const char *)memchr(s, ':', (size_t)(ve - s)) + 1;
					while (s + k < ve && !strchr("+-~", s[k]) && k + 1 < outlen)
						k++;
					memcpy(out, s, k);
					out[k] = '\0';
					return k ? 0 : -1;
				}
				v = ve;
			}
			return -1;
		}
		l = le + 1;
	}
	return -1;
}

int rn_images_stamp_value(const char *p, const char *key, char *out, size_t outlen)
{
	size_t klen = strlen(key);

	for (const char *l = p; *l;) {
		size_t n = strcspn(l, "\n");
		if (n > klen && l[klen] == '=' && !strncmp(l, key, klen)) {
			size_t v = n - klen - 1;
			if (!v || v >= outlen)
				return -1;
			memcpy(out, l + klen + 1, v);
			out[v] = '\0';
			for (size_t i = 0; i < v; i++)   /* printable ASCII only */
				if ((unsigned char)out[i] < 0x20 || (unsigned char)out[i] > 0x7e)
					return -1;
			return 0;
		}
		l += n + (l[n] == '\n');
	}
	return -1;
}

/* PRETTY_NAME of os-release, unquoted, into out ("" when absent). */
static void os_name(int root, char *out, size_t n)
{
	size_t len = 0;
	char *t = read_file(root, "usr/lib/os-release", OS_RELEASE_MAX, &len);
	const char *v;

	out[0] = '\0';
	if (!t)
		t = read_file(root, "etc/os-release", OS_RELEASE_MAX, &len);
	if (!t)
		return;
	v = strstr(t, "PRETTY_NAME=");
	if (v && (v == t || v[-1] == '\n')) {
		size_t k;
		v += 12;
		if (*v == '"')
			v++;
		k = strcspn(v, "\"\n");
		snprintf(out, n, "%.*s", (int)k, v);
	}
	free(t);
}

/* An imported image (rn_oci_import.c) has no stamp: its digest is sha256
 * of its config.json, which names its layers by their content digests
 * (diff_ids) and holds its config, so the same layers and config give the
 * same digest. 0 with "sha256:<hex>" in out (at least 72 bytes), or -1. */
static int config_digest(int images, const char *name, char *out)
{
	char rel[64];
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	size_t len = 0;
	char *t;
	int ok;

	snprintf(rel, sizeof rel, "%s/config.json", name);
	if (!(t = read_file(images, rel, CONFIG_MAX, &len)))
		return -1;
	ok = EVP_Digest(t, len, md, &n, EVP_sha256(), NULL) && n == 32;
	free(t);
	if (!ok)
		return -1;
	strcpy(out, "sha256:");
	for (unsigned int i = 0; i < n; i++)
		snprintf(out + 7 + 2 * i, 3, "%02x", md[i]);
	return 0;
}

/* A pulled image's registry reference (<name>/ref, rn_oci_import.c) into
 * out: 0, or -1 when it has none (an upload, a built image). */
static int ref_of(int images, const char *name, char *out, size_t n)
{
	char rel[64];
	size_t len = 0;
	char *t;
	int rc = -1;

	snprintf(rel, sizeof rel, "%s/ref", name);
	if (!(t = read_file(images, rel, REF_MAX - 1, &len)))
		return -1;
	if (len && len < n && rn_image_ref_ok(t)) {
		memcpy(out, t, len + 1);
		rc = 0;
	}
	free(t);
	return rc;
}

static cJSON *one(const struct runner *r, int images, const char *name)
{
	char rel[64], os[128], ver[80], ver2[REF_MAX];
	struct stat st;
	size_t len = 0;
	int root;
	cJSON *o, *rt;
	char *status, *stamp;

	snprintf(rel, sizeof rel, "%s/rootfs", name);
	root = openat(images, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (root < 0)
		return NULL;
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", name);
	if (!fstat(root, &st))
		cJSON_AddNumberToObject(o, "created_at",
					(double)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000);
	os_name(root, os, sizeof os);
	cJSON_AddStringToObject(o, "os", os);
	stamp = read_file(root, STAMP_NAME, STAMP_MAX, &len);
	if (stamp && !rn_images_stamp_value(stamp, "digest", ver, sizeof ver) &&
	    !strncmp(ver, "sha256:", 7) && strlen(ver) == 71)
		cJSON_AddStringToObject(o, "digest", ver);
	else if (!stamp && !config_digest(images, name, ver))
		cJSON_AddStringToObject(o, "digest", ver);
	if (stamp && !rn_images_stamp_value(stamp, "size", ver, sizeof ver) &&
	    strspn(ver, "0123456789") == strlen(ver))
		cJSON_AddNumberToObject(o, "size", strtod(ver, NULL));
	if (!ref_of(images, name, ver2, sizeof ver2))
		cJSON_AddStringToObject(o, "ref", ver2);
	rt = cJSON_AddObjectToObject(o, "runtimes");
	status = read_file(root, "var/lib/dpkg/status", DPKG_STATUS_MAX, &len);
	/* a runtime image's node (and its npm, corepack) are not dpkg's:
	 * its stamp names them and wins over the base's nodejs package */
	if (stamp && !rn_images_stamp_value(stamp, "node", ver, sizeof ver))
		cJSON_AddStringToObject(rt, "node", ver);
	else if (status && !rn_images_dpkg_version(status, len, "nodejs", ver, sizeof ver))
		cJSON_AddStringToObject(rt, "node", ver);
	if (stamp && !rn_images_stamp_value(stamp, "npm", ver, sizeof ver))
		cJSON_AddStringToObject(rt, "npm", ver);
	if (stamp && !rn_images_stamp_value(stamp, "corepack", ver, sizeof ver))
		cJSON_AddStringToObject(rt, "corepack", ver);
	if (status && !rn_images_dpkg_version(status, len, "python3", ver, sizeof ver))
		cJSON_AddStringToObject(rt, "python", ver);
	free(status);
	free(stamp);
	close(root);
	(void)r;
	return o;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The image names of the image dir, sorted, into names (at most max, each
 * malloc'd); how many. */
static size_t list_names(const struct runner *r, int images, char **names, size_t max)
{
	DIR *d = images >= 0 ? fdopendir(dup(images)) : NULL;
	struct dirent *e;
	size_t n = 0;
	char rel[300];
	struct stat st;

	(void)r;
	while (d && (e = readdir(d)) && n < max) {
		if (!rn_image_name_ok(e->d_name))
			continue;
		snprintf(rel, sizeof rel, "%s/rootfs", e->d_name);
		if (fstatat(images, rel, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode))
			continue;
		if ((names[n] = strdup(e->d_name)))
			n++;
	}
	if (d)
		closedir(d);
	qsort(names, n, sizeof names[0], by_name);
	return n;
}

cJSON *rn_images_json(const struct runner *r)
{
	cJSON *arr = cJSON_CreateArray();
	int images = open(r->image_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char *names[256];
	size_t n = list_names(r, images, names, sizeof names / sizeof names[0]);

	for (size_t i = 0; i < n; i++) {
		cJSON *o = one(r, images, names[i]);
		if (o)
			cJSON_AddItemToArray(arr, o);
		free(names[i]);
	}
	if (images >= 0)
		close(images);
	return arr;
}

void rn_images_names(const struct runner *r, char *out, size_t len)
{
	int images = open(r->image_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char *names[256];
	size_t n = list_names(r, images, names, sizeof names / sizeof names[0]), k = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (k + strlen(names[i]) + 3 < len)
			k += (size_t)snprintf(out + k, len - k, "%s%s", k ? ", " : "", names[i]);
		free(names[i]);
	}
	if (images >= 0)
		close(images);
}

int rn_images_by_ref(const struct runner *r, const char *ref, char *name, size_t n)
{
	int images = open(r->image_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char *names[256], got[REF_MAX];
	size_t k = list_names(r, images, names, sizeof names / sizeof names[0]);
	int found = 0;

	for (size_t i = 0; i < k; i++) {
		if (!found && !ref_of(images, names[i], got, sizeof got) && !strcmp(got, ref) &&
		    strlen(names[i]) < n) {
			strcpy(name, names[i]);
			found = 1;
		}
		free(names[i]);
	}
	if (images >= 0)
		close(images);
	return found;
}

cJSON *rn_images_held(const struct runner *r)
{
	cJSON *arr = cJSON_CreateArray();
	int images = open(r->image_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char *names[256], ref[REF_MAX];
	size_t k = list_names(r, images, names, sizeof names / sizeof names[0]);
	int held = 0;

	for (size_t i = 0; i < k; i++) {
		if (held < HELD_MAX) {
			cJSON_AddItemToArray(arr, cJSON_CreateString(names[i]));
			held++;
		}
		if (held < HELD_MAX && !ref_of(images, names[i], ref, sizeof ref)) {
			cJSON_AddItemToArray(arr, cJSON_CreateString(ref));
			held++;
		}
		free(names[i]);
	}
	if (images >= 0)
		close(images);
	return arr;
}
