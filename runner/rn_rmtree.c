/* rm -rf of a sandbox's state dir (and the runtime dir), by descriptors:
 * every directory is opened relative to its parent's fd with O_NOFOLLOW
 * and checked to be the very directory that was examined, so a symlink
 * (or a rename) anywhere in the tree, even one made while the walk runs,
 * is removed as a name and never followed; and a mount (another st_dev)
 * is never entered: a leftover mount fails the removal, it is not
 * emptied through. */
#include "rn_rmtree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH 32   /* the runner's trees are a few levels deep */

static int rm_at(int dfd, const char *name, dev_t dev, int depth)
{
	struct stat st, dst;
	struct dirent *e;
	DIR *d;
	int fd, rc = 0, err = 0;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dfd, name, 0) < 0 && errno != ENOENT ? -1 : 0;
	if (st.st_dev != dev) {
		errno = EBUSY;
		return -1;
	}
	if (depth >= MAX_DEPTH) {
		errno = ELOOP;
		return -1;
	}
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &dst) < 0 || dst.st_dev != st.st_dev || dst.st_ino != st.st_ino) {
		close(fd);
		errno = EAGAIN;   /* replaced since the stat */
		return -1;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (rm_at(dirfd(d), e->d_name, dev, depth + 1) < 0 && !err)
			err = errno;
	}
	closedir(d);
	if (err) {
		errno = err;
		return -1;
	}
	rc = unlinkat(dfd, name, AT_REMOVEDIR);
	return rc < 0 && errno != ENOENT ? -1 : 0;
}

int rn_rmtree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	/* the top is the runner's own path: given as is, like the rest of
	 * its configuration */
	return rm_at(AT_FDCWD, path, st.st_dev, 0);
}
