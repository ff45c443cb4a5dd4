#include "rn_layer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sbx_fs.h"

#define XATTR_LIST_MAX_ 8192
#define XATTR_VALUE_MAX_ 4096

struct walk {
	uid_t base, count;
	int merge;              /* rn_layer_merge: dst has entries already */
	struct rn_layer_stats *st;
	struct sbx_err *err;
};

static uid_t shift(const struct walk *w, uid_t id)
{
	if (id >= w->base && id - w->base < w->count)
		return id - w->base;
	return 65534;
}

/* The user.* xattrs of sfd onto dfd (overlay's own, user.overlay.*,
 * mark opaque directories; trusted.* and security.* are not the
 * sandbox's to keep). */
static int copy_xattrs(int sfd, int dfd, struct walk *w, const char *name)
{
	char list[XATTR_LIST_MAX_], val[XATTR_VALUE_MAX_];
	ssize_t n = flistxattr(sfd, list, sizeof list);

	if (n < 0)
		return errno == ENOTSUP ? 0 : sbx_err_sys(w->err, "list xattrs of %s", name);
	for (char *k = list; k < list + n; k += strlen(k) + 1) {
		ssize_t vn;
		if (strncmp(k, "user.", 5))
			continue;
		vn = fgetxattr(sfd, k, val, sizeof val);
		if (vn < 0)
			return sbx_err_sys(w->err, "read xattr %s of %s", k, name);
		if (fsetxattr(dfd, k, val, (size_t)vn, 0) < 0)
			return sbx_err_sys(w->err, "set xattr %s on %s", k, name);
	}
	return 0;
}

static int set_meta(int dfd, const struct stat *s, struct walk *w, const char *name)
{
	struct timespec ts[2] = { s->st_atim, s->st_mtim };

	if (fchown(dfd, shift(w, s->st_uid), shift(w, s->st_gid)) < 0 ||
	    fchmod(dfd, s->st_mode & 07777) < 0 || futimens(dfd, ts) < 0)
		return sbx_err_sys(w->err, "set owner, mode and times of %s", name);
	return 0;
}

/* One extent of data [off, end) of sfd to the same offset of dfd. */
static int copy_extent(int sfd, int dfd, off_t off, off_t end, struct walk *w, const char *name)
{
	char buf[131072];

	while (off < end) {
		size_t want = end - off < (off_t)sizeof buf ? (size_t)(end - off) : sizeof buf;
		ssize_t n = pread(sfd, buf, want, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return sbx_err_sys(w->err, "read %s", name);
		if (n == 0)
			return 0;   /* shorter than it was: it stopped there */
		if (w->st->limit && w->st->bytes + n > w->st->limit)
			return sbx_err_set(w->err, ENOSPC, "the layer passes the %lld bytes left "
					   "in the snapshot store (at %s)", (long long)w->st->limit, name);
		for (ssize_t k = 0; k < n;) {
			ssize_t m = pwrite(dfd, buf + k, (size_t)(n - k), off + k);
			if (m < 0 && errno == EINTR)
				continue;
			if (m <= 0)
				return sbx_err_sys(w->err, "write %s", name);
			k += m;
		}
		w->st->bytes += n;
		off += n;
	}
	return 0;
}

/* The file's data extents only (SEEK_DATA/SEEK_HOLE): a sparse file of a
 * huge size in a small tmpfs costs the layer what it holds, not its size. */
static int copy_bytes(int sfd, int dfd, const struct stat *s, struct walk *w, const char *name)
{
	off_t off = 0, end;

	if (ioctl(dfd, FICLONE, sfd) == 0) {
		w->st->reflinked++;
		return 0;
	}
	while (off < s->st_size) {
		off = lseek(sfd, off, SEEK_DATA);
		if (off < 0)
			break;   /* ENXIO: only a hole is left */
		end = lseek(sfd, off, SEEK_HOLE);
		if (end < 0)
			return sbx_err_sys(w->err, "seek in %s", name);
		if (copy_extent(sfd, dfd, off, end, w, name) < 0)
			return -1;
		off = end;
	}
	if (off < 0 && errno != ENXIO)
		return sbx_err_sys(w->err, "seek in %s", name);
	if (ftruncate(dfd, s->st_size) < 0)
		return sbx_err_sys(w->err, "size %s", name);
	return 0;
}

static int copy_file(int sdir, int ddir, const char *name, const struct stat *s, struct walk *w)
{
	int sfd = openat(sdir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	int dfd = -1, rc = -1;

	if (sfd < 0)
		return sbx_err_sys(w->err, "open %s", name);
	dfd = openat(ddir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (dfd < 0)
		sbx_err_sys(w->err, "create %s", name);
	else if (!copy_bytes(sfd, dfd, s, w, name) && !copy_xattrs(sfd, dfd, w, name))
		rc = set_meta(dfd, s, w, name);
	close(sfd);
	if (dfd >= 0)
		close(dfd);
	return rc;
}

static int copy_link(int sdir, int ddir, const char *name, const struct stat *s, struct walk *w)
{
	char target[4096];
	struct timespec ts[2] = { s->st_atim, s->st_mtim };
	ssize_t n = readlinkat(sdir, name, target, sizeof target - 1);

	if (n < 0)
		return sbx_err_sys(w->err, "readlink %s", name);
	target[n] = 0;
	if (symlinkat(target, ddir, name) < 0 ||
	    fchownat(ddir, name, shift(w, s->st_uid), shift(w, s->st_gid), AT_SYMLINK_NOFOLLOW) < 0 ||
	    utimensat(ddir, name, ts, AT_SYMLINK_NOFOLLOW) < 0)
		return sbx_err_sys(w->err, "symlink %s", name);
	return 0;
}

/* A whiteout (char 0/0) or a fifo; other nodes cannot be made in a
 * sandbox and are left out. 1 when left out. */
static int copy_node(int ddir, const char *name, const struct stat *s, struct walk *w)
{
	struct timespec ts[2] = { s->st_atim, s->st_mtim };
	int whiteout = S_ISCHR(s->st_mode) && s->st_rdev == makedev(0, 0);

	if (!whiteout && !S_ISFIFO(s->st_mode))
		return 1;
	if (mknodat(ddir, name, s->st_mode & (S_IFMT | 07777), whiteout ? makedev(0, 0) : 0) < 0 ||
	    fchownat(ddir, name, shift(w, s->st_uid), shift(w, s->st_gid), AT_SYMLINK_NOFOLLOW) < 0 ||
	    utimensat(ddir, name, ts, AT_SYMLINK_NOFOLLOW) < 0)
		return sbx_err_sys(w->err, "make node %s", name);
	return 0;
}

static int copy_dir(int sfd, int dfd, int depth, struct walk *w);

/* 1 when directory name of sdir is opaque (overlay hides what is below it). */
static int opaque(int sdir, const char *name)
{
	char v[4];
	int fd = openat(sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n = fd >= 0 ? fgetxattr(fd, "user.overlay.opaque", v, sizeof v) : -1;

	if (fd >= 0)
		close(fd);
	return n == 1 && v[0] == 'y';
}

/* Merging: what dst has at name makes way for src's entry, unless both are
 * directories and src's is not opaque (then src's entries go into it).
 * 1 to merge into the directory there, 0 to make the entry, -1 failed. */
static int make_way(int sdir, int ddir, const char *name, const struct stat *s, struct walk *w)
{
	struct stat d;
	char p[64 + NAME_MAX];

	if (fstatat(ddir, name, &d, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : sbx_err_sys(w->err, "stat %s", name);
	if (S_ISDIR(s->st_mode) && S_ISDIR(d.st_mode) && !opaque(sdir, name))
		return 1;
	if (!S_ISDIR(d.st_mode))
		return unlinkat(ddir, name, 0) < 0 ? sbx_err_sys(w->err, "remove %s", name) : 0;
	/* our own layer's directory: removed through its descriptor's path */
	snprintf(p, sizeof p, "/proc/self/fd/%d/%s", ddir, name);
	return sbx_rmtree(p) < 0 ? sbx_err_sys(w->err, "remove %s", name) : 0;
}

static int copy_entry(int sdir, int ddir, const char *name, int depth, struct walk *w)
{
	struct stat s;
	int into = 0;

	if (fstatat(sdir, name, &s, AT_SYMLINK_NOFOLLOW) < 0)
		return sbx_err_sys(w->err, "stat %s", name);
	w->st->files++;
	if (w->merge && (into = make_way(sdir, ddir, name, &s, w)) < 0)
		return -1;
	if (S_ISREG(s.st_mode))
		return copy_file(sdir, ddir, name, &s, w);
	if (S_ISLNK(s.st_mode))
		return copy_link(sdir, ddir, name, &s, w);
	if (!S_ISDIR(s.st_mode))
		return copy_node(ddir, name, &s, w) < 0 ? -1 : 0;
	if (depth >= RN_LAYER_DEPTH_MAX)
		return sbx_err_set(w->err, ELOOP, "directories nest deeper than %d levels "
				   "(at %s)", RN_LAYER_DEPTH_MAX, name);
	if (!into && mkdirat(ddir, name, 0700) < 0)
		return sbx_err_sys(w->err, "mkdir %s", name);
	int sfd = openat(sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int dfd = openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int rc = -1;
	if (sfd < 0 || dfd < 0)
		sbx_err_sys(w->err, "open dir %s", name);
	else if (!copy_dir(sfd, dfd, depth + 1, w) && !copy_xattrs(sfd, dfd, w, name))
		rc = set_meta(dfd, &s, w, name);   /* times last: the copy changed them */
	if (sfd >= 0)
		close(sfd);
	if (dfd >= 0)
		close(dfd);
	return rc;
}

/* Every entry of sfd into dfd; sfd is consumed by the scan (dup'd). */
static int copy_dir(int sfd, int dfd, int depth, struct walk *w)
{
	int fd = dup(sfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	int rc = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return sbx_err_sys(w->err, "read a directory");
	}
	while (!rc && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			rc = copy_entry(sfd, dfd, e->d_name, depth, w);
	closedir(d);
	return rc;
}

int rn_layer_copy(const char *src, const char *dst, uid_t id_base, uid_t id_count,
		  struct rn_layer_stats *st, struct sbx_err *err)
{
	struct walk w = { id_base, id_count, 0, st, err };
	struct stat s;
	int sfd, dfd = -1, rc = -1;

	int64_t limit = st->limit;

	memset(st, 0, sizeof *st);
	st->limit = limit;
	sfd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		return sbx_err_sys(err, "open %s", src);
	if (fstat(sfd, &s) < 0 || mkdir(dst, 0700) < 0 ||
	    (dfd = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		sbx_err_sys(err, "make %s", dst);
	else if (!copy_dir(sfd, dfd, 0, &w) && !copy_xattrs(sfd, dfd, &w, src)) {
		/* the layer's root is the sandbox's / over the image's: root's */
		s.st_uid = s.st_gid = id_base;
		rc = set_meta(dfd, &s, &w, dst);
	}
	close(sfd);
	if (dfd >= 0)
		close(dfd);
	if (rc < 0)
		sbx_rmtree(dst);
	return rc;
}

int rn_layer_merge(const char *src, const char *dst, struct rn_layer_stats *st,
		   struct sbx_err *err)
{
	struct walk w = { 0, 65536, 1, st, err };
	int sfd, dfd, rc;

	sfd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		return sbx_err_sys(err, "open %s", src);
	dfd = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		close(sfd);
		return sbx_err_sys(err, "open %s", dst);
	}
	rc = copy_dir(sfd, dfd, 0, &w);
	close(sfd);
	close(dfd);
	return rc;
}
