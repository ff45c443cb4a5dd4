/* Filesystem steps (see sbx_fs.h). */
#include "sbx_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define RMTREE_MAX_DEPTH 32   /* the trees removed here are a few levels deep */

static int mkdir_one(const char *path, mode_t mode)
{
	struct stat st;

	if (mkdir(path, mode) == 0)
		return 0;
	if (errno != EEXIST)
		return -1;
	if (stat(path, &st) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	return 0;
}

int sbx_mkdir_p(const char *path, mode_t parent_mode, mode_t mode)
{
	char tmp[PATH_MAX];

	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir_one(tmp, parent_mode) < 0)
			return -1;
		*p = '/';
	}
	return mkdir_one(tmp, mode);
}

static int rm_at(int dfd, const char *name, dev_t dev, int depth)
{
	struct stat st, dst;
	struct dirent *e;
	DIR *d;
	int fd, err = 0;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dfd, name, 0) < 0 && errno != ENOENT ? -1 : 0;
	if (st.st_dev != dev) {
		errno = EBUSY;
		return -1;
	}
	if (depth >= RMTREE_MAX_DEPTH) {
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
	return unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT ? -1 : 0;
}

int sbx_rmtree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	return rm_at(AT_FDCWD, path, st.st_dev, 0);
}

int sbx_write_file(const char *path, const char *s, int oflags, mode_t mode)
{
	size_t n = strlen(s);
	int fd = open(path, O_WRONLY | O_CLOEXEC | oflags, mode);
	ssize_t k;
	int e;

	if (fd < 0)
		return -1;
	k = write(fd, s, n);
	e = k < 0 ? errno : EIO;
	close(fd);
	if (k != (ssize_t)n) {
		errno = e;
		return -1;
	}
	return 0;
}

int sbx_replace_file(const char *path, const char *s, mode_t mode)
{
	char tmp[PATH_MAX];

	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	unlink(tmp);
	if (sbx_write_file(tmp, s, O_CREAT | O_EXCL | O_NOFOLLOW, mode) < 0 ||
	    rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		errno = e;
		return -1;
	}
	return 0;
}

ssize_t sbx_read_file(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	ssize_t k = 0;
	int e;

	if (fd < 0 || n == 0) {
		if (fd >= 0)
			close(fd);
		errno = fd < 0 ? errno : EINVAL;
		return -1;
	}
	while (got < n - 1 && (k = read(fd, buf + got, n - 1 - got)) > 0)
		got += (size_t)k;
	e = errno;
	close(fd);
	buf[got] = 0;
	if (k < 0) {
		errno = e;
		return -1;
	}
	return (ssize_t)got;
}

int sbx_self_dir(char *out, size_t n)
{
	char self[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (k <= 0)
		return -1;
	self[k] = 0;
	slash = strrchr(self, '/');
	if (!slash) {
		errno = ENOENT;
		return -1;
	}
	*slash = 0;
	if (snprintf(out, n, "%s", slash == self ? "/" : self) >= (int)n) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int sbx_write_all(int fd, const void *buf, size_t n)
{
	const unsigned char *p = buf;
	int sock = 1;

	while (n) {
		ssize_t k = sock ? send(fd, p, n, MSG_NOSIGNAL) : write(fd, p, n);
		if (k < 0 && sock && errno == ENOTSOCK) {
			sock = 0;
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0) {
			errno = EIO;
			return -1;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}
