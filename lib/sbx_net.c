/* Symlink-safe UNIX connects (see sbx_net.h). connect(2) on a path always
 * follows symlinks, and Linux has no connectat(2): so the socket's inode
 * is opened with openat2 (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, O_PATH),
 * checked to be a socket, and reached through /proc/self/fd/N, a magic
 * link that names exactly that inode. */
#include "sbx_net.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

static int open_socket_inode(const char *dir, const char *name)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	struct stat st = { 0 };
	int dfd, fd, e;

	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	fd = (int)syscall(SYS_openat2, dfd, name, &how, sizeof(how));
	e = errno;
	close(dfd);
	if (fd < 0) {
		errno = e;
		return -1;
	}
	/* O_PATH | O_NOFOLLOW gives the link itself when name is one */
	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		close(fd);
		errno = S_ISLNK(st.st_mode) ? ELOOP : ENOTSOCK;
		return -1;
	}
	return fd;
}

int sbx_unix_connect_beneath(const char *dir, const char *name)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int pfd = open_socket_inode(dir, name), fd, e;

	if (pfd < 0)
		return -1;
	snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d", pfd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		e = errno;
		close(fd);
		errno = e;
		fd = -1;
	}
	e = errno;
	close(pfd);
	errno = e;
	return fd;
}

int sbx_unix_connect_last(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t n;

	if (!slash || !slash[1]) {
		errno = EINVAL;
		return -1;
	}
	n = slash == path ? 1 : (size_t)(slash - path);
	if (n >= sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(dir, path, n);
	dir[n] = 0;
	return sbx_unix_connect_beneath(dir, slash + 1);
}
