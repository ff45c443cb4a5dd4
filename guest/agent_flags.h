/* sandbox-agent's command line (agent_flags.c): one table gives the flags,
 * their checks and the usage synopsis. */
#ifndef AGENT_FLAGS_H
#define AGENT_FLAGS_H

#include <stddef.h>

#include "sbx_log.h"

struct ag_flags {
	const char *listen;             /* unix:PATH or vsock:PORT */
	size_t retention;               /* bytes of output kept per command */
	enum sbx_log_level log_level;
	int hangup_on_eof;
	const char *workdir;            /* NULL: /home/sandbox, else the cwd */
	size_t ready_fd;                /* closed once listening; 0: none */
};

/* Fill f from argv (defaults first); --unsetenv takes its name out of the
 * environment at once. A bad command line prints the usage and exits 2. */
void ag_flags_parse(struct ag_flags *f, int argc, char **argv);

/* Print the usage on stderr and exit 2. */
void ag_usage(void) __attribute__((noreturn));

#endif
