/* Fork and exec one command in its own session; see agent_spawn.c. */
#ifndef AGENT_SPAWN_H
#define AGENT_SPAWN_H

#include <stdint.h>
#include <sys/types.h>

struct ag_spawn {
	char **argv;          /* argv[0] is the command, resolved via PATH */
	char **env;           /* "K=V" from the request, may be NULL */
	const char *cwd;      /* absolute */
	int64_t uid, gid;     /* -1 = keep */
	int want_stdin;       /* else stdin is /dev/null */
	int pty;
	int64_t cols, rows;
};

struct ag_spawned {
	pid_t pid;
	int out, err, in;     /* non-blocking, O_CLOEXEC; PTY: out = master */
};

/* Returns 0, or -1 with errno when pipes/pty/fork fail (exec failures are
 * the child's exit status 126/127 instead). */
int ag_spawn(const struct ag_spawn *s, struct ag_spawned *r);

#endif
