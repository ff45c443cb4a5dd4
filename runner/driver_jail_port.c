/* A socket belongs to the network namespace it was created in, whatever the
 * creator does afterwards. So the runner (single-threaded, root) enters the
 * sandbox's namespace just for socket(2), returns to its own, and connects.
 * The caller then holds a plain TCP connection to the guest port: the
 * agent's forward and the runner's splice are not in the data path. */
#include "driver_jail_port.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sbx_log.h"

int jail_netns_socket(const struct rn_sandbox *sb, int domain, int type, int protocol,
		      struct sbx_err *err)
{
	char path[64];
	int self = -1, ns = -1, fd = -1, e;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)sb->pid);
	self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	ns = open(path, O_RDONLY | O_CLOEXEC);
	if (self < 0 || ns < 0) {
		sbx_err_sys(err, "open network namespace of %s", sb->id);
		goto out;
	}
	if (setns(ns, CLONE_NEWNET) < 0) {
		sbx_err_sys(err, "enter network namespace of %s", sb->id);
		goto out;
	}
	fd = socket(domain, type, protocol);
	e = errno;
	if (setns(self, CLONE_NEWNET) < 0) {
		/* The runner must never go on inside a sandbox's network (later
		 * sockets and the processes it starts would live there). */
		sbx_err_log("cannot return to the runner's network namespace: %s",
			    strerror(errno));
		abort();
	}
	if (fd < 0) {
		errno = e;
		sbx_err_sys(err, "socket in %s", sb->id);
	}
out:
	if (self >= 0)
		close(self);
	if (ns >= 0)
		close(ns);
	return fd;
}

int jail_open_port(struct rn_sandbox *sb, int port, struct sbx_err *err)
{
	int fd = jail_netns_socket(sb, AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, err);

	if (fd < 0)
		return -1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	/* loopback answers at once: connected, refused, or (busy) in progress */
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 && errno != EINPROGRESS) {
		sbx_err_sys(err, "connect to port %d in %s", port, sb->id);
		close(fd);
		fd = -1;
	}
	return fd;
}
