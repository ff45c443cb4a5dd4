/* A stand-in agent for the readiness check of the runner suite: it listens
 * where the real agent does (--listen unix:PATH) and accepts, but never
 * answers the CONNECT handshake. A runner that called "connect succeeded"
 * ready would report this sandbox running; it must not. Built by the suite
 * with the host's cc. */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd, held[64], n = 0;

	if (argc < 3 || strncmp(argv[2], "unix:", 5) != 0)
		return 2;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", argv[2] + 5);
	unlink(a.sun_path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 64) < 0)
		return 1;
	for (;;) {
		int c = accept(fd, NULL, NULL);
		/* hold the connections open: silence, not a refusal */
		if (c >= 0 && n < 64)
			held[n++] = c;
		else if (c >= 0)
			close(c);
	}
}
