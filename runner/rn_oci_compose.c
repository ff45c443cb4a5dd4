/* The hardlink farm (rn_oci_compose.h). Both trees are walked by
 * descriptors opened with O_NOFOLLOW: the rootfs holds the image's own
 * symlinks, which are linked as links and never followed. */
#include "rn_oci_compose.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEPTH_MAX 256
#define OPAQUE ".wh..wh..opq"

static int remove_depth(int dir, const char *name, int depth);

/* Every entry of the directory fd (kept open). */
static int empty_dir(int fd, int depth)
{
	int dfd = dup(fd), rc = 0;
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *e;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	rewinddir(d);
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (remove_depth(fd, e->d_name, depth + 1) < 0) {
			rc = -1;
			break;
		}
	}
	closedir(d);
	return rc;
}

static int remove_depth(int dir, const char *name, int depth)
{
	struct stat st;
	int fd, rc;

	if (depth > DEPTH_MAX) {
		errno = ELOOP;
		return -1;
	}
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dir, name, 0);
	fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = empty_dir(fd, depth);
	close(fd);
	return rc < 0 ? -1 : unlinkat(dir, name, AT_REMOVEDIR);
}

int oci_remove_at(int dir, const char *name)
{
	return remove_depth(dir, name, 0);
}

static int merge(int root, int layer, int depth, struct sbx_err *err);

static int merge_dir(int root, int layer, const char *name, const struct stat *ls,
		     int depth, struct sbx_err *err)
{
	struct stat rs;
	int rfd, lfd, rc;

	if (fstatat(root, name, &rs, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(rs.st_mode) &&
	    oci_remove_at(root, name) < 0)
		return sbx_err_sys(err, "compose %s", name);
	if (mkdirat(root, name, 0700) < 0 && errno != EEXIST)
		return sbx_err_sys(err, "compose mkdir %s", name);
	rfd = openat(root, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	lfd = openat(layer, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rfd < 0 || lfd < 0 || fchown(rfd, ls->st_uid, ls->st_gid) < 0 ||
	    fchmod(rfd, ls->st_mode & 07777) < 0) {
		rc = sbx_err_sys(err, "compose dir %s", name);
	} else {
		rc = merge(rfd, lfd, depth + 1, err);
	}
	if (rfd >= 0)
		close(rfd);
	if (lfd >= 0)
		close(lfd);
	return rc;
}

/* One pass over the layer's directory: whiteouts (pass 0) or entries
 * (pass 1): a layer's whiteouts hide what is below it, never what it
 * brings itself. */
static int pass(int root, int layer, int which, int depth, struct sbx_err *err)
{
	int dfd = dup(layer), rc = 0;
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *e;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return sbx_err_sys(err, "compose: read a layer directory");
	}
	/* the dup shares the offset the other pass left at the end */
	rewinddir(d);
	while (!rc && (e = readdir(d))) {
		const char *n = e->d_name;
		struct stat ls;

		if (!strcmp(n, ".") || !strcmp(n, "..") || !strcmp(n, OPAQUE))
			continue;
		if (!strncmp(n, ".wh.", 4)) {
			if (which == 0 && oci_remove_at(root, n + 4) < 0)
				rc = sbx_err_sys(err, "compose: whiteout %s", n + 4);
			continue;
		}
		if (which == 0)
			continue;
		if (fstatat(layer, n, &ls, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = sbx_err_sys(err, "compose: stat %s", n);
		} else if (S_ISDIR(ls.st_mode)) {
			rc = merge_dir(root, layer, n, &ls, depth, err);
		} else if (oci_remove_at(root, n) < 0 || linkat(layer, n, root, n, 0) < 0) {
			rc = sbx_err_sys(err, "compose: link %s", n);
		}
	}
	closedir(d);
	return rc;
}

static int merge(int root, int layer, int depth, struct sbx_err *err)
{
	struct stat st;

	if (depth > DEPTH_MAX)
		return sbx_err_set(err, EINVAL, "compose: directories nested deeper than %d",
				   DEPTH_MAX);
	if (fstatat(layer, OPAQUE, &st, AT_SYMLINK_NOFOLLOW) == 0 && empty_dir(root, depth) < 0)
		return sbx_err_sys(err, "compose: opaque directory");
	if (pass(root, layer, 0, depth, err) < 0)
		return -1;
	return pass(root, layer, 1, depth, err);
}

int oci_compose_layer(int rootfs, int layer, struct sbx_err *err)
{
	return merge(rootfs, layer, 0, err);
}
