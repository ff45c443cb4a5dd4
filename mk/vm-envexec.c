/* vm-envexec ENVFILE PROGRAM [ARG...]: exec PROGRAM with exactly the
 * environment ENVFILE holds (NAME=VALUE entries, each ended by a NUL byte,
 * as the vm driver writes them: values may hold any byte but NUL). The
 * guest's PID 1 after switch_root (mk/vm-init.sh), so the agent starts with
 * the sandbox's env and nothing of init's. Built static into the vm
 * initramfs by mk/vm-initramfs.sh. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ENV_MAX (1 << 20)

int main(int argc, char **argv)
{
	static char buf[ENV_MAX];
	char *envp[4097];
	size_t len = 0, n = 0;
	ssize_t got;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: vm-envexec ENVFILE PROGRAM [ARG...]\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "vm-envexec: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	while (len < sizeof buf - 1 && (got = read(fd, buf + len, sizeof buf - 1 - len)) > 0)
		len += (size_t)got;
	close(fd);
	buf[len] = 0;
	for (size_t at = 0; at < len && n < sizeof envp / sizeof envp[0] - 1;) {
		char *e = buf + at;
		size_t l = strlen(e);
		if (l && strchr(e, '=') && e[0] != '=')
			envp[n++] = e;
		at += l + 1;
	}
	envp[n] = NULL;
	execve(argv[2], argv + 2, envp);
	fprintf(stderr, "vm-envexec: %s: %s\n", argv[2], strerror(errno));
	return 1;
}
