/* A stand-in for sandbox-agent used by the runner's tests: listens on
 * --listen unix:PATH, answers "CONNECT <port>\n" with "OK <port>\n", then
 * reads one line and runs it with /bin/sh as uid/gid 1000 (or as root when
 * the line starts with "root:"), its stdout and stderr on the connection.
 * It lets the jail be tested on its own, independently of the agent. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>

static int read_line(int fd, char *buf, size_t n)
{
	size_t i = 0;

	while (i + 1 < n) {
		char ch;
		if (read(fd, &ch, 1) != 1)
			return -1;
		if (ch == '\n')
			break;
		buf[i++] = ch;
	}
	buf[i] = 0;
	return 0;
}

static void serve(int c)
{
	char line[4096], *cmd = line;
	int port = 0, asroot = 0;

	if (read_line(c, line, sizeof(line)) < 0 || sscanf(line, "CONNECT %d", &port) != 1)
		_exit(1);
	dprintf(c, "OK %d\n", port);
	if (read_line(c, line, sizeof(line)) < 0)
		_exit(0);
	if (strncmp(line, "root:", 5) == 0) {
		asroot = 1;
		cmd = line + 5;
	}
	dup2(c, 0);
	dup2(c, 1);
	dup2(c, 2);
	if (!asroot && (setgroups(0, NULL) < 0 || setgid(1000) < 0 || setuid(1000) < 0))
		_exit(126);
	if (!asroot)
		if (chdir("/home/sandbox") < 0) { /* stay in / */ }
	execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	_exit(127);
}

int main(int argc, char **argv)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int s;

	if (argc < 3 || strcmp(argv[1], "--listen") || strncmp(argv[2], "unix:", 5))
		return 2;
	signal(SIGCHLD, SIG_IGN);   /* auto-reap; as PID 1 also orphans */
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", argv[2] + 5);
	unlink(a.sun_path);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 64) < 0)
		return 1;
	setenv("PATH", "/usr/local/bin:/usr/bin:/bin", 1);
	for (;;) {
		int c = accept4(s, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		if (fork() == 0) {
			close(s);
			serve(c);
		}
		close(c);
	}
}
