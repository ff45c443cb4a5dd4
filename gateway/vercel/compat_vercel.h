/* The @vercel/sandbox compatibility surface (/v2 and /v3, docs/vercel.md):
 * the SDK's wire format translated to operations of the service layer
 * (svc.h), as the /v1 handlers and the MCP tools are, so sandboxes,
 * commands and files go through the same checks, quotas and ownership.
 *   compat_vercel_route.c  paths, auth, bodies, the call's steps, errors
 *   compat_vercel_shape.c  the SDK's JSON shapes; what we keep of commands
 *   compat_vercel_box.c    sandboxes and sessions
 *   compat_vercel_cmd.c    commands, ndjson output lines
 *   compat_vercel_fs.c     fs/read, fs/mkdir, fs/write (staging, move)
 *   compat_vercel_tar.c    streaming gzip + tar reader (no I/O) */
#ifndef COMPAT_VERCEL_H
#define COMPAT_VERCEL_H
#include "../http/gw_req.h"
#include "../svc/svc.h"

#define CV_CWD             "/vercel/sandbox"   /* the SDK's default cwd */
#define CV_WRITE_MAX_BYTES (256ull * 1024 * 1024) /* fs/write: tar bytes after gunzip */
#define CV_WRITE_MAX_FILES 10000                  /* fs/write: entries */
#define CV_MANIFEST_CAP    (4 * 1024 * 1024)      /* fs/write: names kept for the move */
#define CV_CMD_TABLE       1024                   /* commands whose name/args we keep */

struct cv_call;
struct cv_write;
struct cv_op;

/* What a step answered: its reply, or an error as values. */
struct cv_answer {
	int status;
	cJSON *json;                /* the reply (NULL for an error) */
	const char *code, *msg;     /* an error (status >= 400) */
};

/* A step's continuation: called with the answer of the operation it
 * started. It starts another step or answers r. */
typedef void (*cv_step_fn)(struct gw_req *r, struct cv_call *c, struct cv_answer *a);

struct cv_call {
	int op;                     /* a flag of the operation (resume, sessions, the shape) */
	int session_op;             /* an answer 409 may mean "stopped": ask (410) */
	struct svc_collect k;        /* the step in flight (an operation of svc.h) */
	cv_step_fn next;            /* what its answer goes to; NULL: none in flight */
	int put_full;               /* fs/write: the pump waits for the upload's queue */
	char path[4096];            /* fs/read: the file */
	cv_step_fn after_check;     /* the step a stopped-check interrupted */
	cJSON *body;                /* the client's JSON body */
	cJSON *keep;                /* what earlier steps learnt */
	int err_status;             /* an error waiting for the stopped-check */
	char err_code[32], err_msg[600];
	char sid[80], cid[80];
	struct cv_write *w;         /* fs/write in progress */
	/* ndjson output: an incomplete UTF-8 sequence per stream */
	unsigned char carry[2][4];
	size_t ncarry[2];
	int want_logs;
	/* fs/write's pump runs from the event loop once the upload's queue
	 * drained: lws gives r no WRITEABLE while its body is still coming */
	lws_sorted_usec_list_t sul;
	struct gw_req *r;
};

/* compat_vercel_route.c: the handlers of the /v2 and /v3 rows of the
 * route table (JSON rows take the parsed body) */
void cv_h_json(struct gw_req *r, cJSON *body);   /* the row's .ctx: a struct cv_op */
extern const struct cv_op cv_op_create, cv_op_list, cv_op_sessions, cv_op_box_get,
	cv_op_box_delete, cv_op_session_get, cv_op_stop, cv_op_extend, cv_op_network,
	cv_op_cmd_run, cv_op_cmd_get, cv_op_cmd_logs, cv_op_cmd_kill, cv_op_fs_read,
	cv_op_fs_mkdir, cv_op_snapshot, cv_op_snap_get, cv_op_snap_delete, cv_op_snap_list,
	cv_op_fork;
void cv_h_fs_write_start(struct gw_req *r);
void cv_h_fs_write_data(struct gw_req *r, const void *p, size_t n);
void cv_h_fs_write_done(struct gw_req *r);
void cv_h_no_snapshots(struct gw_req *r);
void cv_h_no_drives(struct gw_req *r);
void cv_h_no_update(struct gw_req *r);
void cv_h_no_interactive(struct gw_req *r);
/* A step of r on c's sandbox: the call to run one operation on; its
 * answer goes to next. */
struct svc_call *cv_step(struct cv_call *c, cv_step_fn next);
/* Answer r with the error a step gave (its status, code and message). */
void cv_fail_answer(struct gw_req *r, const struct cv_answer *a);
int cv_error(struct gw_req *r, int status, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* An absolute path from path and cwd (default CV_CWD); -1 when too long or
 * cwd is relative (answered 400). */
/* A query flag of r: "true" (or "1" when one) */
int cv_query_true(struct gw_req *r, const char *name, int one);
int cv_resolve(struct gw_req *r, const char *path, const char *cwd, char *out, size_t n);

/* compat_vercel_shape.c */
cJSON *cv_session(const struct gw_vh *vh, const cJSON *s);
cJSON *cv_sandbox(const struct gw_vh *vh, const cJSON *s);
cJSON *cv_routes(const struct gw_vh *vh, const cJSON *s);
/* {"command":{...}} from the agent's command object and what we kept */
cJSON *cv_command(const char *sid, const cJSON *agent_cmd);
void cv_cmd_remember(const char *sid, const char *cid, const char *name,
		     const cJSON *args, const char *cwd, double started_at);
/* The command's exit code as the SDK wants it (128 + n for a signal). */
double cv_exit_code(const cJSON *exit_code, const cJSON *signal);

/* compat_vercel_box.c */
void cv_box_create(struct gw_req *r, struct cv_call *c);
void cv_box_get(struct gw_req *r, struct cv_call *c);
void cv_box_fork(struct gw_req *r, struct cv_call *c);
void cv_box_list(struct gw_req *r, struct cv_call *c);
void cv_session_get(struct gw_req *r, struct cv_call *c);
void cv_session_stop(struct gw_req *r, struct cv_call *c);
void cv_session_extend(struct gw_req *r, struct cv_call *c);
void cv_session_network(struct gw_req *r, struct cv_call *c);

/* compat_vercel_snap.c */
void cv_session_snapshot(struct gw_req *r, struct cv_call *c);
void cv_snap_get(struct gw_req *r, struct cv_call *c);
void cv_snap_delete(struct gw_req *r, struct cv_call *c);   /* c->op set: "deleted" */
void cv_snap_list(struct gw_req *r, struct cv_call *c);
/* compat_vercel_cmd.c */
void cv_cmd_run(struct gw_req *r, struct cv_call *c);
void cv_cmd_get(struct gw_req *r, struct cv_call *c);
void cv_cmd_logs(struct gw_req *r, struct cv_call *c);
void cv_cmd_kill(struct gw_req *r, struct cv_call *c);

/* compat_vercel_fs.c */
void cv_fs_read(struct gw_req *r, struct cv_call *c);
void cv_fs_mkdir(struct gw_req *r, struct cv_call *c);
int cv_fs_write_start(struct gw_req *r, struct cv_call *c);
void cv_fs_write_data(struct gw_req *r, struct cv_call *c, const void *in, size_t len);
void cv_fs_write_done(struct gw_req *r, struct cv_call *c);
void cv_fs_write_pump(struct gw_req *r, struct cv_call *c);
void cv_fs_write_free(struct cv_write *w);
#endif
