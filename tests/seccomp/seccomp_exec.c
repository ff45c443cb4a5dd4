/* sandbox-seccomp-exec: run a command under the jail's seccomp policy
 * without the runner, to test the policy on its own.
 *
 *   sandbox-seccomp-exec [--chroot DIR] [--chdir DIR] [--host-exec]
 *                        [--debug] [--log] [--] COMMAND [ARG...]
 *   sandbox-seccomp-exec --info
 *
 * Order, as in the jail's child: chroot/chdir, PR_SET_NO_NEW_PRIVS, the
 * policy, exec. --host-exec opens COMMAND before the chroot and runs it
 * with fexecve, so a static test binary from the build tree can run inside
 * an image. --debug allows ptrace (strace, gdb); --log turns filter A's
 * default into "allow and log" for validating a workload (see
 * docs/seccomp.md). --info prints the compiled filter sizes and exits. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "../../runner/driver_jail_seccomp.h"

extern char **environ;

static int usage(void)
{
	fprintf(stderr,
		"usage: sandbox-seccomp-exec [--chroot DIR] [--chdir DIR] [--host-exec]\n"
		"                            [--debug] [--log] [--] COMMAND [ARG...]\n"
		"       sandbox-seccomp-exec --info\n");
	return 2;
}

static int info(void)
{
	struct jail_seccomp_prog prog;
	struct sbx_err err = { 0 };

	if (jail_seccomp_compile(&prog, 0, &err) < 0) {
		fprintf(stderr, "sandbox-seccomp-exec: %s\n", err.msg);
		return 1;
	}
	printf("policy %s: filter A %u insns, filter B %u insns, %d names skipped\n",
	       JAIL_SECCOMP_POLICY, prog.len[0], prog.len[1], prog.skipped);
	jail_seccomp_free(&prog);
	return 0;
}

int main(int argc, char **argv)
{
	const char *root = NULL, *dir = NULL;
	int host_exec = 0, i, fd = -1;
	unsigned flags = 0;
	struct jail_seccomp_prog prog;
	struct sbx_err err = { 0 };

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		} else if (strcmp(argv[i], "--info") == 0) {
			return info();
		} else if (strcmp(argv[i], "--chroot") == 0 && i + 1 < argc) {
			root = argv[++i];
		} else if (strcmp(argv[i], "--chdir") == 0 && i + 1 < argc) {
			dir = argv[++i];
		} else if (strcmp(argv[i], "--host-exec") == 0) {
			host_exec = 1;
		} else if (strcmp(argv[i], "--debug") == 0) {
			flags |= JAIL_SECCOMP_DEBUG;
		} else if (strcmp(argv[i], "--log") == 0) {
			flags |= JAIL_SECCOMP_LOG;
		} else {
			return usage();
		}
	}
	if (i >= argc)
		return usage();

	/* Compile before chroot: nothing after this point needs files. */
	if (jail_seccomp_compile(&prog, flags, &err) < 0) {
		fprintf(stderr, "sandbox-seccomp-exec: %s\n", err.msg);
		return 1;
	}
	if (host_exec) {
		fd = open(argv[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "sandbox-seccomp-exec: %s: %s\n", argv[i], strerror(errno));
			return 127;
		}
	}
	if (root && (chroot(root) < 0 || chdir("/") < 0)) {
		fprintf(stderr, "sandbox-seccomp-exec: chroot %s: %s\n", root, strerror(errno));
		return 1;
	}
	if (dir && chdir(dir) < 0) {
		fprintf(stderr, "sandbox-seccomp-exec: chdir %s: %s\n", dir, strerror(errno));
		return 1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		fprintf(stderr, "sandbox-seccomp-exec: no_new_privs: %s\n", strerror(errno));
		return 1;
	}
	if (jail_seccomp_load(&prog, &err) < 0) {
		fprintf(stderr, "sandbox-seccomp-exec: %s\n", err.msg);
		return 1;
	}
	if (fd >= 0)
		fexecve(fd, argv + i, environ);
	else
		execvp(argv[i], argv + i);
	fprintf(stderr, "sandbox-seccomp-exec: exec %s: %s\n", argv[i], strerror(errno));
	return 127;
}
