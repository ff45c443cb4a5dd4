/* Parsing of a connection's first frame (a JSON request) into a validated
 * struct. Pure: no I/O, so it is unit-tested and fuzzed
 * (tests/fuzz/fuzz_agent_request.c). */
#ifndef AGENT_REQ_H
#define AGENT_REQ_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "sbx_err.h"

enum ag_op {
	AG_OP_PING, AG_OP_EXEC, AG_OP_ATTACH, AG_OP_STDIN, AG_OP_STDIN_EOF,
	AG_OP_SIGNAL, AG_OP_STATUS, AG_OP_WAIT, AG_OP_COMMANDS, AG_OP_RESIZE,
	AG_OP_WRITE_FILE, AG_OP_READ_FILE, AG_OP_MKDIR, AG_OP_LIST, AG_OP_STAT,
	AG_OP_FORWARD, AG_OP_IDLE, AG_OP_QUIESCE
};

#define AG_ARGS_MAX 4096
#define AG_ENV_MAX 4096

struct ag_req {
	enum ag_op op;
	cJSON *root;            /* owns every string below */
	const char *id;         /* command id (exec: optional client-chosen) */
	const char *cmd;
	char **argv;            /* NULL-terminated, argv[0] = cmd; malloc'd array */
	char **env;             /* NULL-terminated "K=V" (malloc'd) or NULL */
	const char *cwd;
	const char *path;
	int64_t uid, gid;       /* -1 = unchanged */
	int64_t mode;           /* -1 = default */
	int64_t offset;
	int64_t cols, rows;     /* 0 = unset */
	int64_t port;
	int sig;
	int want_stdin, pty, attach, parents;
	int follow;             /* attach: 1 (default) live until exit */
	int hangup;             /* exec: SIGHUP when the attached client leaves */
	int64_t timeout_ms;     /* exec: SIGKILL its process group after this; 0 = none */
};

/* Parse [p, p+n). Returns 0 and fills r (free with ag_req_free), or -1 with
 * err set (the message is safe to return to the client). */
int ag_req_parse(const void *p, size_t n, struct ag_req *r, struct sbx_err *err);
void ag_req_free(struct ag_req *r);

/* "SIGTERM", "TERM" or a number (as a JSON string or number) -> signal
 * number; -1 if unknown. */
int ag_signal_from_name(const char *s);
/* Signal number -> "SIGTERM" etc., or NULL. */
const char *ag_signal_name(int sig);

#endif
