/* The guest side of the vsock backend's tests (tests/vm/run.sh), run as
 * the init of a test VM (static, from the initramfs). It listens on
 * AF_VSOCK and serves each connection by its port:
 *   1024  echo: every byte read is written back;
 *   1025  stall: accept, never read (the host writer must be paused);
 *   1026  flood: read a decimal count and a newline, write that many bytes
 *         of the pattern i % 251, then close;
 *   1027  power off the guest (the end of a test run);
 *   1028  read one byte, then close: the guest ends a connection the host
 *         still writes to (its kernel resets what arrives after);
 *   1029  connect to the host (CID 2, port 7000) and write back how that
 *         ended, one line.
 * One process per connection, so a stalled one holds up nothing else. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

static int listen_on(unsigned port)
{
	struct sockaddr_vm a = { .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_ANY,
	                         .svm_port = port };
	int fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_NONBLOCK, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 512) < 0) {
		printf("vsock-guest: listen %u: %s\n", port, strerror(errno));
		exit(1);
	}
	return fd;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void echo(int fd)
{
	char buf[16384];
	ssize_t n;

	while ((n = read(fd, buf, sizeof buf)) > 0)
		if (write_all(fd, buf, (size_t)n) < 0)
			return;
}

static void flood(int fd)
{
	char line[32], buf[16384];
	size_t got = 0;
	unsigned long long total, sent = 0;

	while (got < sizeof line - 1 && read(fd, line + got, 1) == 1 && line[got] != '\n')
		got++;
	line[got] = 0;
	total = strtoull(line, NULL, 10);
	while (sent < total) {
		size_t n = total - sent < sizeof buf ? (size_t)(total - sent) : sizeof buf;
		for (size_t i = 0; i < n; i++)
			buf[i] = (char)((sent + i) % 251);
		if (write_all(fd, buf, n) < 0)
			return;
		sent += n;
	}
}

static void close_early(int fd)
{
	char b;

	if (read(fd, &b, 1) == 1)
		close(fd);
}

static void dial_host(int fd)
{
	struct sockaddr_vm a = { .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_HOST,
	                         .svm_port = 7000 };
	int s = socket(AF_VSOCK, SOCK_STREAM, 0);
	char line[128];

	if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0)
		snprintf(line, sizeof line, "connect to the host: connected\n");
	else
		snprintf(line, sizeof line, "connect to the host: %s\n", strerror(errno));
	write_all(fd, line, strlen(line));
}

#define N_PORTS 6

int main(void)
{
	unsigned ports[N_PORTS] = { 1024, 1025, 1026, 1027, 1028, 1029 };
	int fds[N_PORTS];

	signal(SIGCHLD, SIG_IGN);   /* children are reaped by the kernel */
	for (int i = 0; i < N_PORTS; i++)
		fds[i] = listen_on(ports[i]);
	printf("vsock-guest: listening\n");
	fflush(stdout);
	for (;;) {
		struct pollfd pfd[N_PORTS];
		for (int i = 0; i < N_PORTS; i++)
			pfd[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
		poll(pfd, N_PORTS, -1);
		for (int i = 0; i < N_PORTS; i++) {
			int c;
			while ((c = accept4(fds[i], NULL, NULL, 0)) >= 0) {
				if (ports[i] == 1027) {
					sync();
					reboot(RB_POWER_OFF);
				}
				if (fork() == 0) {
					if (ports[i] == 1024)
						echo(c);
					else if (ports[i] == 1026)
						flood(c);
					else if (ports[i] == 1028)
						close_early(c);
					else if (ports[i] == 1029)
						dial_host(c);
					else
						pause();
					_exit(0);
				}
				close(c);
			}
		}
	}
}
