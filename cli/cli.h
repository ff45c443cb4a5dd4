/* sbx: shared configuration, exit codes and REST helpers. */
#ifndef CLI_H
#define CLI_H

#include <cJSON.h>

#include "cli_http.h"

/* sbx's own failures; exec, run and sh otherwise exit with the remote
 * command's status (128 + N for signal N). Listed in `sbx --help`. */
#define MAX_PORTS 16

enum cli_exit {
	CLI_OK = 0,
	/* the gateway refused: one status per class of docs/errors.md */
	CLI_EXIT_INVALID = 111,
	CLI_EXIT_UNAUTHORIZED = 112,
	CLI_EXIT_NOT_FOUND = 113,
	CLI_EXIT_CONFLICT = 114,
	CLI_EXIT_RATE_LIMITED = 115,
	CLI_EXIT_CAPACITY = 116,
	CLI_EXIT_UNAVAILABLE = 117,
	CLI_EXIT_USAGE = 120,       /* bad command line */
	CLI_EXIT_API = 121,         /* another error of the gateway (internal, a code sbx does not know) */
	CLI_EXIT_UNREACHABLE = 122, /* the gateway could not be reached */
	CLI_EXIT_CONN = 123,        /* connection lost or unexpected answer */
	CLI_EXIT_LOCAL = 124,       /* a local file or terminal error */
};

struct cli_cfg {
	struct cli_url url;
	const char *url_text;
	const char *key;
	int json;                   /* --json: print the gateway's JSON */
};

/* The classes of docs/errors.md (cli_errors.c). */
enum cli_err_class {
	CLI_ERR_OTHER,
	CLI_ERR_INVALID,
	CLI_ERR_UNAUTHORIZED,
	CLI_ERR_NOT_FOUND,
	CLI_ERR_CONFLICT,
	CLI_ERR_RATE_LIMITED,
	CLI_ERR_CAPACITY,
	CLI_ERR_UNAVAILABLE,
};

/* The class of an API error: by its code, else by its HTTP status. */
enum cli_err_class cli_err_class_of(int status, const char *code);

/* sbx's exit status for an API error (code may be NULL). */
int cli_exit_for_error(int status, const char *code);

/* Print "sbx: message" to stderr. */
void cli_errf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* An exit code for a failed request (unreachable or other), printed. */
int cli_fail_request(const struct cli_cfg *c, const struct sbx_err *err);

/* Print the gateway's {"error":{...}} from an error response (status) and
 * return the exit status of its class. Consumes and closes h. */
int cli_fail_status(struct cli_http *h, int status);

/* A request whose answer is a JSON object: returns 0 with *out (cJSON_Delete
 * it; NULL allowed when the caller does not want it), or an exit code after
 * printing why. body is JSON text or NULL. */
/* One JSON value on a line of stdout (--json output). */
int cli_print_json(const cJSON *j);
int cli_api_json(const struct cli_cfg *c, const char *method, const char *path,
		 const char *body, cJSON **out);

/* Milliseconds from "500ms", "30s", "10m", "2h" or bare seconds; -1 if bad. */
long long cli_parse_duration(const char *s);

/* URL-encode s into out (size n); -1 if it does not fit. */
int cli_urlencode(const char *s, char *out, size_t n);

/* 128 + the signal's number for a name like "SIGKILL"; 128 if unknown. */
int cli_signal_status(const char *name);

/* Write all of [p, p+n) to fd, waiting while it is non-blocking and full. */
int cli_write_all(int fd, const void *p, size_t n);

int cli_cmd_create(const struct cli_cfg *c, int argc, char **argv);
int cli_cmd_ls(const struct cli_cfg *c, int argc, char **argv);
int cli_cmd_images(const struct cli_cfg *c, int argc, char **argv);
int cli_cmd_stop(const struct cli_cfg *c, int argc, char **argv);
int cli_cmd_rm(const struct cli_cfg *c, int argc, char **argv);
int cli_cmd_url(const struct cli_cfg *c, int argc, char **argv);
int cli_cmd_exec(const struct cli_cfg *c, int argc, char **argv);
int cli_cmd_run(const struct cli_cfg *c, int argc, char **argv);
int cli_cmd_cp(const struct cli_cfg *c, int argc, char **argv);
int cli_cmd_logs(const struct cli_cfg *c, int argc, char **argv);
int cli_cmd_sh(const struct cli_cfg *c, int argc, char **argv);
int cli_cmd_net(const struct cli_cfg *c, int argc, char **argv);
int cli_cmd_errors(const struct cli_cfg *c, int argc, char **argv);
/* cli_snapshot.c */
int cli_cmd_snapshot(const struct cli_cfg *c, int argc, char **argv);
int cli_cmd_snapshots(const struct cli_cfg *c, int argc, char **argv);
int cli_cmd_fork(const struct cli_cfg *c, int argc, char **argv);
int cli_cmd_pause(const struct cli_cfg *c, int argc, char **argv);
int cli_cmd_resume(const struct cli_cfg *c, int argc, char **argv);

/* Create a sandbox from create's options (argv parsed from optind; image
 * NULL: the gateway's default); 0 with id filled, or an exit code. Used
 * by create and run. */
struct cli_create_opts {
	long long timeout_ms;       /* -1: the gateway's default */
	int ports[MAX_PORTS], nports;
	const char *image;          /* NULL: the gateway's default */
	const char *snapshot;       /* --snapshot ID: start from it (NULL: none) */
	int persistent;             /* --persistent: kept when stopped (docs/api.md) */
};
int cli_create_sandbox(const struct cli_cfg *c, const struct cli_create_opts *o, char *id,
		       size_t idlen, cJSON **obj);

int cli_parse_create_opts(int argc, char **argv, struct cli_create_opts *o, int *rest);

/* Run argv in sandbox id, streaming; returns the command's exit status or
 * an sbx exit code. */
int cli_exec_stream(const struct cli_cfg *c, const char *id, int argc, char **argv);

#endif
