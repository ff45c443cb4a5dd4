/* The import (rn_oci_import.h): archive -> staging dir -> verified blobs
 * -> layers in the store -> rootfs -> rename. */
#include "rn_oci_import.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/evp.h>

#include "rn_oci_compose.h"
#include "rn_oci_layer.h"
#include "rn_oci_manifest.h"
#include "rn_spec.h"
#include "sbx_json.h"

struct imp {
	const struct oci_import_opts *o;
	int store;                      /* <image_dir> */
	int layers;                     /* <image_dir>/.layers/sha256 */
	int lock;                       /* <image_dir>/.layers, flock'd shared: a
					 * layer garbage collection (rn_oci_gc.c)
					 * waits for the import's end */
	int tmp;                        /* <image_dir>/.tmp/<ours> */
	char tmpname[64];
	int in;                         /* the archive's files (tmp/in) */
	uint64_t budget, *bp;
	struct oci_plan plan;
	struct oci_config cfg;
	int n_new;
	uint64_t bytes_new, stripped;
};

static int mkdir_at(int dir, const char *name, mode_t mode)
{
	return mkdirat(dir, name, mode) < 0 && errno != EEXIST ? -1 : 0;
}

static int open_dir(int dir, const char *name)
{
	return openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* A file of the archive (a clean relative path), opened without following
 * a symlink anywhere. */
static int open_in(struct imp *m, const char *rel)
{
	char last[256];
	int p = oci_open_parent(m->in, rel, last, sizeof last, 0), fd;

	if (p < 0)
		return -1;
	fd = openat(p, last, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	close(p);
	return fd;
}

/* The sha256 of what fd holds, as hex. */
static int sha_hex(int fd, char hex[65])
{
	EVP_MD_CTX *x = EVP_MD_CTX_new();
	unsigned char buf[65536], d[32];
	unsigned len = 32;
	ssize_t n;

	if (!x || EVP_DigestInit_ex(x, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(x);
		return -1;
	}
	while ((n = read(fd, buf, sizeof buf)) > 0)
		EVP_DigestUpdate(x, buf, (size_t)n);
	EVP_DigestFinal_ex(x, d, &len);
	EVP_MD_CTX_free(x);
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	return n < 0 ? -1 : 0;
}

/* Blob b opened and checked against its digest (when it has one), at
 * offset 0. A descriptor, or -1 with err. */
static int open_blob(struct imp *m, const struct oci_blob *b, struct sbx_err *err)
{
	char got[65];
	int fd = open_in(m, b->path);
	struct stat st;

	if (fd < 0)
		return sbx_err_set(err, EINVAL, "the archive has no file %s", b->path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return sbx_err_set(err, EINVAL, "%s is no regular file", b->path);
	}
	if (b->hex[0]) {
		if (sha_hex(fd, got) < 0 || strcmp(got, b->hex) || lseek(fd, 0, SEEK_SET) < 0) {
			close(fd);
			return sbx_err_set(err, EINVAL, "%s does not match its digest sha256:%.12s...",
					   b->path, b->hex);
		}
	}
	return fd;
}

/* A whole JSON blob into a malloc'd buffer. */
static char *read_blob(struct imp *m, const struct oci_blob *b, size_t *n, struct sbx_err *err)
{
	int fd = open_blob(m, b, err);
	struct stat st;
	char *buf;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || st.st_size > (off_t)OCI_JSON_MAX) {
		close(fd);
		sbx_err_set(err, EINVAL, "%s: over %u bytes", b->path, OCI_JSON_MAX);
		return NULL;
	}
	buf = malloc((size_t)st.st_size + 1);
	*n = buf ? (size_t)read(fd, buf, (size_t)st.st_size) : 0;
	close(fd);
	if (!buf || *n != (size_t)st.st_size) {
		free(buf);
		sbx_err_set(err, EIO, "%s: read failed", b->path);
		return NULL;
	}
	buf[*n] = '\0';
	return buf;
}

/* The plan and the config from the archive's JSON, every digest checked. */
static int read_plan(struct imp *m, struct sbx_err *err)
{
	struct oci_blob idx = { "index.json", "" }, mf;
	char *txt;
	size_t n;
	int rc, fd;

	if ((fd = open_in(m, "index.json")) >= 0) {
		close(fd);
		if (!(txt = read_blob(m, &idx, &n, err)))
			return -1;
		rc = oci_index_pick(txt, n, &mf, err);
		free(txt);
		/* one nested index (a multi-platform image) at most */
		for (int depth = 0; rc == 0; depth++) {
			if (!(txt = read_blob(m, &mf, &n, err)))
				return -1;
			if (!oci_is_index(txt, n)) {
				rc = oci_manifest_parse(txt, n, &m->plan, err);
				free(txt);
				break;
			}
			rc = depth ? sbx_err_set(err, EINVAL, "index: nested too deep") :
				     oci_index_pick(txt, n, &mf, err);
			free(txt);
		}
	} else {
		struct oci_blob dm = { "manifest.json", "" };
		if ((fd = open_in(m, "manifest.json")) < 0)
			return sbx_err_set(err, EINVAL, "neither an OCI image layout (index.json) nor "
					   "a docker-archive (manifest.json)");
		close(fd);
		if (!(txt = read_blob(m, &dm, &n, err)))
			return -1;
		rc = oci_docker_parse(txt, n, &m->plan, err);
		free(txt);
	}
	if (rc < 0)
		return -1;
	if (!(txt = read_blob(m, &m->plan.config, &n, err)))
		return -1;
	rc = oci_config_parse(txt, n, &m->cfg, err);
	free(txt);
	if (rc < 0)
		return -1;
	if (m->cfg.n_diff != m->plan.n_layers)
		return sbx_err_set(err, EINVAL, "the config lists %d diff_ids for %d layers",
				   m->cfg.n_diff, m->plan.n_layers);
	return 0;
}

/* Layer i into the store (unless there already), checked against its
 * diff_id. */
static int store_layer(struct imp *m, int i, struct sbx_err *err)
{
	const char *want = m->cfg.diff_id[i];
	unsigned char d[32];
	char got[65], stage[32];
	struct oci_layer_stats st;
	struct stat s;
	int src, dir, rc;

	/* checked even when the layer is stored already: a manifest whose
	 * digests do not match is refused whatever the store holds */
	src = open_blob(m, &m->plan.layer[i], err);
	if (src < 0)
		return -1;
	if (fstatat(m->layers, want, &s, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(s.st_mode)) {
		close(src);
		return 0;   /* shared: stored by an earlier image */
	}
	snprintf(stage, sizeof stage, "layer-%d", i);
	if (mkdirat(m->tmp, stage, 0755) < 0 || (dir = open_dir(m->tmp, stage)) < 0) {
		close(src);
		return sbx_err_sys(err, "staging a layer");
	}
	rc = oci_layer_unpack(src, dir, m->o->max_bytes, m->bp, d, &st, err);
	close(src);
	close(dir);
	if (rc < 0)
		return sbx_err_wrap(err, "layer %d", i + 1);
	for (int k = 0; k < 32; k++)
		snprintf(got + 2 * k, 3, "%02x", d[k]);
	if (strcmp(got, want))
		return sbx_err_set(err, EINVAL, "layer %d does not match its diff_id sha256:%.12s...",
				   i + 1, want);
	if (renameat2(m->tmp, stage, m->layers, want, RENAME_NOREPLACE) < 0) {
		if (errno != EEXIST)
			return sbx_err_sys(err, "storing layer %d", i + 1);
		oci_remove_at(m->tmp, stage);   /* another import stored it meanwhile */
		return 0;
	}
	m->n_new++;
	m->bytes_new += st.bytes;
	m->stripped += st.stripped;
	return 0;
}

static int write_config(struct imp *m, int image, struct sbx_err *err)
{
	cJSON *o = cJSON_CreateObject(), *a;
	char *txt;
	int fd, rc = 0;

	cJSON_AddStringToObject(o, "source", m->plan.docker ? "docker-archive" : "oci");
	a = cJSON_AddArrayToObject(o, "layers");
	for (int i = 0; i < m->cfg.n_diff; i++) {
		char d[80];
		snprintf(d, sizeof d, "sha256:%s", m->cfg.diff_id[i]);
		cJSON_AddItemToArray(a, cJSON_CreateString(d));
	}
	a = cJSON_AddArrayToObject(o, "env");
	for (int i = 0; i < m->cfg.n_env; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(m->cfg.env[i]));
	cJSON_AddStringToObject(o, "workdir", m->cfg.workdir);
	cJSON_AddStringToObject(o, "user", m->cfg.user);
	txt = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	fd = txt ? openat(image, "config.json", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			  O_CLOEXEC, 0644) : -1;
	if (fd < 0 || write(fd, txt, strlen(txt)) != (ssize_t)strlen(txt))
		rc = sbx_err_sys(err, "writing the image's config.json");
	if (fd >= 0)
		close(fd);
	cJSON_free(txt);
	return rc;
}

/* A pulled image's reference, beside its config.json (not in it: the
 * digest is config.json's, the same for the same image pulled or
 * uploaded). A create naming the reference finds the image by it. */
static int write_ref(const char *ref, int image, struct sbx_err *err)
{
	int fd = openat(image, "ref", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	size_t n = strlen(ref);
	int ok = fd >= 0 && write(fd, ref, n) == (ssize_t)n;

	if (fd >= 0)
		close(fd);
	return ok ? 0 : sbx_err_sys(err, "writing the image's ref");
}

/* The rootfs, config.json (and a pull's ref) in tmp/image, renamed to
 * <name>. */
static int build_image(struct imp *m, const char *name, struct sbx_err *err)
{
	int image, rootfs, rc = 0;

	if (mkdirat(m->tmp, "image", 0755) < 0 || (image = open_dir(m->tmp, "image")) < 0)
		return sbx_err_sys(err, "staging the image");
	if (mkdirat(image, "rootfs", 0755) < 0 || (rootfs = open_dir(image, "rootfs")) < 0) {
		close(image);
		return sbx_err_sys(err, "staging the rootfs");
	}
	for (int i = 0; i < m->plan.n_layers && !rc; i++) {
		int l = open_dir(m->layers, m->cfg.diff_id[i]);
		if (l < 0) {
			rc = sbx_err_sys(err, "layer %d vanished from the store", i + 1);
			break;
		}
		rc = oci_compose_layer(rootfs, l, err);
		close(l);
	}
	close(rootfs);
	if (!rc)
		rc = write_config(m, image, err);
	if (!rc && m->o->ref)
		rc = write_ref(m->o->ref, image, err);
	close(image);
	if (!rc && renameat2(m->tmp, "image", m->store, name, RENAME_NOREPLACE) < 0)
		rc = errno == EEXIST ? sbx_err_set(err, EEXIST, "image %s exists", name) :
		     sbx_err_sys(err, "renaming the image into place");
	return rc;
}

static int usage_at(int dir, uint64_t *bytes, int depth)
{
	int dfd = dup(dir), rc = 0;
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *e;

	if (!d || depth > 256) {
		if (d)
			closedir(d);
		else if (dfd >= 0)
			close(dfd);
		return -1;
	}
	while (!rc && (e = readdir(d))) {
		struct stat st;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		/* a file's blocks shared among its links: counted once in all */
		*bytes += (uint64_t)st.st_blocks * 512 / (st.st_nlink ? st.st_nlink : 1);
		if (S_ISDIR(st.st_mode)) {
			int sub = open_dir(dir, e->d_name);
			if (sub >= 0) {
				rc = usage_at(sub, bytes, depth + 1);
				close(sub);
			}
		}
	}
	closedir(d);
	return rc;
}

int oci_store_usage(const char *image_dir, uint64_t *bytes)
{
	int fd = open(image_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

	*bytes = 0;
	if (fd < 0)
		return -1;
	rc = usage_at(fd, bytes, 0);
	close(fd);
	return rc;
}

/* The store's dirs, the name's checks, the budget and our staging dir. */
static int begin(struct imp *m, const struct oci_import_opts *o, const char *name,
		 struct sbx_err *err)
{
	char tmpl[] = ".tmp/imp-XXXXXX";
	struct stat st;
	int ld;

	memset(m, 0, sizeof *m);
	m->o = o;
	m->store = m->layers = m->tmp = m->in = m->lock = -1;
	if (!rn_image_name_ok(name))
		return sbx_err_set(err, EINVAL, "name: 1 to 32 of a-z 0-9 - _ . , not starting "
				   "with . or -");
	m->store = open(o->image_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (m->store < 0)
		return sbx_err_sys(err, "image dir %s", o->image_dir);
	if (fstatat(m->store, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return sbx_err_set(err, EEXIST, "image %s exists", name);
	/* before anything is made: a full store is refused unchanged */
	if (o->store_cap) {
		uint64_t used = 0;
		if (oci_store_usage(o->image_dir, &used) < 0)
			return sbx_err_sys(err, "measuring the image store");
		if (used >= o->store_cap)
			return sbx_err_set(err, ENOSPC, "the image store is full (%llu of %llu MiB, "
					   "--image-store-mb)", (unsigned long long)(used >> 20),
					   (unsigned long long)(o->store_cap >> 20));
		m->budget = o->store_cap - used;
		m->bp = &m->budget;
	}
	if (mkdir_at(m->store, ".layers", 0700) < 0 ||
	    (ld = open_dir(m->store, ".layers")) < 0)
		return sbx_err_sys(err, "the layer store");
	m->lock = ld;
	/* from here to end(): the layers this import finds stored stay */
	while (flock(ld, LOCK_SH) < 0)
		if (errno != EINTR)
			return sbx_err_sys(err, "locking the layer store");
	if (mkdir_at(ld, "sha256", 0755) < 0 || (m->layers = open_dir(ld, "sha256")) < 0)
		return sbx_err_sys(err, "the layer store");
	if (mkdir_at(m->store, ".tmp", 0700) < 0)
		return sbx_err_sys(err, "the staging dir");
	{
		int tfd;
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/%s", o->image_dir, tmpl);
		if (!mkdtemp(path))
			return sbx_err_sys(err, "the staging dir");
		snprintf(m->tmpname, sizeof m->tmpname, "%s", strrchr(path, '/') + 1);
		tfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (tfd < 0)
			return sbx_err_sys(err, "the staging dir");
		m->tmp = tfd;
	}
	return 0;
}

static void end(struct imp *m)
{
	if (m->tmp >= 0) {
		int t = open_dir(m->store, ".tmp");
		close(m->tmp);
		if (t >= 0) {
			oci_remove_at(t, m->tmpname);
			close(t);
		}
	}
	if (m->in >= 0)
		close(m->in);
	if (m->layers >= 0)
		close(m->layers);
	if (m->store >= 0)
		close(m->store);
	if (m->lock >= 0)
		close(m->lock);
	oci_config_free(&m->cfg);
}

static int finish(struct imp *m, const char *name, cJSON **out, struct sbx_err *err)
{
	if (read_plan(m, err) < 0)
		return -1;
	for (int i = 0; i < m->plan.n_layers; i++)
		if (store_layer(m, i, err) < 0)
			return -1;
	if (build_image(m, name, err) < 0)
		return -1;
	*out = cJSON_CreateObject();
	cJSON_AddStringToObject(*out, "name", name);
	cJSON_AddStringToObject(*out, "source", m->plan.docker ? "docker-archive" : "oci");
	cJSON_AddNumberToObject(*out, "layers", m->plan.n_layers);
	cJSON_AddNumberToObject(*out, "layers_new", m->n_new);
	cJSON_AddNumberToObject(*out, "bytes_new", (double)m->bytes_new);
	cJSON_AddNumberToObject(*out, "setuid_stripped", (double)m->stripped);
	return 0;
}

int oci_import_archive(const struct oci_import_opts *o, int fd, const char *name,
		       cJSON **out, struct sbx_err *err)
{
	struct imp m;
	struct oci_layer_stats st;
	unsigned char d[32];
	int rc = begin(&m, o, name, err);

	/* the archive's own files go through the layer unpacker too: the same
	 * checks, and nothing of it is followed or lands outside tmp/in */
	if (!rc && (mkdirat(m.tmp, "in", 0700) < 0 || (m.in = open_dir(m.tmp, "in")) < 0))
		rc = sbx_err_sys(err, "staging the archive");
	if (!rc && oci_layer_unpack(fd, m.in, o->max_bytes, NULL, d, &st, err) < 0)
		rc = sbx_err_wrap(err, "the archive");
	if (!rc)
		rc = finish(&m, name, out, err);
	end(&m);
	return rc;
}

int oci_import_layout(const struct oci_import_opts *o, const char *layout, const char *name,
		      cJSON **out, struct sbx_err *err)
{
	struct imp m;
	int rc = begin(&m, o, name, err);

	if (!rc && (m.in = open(layout, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		rc = sbx_err_sys(err, "the pulled layout %s", layout);
	if (!rc)
		rc = finish(&m, name, out, err);
	end(&m);
	return rc;
}
