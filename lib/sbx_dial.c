#include "sbx_dial.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sbx_net.h"

int sbx_dial_start(const char *path, int port)
{
	char line[32];
	int fd, n, e;

	if (port < 1 || port > 65535) {
		errno = EINVAL;
		return -1;
	}
	fd = sbx_unix_connect_last(path);
	if (fd < 0)
		return -1;
	n = snprintf(line, sizeof(line), "CONNECT %d\n", port);
	/* a fresh socket's empty buffer always takes these few bytes */
	if (send(fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) == n)
		return fd;
	e = errno;
	close(fd);
	errno = e == EAGAIN ? ECONNREFUSED : e;
	return -1;
}

long sbx_dial_parse_ok(const void *p, size_t n, int port)
{
	const char *s = p, *nl;
	size_t len, i;
	long v = 0;

	nl = memchr(s, '\n', n < SBX_DIAL_LINE_MAX ? n : SBX_DIAL_LINE_MAX);
	/* every prefix of a good line must say "OK " as far as it goes */
	if (memcmp(s, "OK ", n < 3 ? n : 3) != 0)
		return -1;
	if (!nl)
		return n >= SBX_DIAL_LINE_MAX ? -1 : 0;
	len = (size_t)(nl - s);
	if (len && s[len - 1] == '\r')
		len--;
	/* digits only, no sign, no spaces, no leading zero: one spelling */
	if (len < 4 || len > 8 || s[3] == '0')
		return -1;
	for (i = 3; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (v != port)
		return -1;
	return (long)(nl - s) + 1;
}

int sbx_dial_finish(int fd, int port)
{
	char buf[SBX_DIAL_LINE_MAX];
	ssize_t n;
	long used;

	n = recv(fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	if (n == 0) {
		errno = ECONNRESET;
		return -1;
	}
	used = sbx_dial_parse_ok(buf, (size_t)n, port);
	if (used == 0)
		return 0;
	if (used < 0) {
		errno = ECONNREFUSED;
		return -1;
	}
	/* exactly the line: the peeked bytes are there to take */
	if (recv(fd, buf, (size_t)used, MSG_DONTWAIT) != used) {
		errno = ECONNRESET;
		return -1;
	}
	return 1;
}
