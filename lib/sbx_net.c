/* UNIX sockets (see sbx_net.h).
 *
 * Symlink-safe connects: connect(2) on a path always
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
#include <sys/time.h>
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

static int sun_of(struct sockaddr_un *a, const char *path)
{
	size_t n = strlen(path);

	if (!n || n >= sizeof(a->sun_path)) {
		errno = n ? ENAMETOOLONG : EINVAL;
		return -1;
	}
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	memcpy(a->sun_path, path, n + 1);
	return 0;
}

int sbx_unix_connect(const char *path, int timeout_ms)
{
	struct sockaddr_un a;
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	int fd, e;

	if (sun_of(&a, path) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | (timeout_ms > 0 ? 0 : SOCK_NONBLOCK), 0);
	if (fd < 0)
		return -1;
	if (timeout_ms > 0 &&
	    (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	     setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0))
		goto fail;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		goto fail;
	return fd;
fail:
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

int sbx_unix_listen(const char *path, int backlog)
{
	struct sockaddr_un a;
	mode_t old;
	int fd, rc, e;

	if (sun_of(&a, path) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	unlink(path);
	old = umask(0177);
	rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (rc < 0 || chmod(path, 0600) < 0 || listen(fd, backlog) < 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

ssize_t sbx_send_fd(int sock, const void *buf, size_t len, int fd, int flags)
{
	union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } u;
	struct iovec iov = { (void *)buf, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = u.b, .msg_controllen = sizeof(u.b) };

	memset(&u, 0, sizeof(u));
	u.h.cmsg_level = SOL_SOCKET;
	u.h.cmsg_type = SCM_RIGHTS;
	u.h.cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(&u.h), &fd, sizeof(int));
	return sendmsg(sock, &m, flags | MSG_NOSIGNAL);
}

ssize_t sbx_recv_fd(int sock, void *buf, size_t len, int *fd, int flags)
{
	/* room for a few: a peer that sends more gets them closed, not
	 * leaked into a truncated control message */
	union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int) * 4)]; } u;
	struct iovec iov = { buf, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = u.b, .msg_controllen = sizeof(u.b) };
	ssize_t n = recvmsg(sock, &m, flags | MSG_CMSG_CLOEXEC);

	*fd = -1;
	if (n < 0)
		return -1;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h)) {
		size_t k;

		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int x;

			memcpy(&x, CMSG_DATA(h) + i * sizeof(int), sizeof(x));
			if (*fd < 0)
				*fd = x;
			else
				close(x);
		}
	}
	return n;
}
