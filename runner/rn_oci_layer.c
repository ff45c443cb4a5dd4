/* Unpacking one layer (rn_oci_layer.h). Every entry is written relative to
 * the layer's own directory through descriptors: each parent is opened
 * with O_NOFOLLOW | O_DIRECTORY from the one above it, so a symlink the
 * layer made (or anything not a directory) in the middle of a path fails
 * the layer instead of being followed, and nothing lands outside dir.
 * Refused: absolute names, "..", hardlinks to anything but a regular file
 * this layer already wrote, device nodes and fifos, whiteouts of "." or
 * "..". Contained: setuid/setgid bits are stripped; owners are kept as
 * numbers (the jail maps them into the sandbox's user namespace). */
#include "rn_oci_layer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rn_oci_tar.h"
#include "sbx_tarpath.h"

#define DEPTH_MAX 256

int oci_open_parent(int root, const char *rel, char *last, size_t lastsz, int create)
{
	char comp[OCI_TAR_NAME_MAX];
	const char *p = rel, *slash;
	int fd = dup(root), depth = 0;

	if (fd < 0)
		return -1;
	while ((slash = strchr(p, '/'))) {
		size_t n = (size_t)(slash - p);
		int next;

		memcpy(comp, p, n);
		comp[n] = '\0';
		if (++depth > DEPTH_MAX) {
			close(fd);
			errno = ELOOP;
			return -1;
		}
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && create) {
			if (mkdirat(fd, comp, 0755) < 0 && errno != EEXIST) {
				close(fd);
				return -1;
			}
			next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		close(fd);
		if (next < 0)
			return -1;
		fd = next;
		p = slash + 1;
	}
	if (strlen(p) >= lastsz) {
		close(fd);
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(last, p);
	return fd;
}

/* Make room for a new non-directory at parent/last: an old non-directory
 * goes; a directory stays and refuses the entry (EISDIR). */
static int clear_name(int parent, const char *last)
{
	struct stat st;

	if (fstatat(parent, last, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return -1;
	}
	return unlinkat(parent, last, 0);
}

static unsigned safe_mode(const struct oci_tar *t, struct oci_layer_stats *st)
{
	if (t->mode & 06000)
		st->stripped++;
	return t->mode & 01777;
}

static int write_file(struct oci_tar *t, int parent, const char *last, uint64_t *budget,
		      struct oci_layer_stats *st, struct sbx_err *err)
{
	unsigned char buf[65536];
	struct timespec ts[2] = { { t->mtime, 0 }, { t->mtime, 0 } };
	int fd;
	ssize_t n;

	if (clear_name(parent, last) < 0)
		return sbx_err_set(err, errno == EISDIR ? EINVAL : errno,
				   "layer entry %.200s: a file over a directory or unremovable", t->name);
	/* O_EXCL | O_NOFOLLOW: a name that came back meanwhile is never opened */
	fd = openat(parent, last, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return sbx_err_sys(err, "layer entry %.200s: create", t->name);
	if (budget) {
		/* what the file will take, in 4 KiB blocks, before a byte lands */
		uint64_t need = (t->size + 4095) & ~(uint64_t)4095;
		if (need > *budget) {
			close(fd);
			return sbx_err_set(err, ENOSPC, "the image store is full (--image-store-mb)");
		}
		*budget -= need;
	}
	while ((n = oci_tar_read(t, buf, sizeof buf)) > 0) {
		const unsigned char *p = buf;
		while (n > 0) {
			ssize_t w = write(fd, p, (size_t)n);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				int e = errno;
				close(fd);
				return sbx_err_set(err, e, "layer entry %.200s: write: %s", t->name,
						   strerror(e));
			}
			p += w;
			n -= w;
		}
	}
	if (n < 0) {
		close(fd);
		return sbx_err_set(err, t->over ? EFBIG : EINVAL, "%s", t->err);
	}
	st->bytes += t->size;
	if (fchown(fd, (uid_t)t->uid, (gid_t)t->gid) < 0 ||
	    fchmod(fd, safe_mode(t, st)) < 0 || futimens(fd, ts) < 0) {
		int e = errno;
		close(fd);
		return sbx_err_set(err, e, "layer entry %.200s: owner or mode: %s", t->name,
				   strerror(e));
	}
	close(fd);
	return 0;
}

static int make_dir(struct oci_tar *t, int parent, const char *last,
		    struct oci_layer_stats *st, struct sbx_err *err)
{
	struct stat s;
	int fd;

	if (fstatat(parent, last, &s, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(s.st_mode) &&
	    unlinkat(parent, last, 0) < 0)
		return sbx_err_sys(err, "layer entry %.200s: replace", t->name);
	if (mkdirat(parent, last, 0700) < 0 && errno != EEXIST)
		return sbx_err_sys(err, "layer entry %.200s: mkdir", t->name);
	fd = openat(parent, last, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sbx_err_sys(err, "layer entry %.200s: open", t->name);
	if (fchown(fd, (uid_t)t->uid, (gid_t)t->gid) < 0 || fchmod(fd, safe_mode(t, st)) < 0) {
		int e = errno;
		close(fd);
		return sbx_err_set(err, e, "layer entry %.200s: owner or mode: %s", t->name,
				   strerror(e));
	}
	close(fd);
	return 0;
}

static int make_symlink(struct oci_tar *t, int parent, const char *last, struct sbx_err *err)
{
	struct timespec ts[2] = { { t->mtime, 0 }, { t->mtime, 0 } };

	/* the target is text for the sandbox's own root: never resolved here */
	if (!t->link[0])
		return sbx_err_set(err, EINVAL, "layer entry %.200s: a symlink to nothing", t->name);
	if (clear_name(parent, last) < 0)
		return sbx_err_set(err, errno == EISDIR ? EINVAL : errno,
				   "layer entry %.200s: a symlink over a directory", t->name);
	if (symlinkat(t->link, parent, last) < 0 ||
	    fchownat(parent, last, (uid_t)t->uid, (gid_t)t->gid, AT_SYMLINK_NOFOLLOW) < 0 ||
	    utimensat(parent, last, ts, AT_SYMLINK_NOFOLLOW) < 0)
		return sbx_err_sys(err, "layer entry %.200s: symlink", t->name);
	return 0;
}

/* A hardlink names an earlier regular file of this same layer; anything
 * else (outside, missing, a symlink, a directory) is refused. */
static int make_hardlink(struct oci_tar *t, int root, int parent, const char *last,
			 struct sbx_err *err)
{
	char target[OCI_TAR_NAME_MAX], tlast[OCI_TAR_NAME_MAX];
	struct stat st;
	int tp;

	if (sbx_tar_path_clean(t->link, target, sizeof target) < 0)
		return sbx_err_set(err, EINVAL, "layer entry %.200s: a hardlink out of the layer "
				   "(%.200s)", t->name, t->link);
	tp = oci_open_parent(root, target, tlast, sizeof tlast, 0);
	if (tp < 0 || fstatat(tp, tlast, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode)) {
		if (tp >= 0)
			close(tp);
		return sbx_err_set(err, EINVAL, "layer entry %.200s: a hardlink to %.200s, which "
				   "is no regular file written before it", t->name, t->link);
	}
	if (clear_name(parent, last) < 0 || linkat(tp, tlast, parent, last, 0) < 0) {
		int e = errno;
		close(tp);
		return sbx_err_set(err, e == EISDIR ? EINVAL : e, "layer entry %.200s: link: %s",
				   t->name, strerror(e));
	}
	close(tp);
	return 0;
}

/* A whiteout entry: an empty marker file of the same name. */
static int whiteout(struct oci_tar *t, int parent, const char *last, struct sbx_err *err)
{
	const char *what = last + 4;
	int fd;

	if (strcmp(last, ".wh..wh..opq") &&
	    (!*what || !strcmp(what, ".") || !strcmp(what, "..") || strchr(what, '/')))
		return sbx_err_set(err, EINVAL, "layer entry %.200s: a whiteout of '%s'", t->name,
				   *what ? what : "/");
	if (clear_name(parent, last) < 0)
		return sbx_err_set(err, EINVAL, "layer entry %.200s: a whiteout over a directory",
				   t->name);
	fd = openat(parent, last, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0)
		return sbx_err_sys(err, "layer entry %.200s: whiteout", t->name);
	close(fd);
	return 0;
}

static int entry(struct oci_tar *t, int root, uint64_t *budget, struct oci_layer_stats *st,
		 struct sbx_err *err)
{
	char rel[OCI_TAR_NAME_MAX], last[OCI_TAR_NAME_MAX];
	int parent, rc;

	if (t->name[0] == '/')
		return sbx_err_set(err, EINVAL, "layer entry %.200s: an absolute path", t->name);
	if (sbx_tar_path_clean(t->name, rel, sizeof rel) < 0) {
		/* "./" (the layer's root itself) names nothing to write */
		if (strspn(t->name, "./") == strlen(t->name) && !strstr(t->name, ".."))
			return 0;
		return sbx_err_set(err, EINVAL, "layer entry %.200s: a path with '..' or too "
				   "long", t->name);
	}
	switch (t->type) {
	case '0': case '1': case '2': case '5':
		break;
	case '3': case '4':
		return sbx_err_set(err, EINVAL, "layer entry %.200s: a device node (refused)",
				   t->name);
	case '6':
		return sbx_err_set(err, EINVAL, "layer entry %.200s: a fifo (refused)", t->name);
	default:
		return sbx_err_set(err, EINVAL, "layer entry %.200s: unsupported type '%c'",
				   t->name, t->type);
	}
	parent = oci_open_parent(root, rel, last, sizeof last, 1);
	if (parent < 0)
		return sbx_err_set(err, errno == ELOOP || errno == ENOTDIR ? EINVAL : errno,
				   "layer entry %.200s: its path goes through a symlink or a file",
				   t->name);
	st->entries++;
	if (!strncmp(last, ".wh.", 4))
		rc = whiteout(t, parent, last, err);
	else if (t->type == '0')
		rc = write_file(t, parent, last, budget, st, err);
	else if (t->type == '5')
		rc = make_dir(t, parent, last, st, err);
	else if (t->type == '2')
		rc = make_symlink(t, parent, last, err);
	else
		rc = make_hardlink(t, root, parent, last, err);
	close(parent);
	return rc;
}

int oci_layer_unpack(int src, int dir, uint64_t cap, uint64_t *budget,
		     unsigned char diff_id[32], struct oci_layer_stats *st,
		     struct sbx_err *err)
{
	struct oci_tar t;
	int rc;

	memset(st, 0, sizeof *st);
	if (oci_tar_open(&t, src, cap, 1) < 0) {
		oci_tar_close(&t);
		return sbx_err_set(err, EIO, "%s", t.err);
	}
	while ((rc = oci_tar_next(&t)) == 1)
		if (entry(&t, dir, budget, st, err) < 0) {
			/* what the entry asked is what failed (a link onto itself, a
			 * name too long...): the layer is refused as invalid, unless
			 * the host ran out of room or memory */
			if (err->code != ENOSPC && err->code != EDQUOT && err->code != EFBIG &&
			    err->code != ENOMEM && err->code != EIO)
				err->code = EINVAL;
			oci_tar_close(&t);
			return -1;
		}
	if (rc < 0 || oci_tar_finish(&t, diff_id) < 0) {
		int e = t.over ? EFBIG : EINVAL;
		oci_tar_close(&t);
		return sbx_err_set(err, e, "%s", t.err);
	}
	return 0;
}
