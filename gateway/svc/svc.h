/* The service layer: each operation of the API once, with typed arguments,
 * for every front end (the /v1 REST handlers, the MCP tools, the
 * @vercel/sandbox routes). A front end fills a struct svc_call (who asks,
 * which sandbox, where answers go) and calls svc_*; the operation owns its
 * upstream (gw_up), placement and owner checks, and answers through the
 * call's sink: a JSON reply, an error as values (status, code, message;
 * the status is the REST one, the code the API's), or a stream of bytes.
 * Front ends are codecs: they read their wire format into svc arguments
 * and write the sink's calls out in theirs.
 *
 * Layer: above core (gw_up, owners, runners), below the front ends; it
 * knows nothing of HTTP transactions (struct gw_req) or lws sessions. */
#ifndef SVC_H
#define SVC_H
#include <stdint.h>
#include <stddef.h>
#include <cJSON.h>
#include "../core/gw.h"

struct svc_call;

/* What an operation remembers between the frames of its upstream. */
enum gw_op_phase {
	GW_OP_FIRST,            /* the first reply (exec, attach, read_file) not yet in */
	GW_OP_STREAMING,        /* after it: output, data, events */
	GW_OP_ANSWER_WHEN_SENT, /* POST stdin without eof: answered once it all went up */
};
enum gw_op_mode {
	GW_OP_PLAIN,
	GW_OP_CREATE,           /* a sandbox create: owner table and quota count */
	GW_OP_EXEC_DETACHED,    /* answered at the exec reply */
	GW_OP_EXEC_WAITED,      /* output collected to the exit */
	GW_OP_STDIN_EOF,        /* stdin, then EOF and the agent's answer */
	GW_OP_STDIN_OPEN,       /* stdin, answered once it went up */
	GW_OP_PTY,              /* a terminal: its exec reply names the command */
};
struct gw_op {
	enum gw_op_phase phase;
	enum gw_op_mode mode;
	int b64;                    /* output as base64 (a waited exec, logs) */
	struct sbx_buf out, err;    /* a waited exec's output */
	int out_trunc, err_trunc;
	cJSON *acc;                 /* an accumulated reply object */
	uint64_t logs_off;          /* ndjson logs: the next chunk's offset */
	int64_t file_size;          /* a file read: the size stat gave (0: says nothing) */
	int64_t file_got;           /* ... and the bytes of it taken so far */
	char wrap[16];              /* the member of the agent's reply to answer with */
	int limit;                  /* a list's page: at most this many */
	char cursor[96];            /* ... of ids after this one ("" from the start) */
};

/* Where a call's answers go. reply and fail are required; a call answers
 * exactly once with one of them, or streams (begin/data/event, then end). */
struct svc_sink {
	/* The answer (body consumed), status as REST gives it (200, 201). */
	void (*reply)(struct svc_call *c, int status, cJSON *body);
	/* A refusal or failure: REST status, the API's error code, a message. */
	void (*fail)(struct svc_call *c, int status, const char *code, const char *msg);
	/* A streamed answer starts: read_file with the size the agent gave
	 * (0: it said nothing), logs with -1. 0 to go on, -1 after failing. */
	int (*begin)(struct svc_call *c, int64_t size);
	/* Streamed bytes: SVC_DATA (a file's), SVC_STDOUT or SVC_STDERR (a
	 * command's output; also told during a waited exec when set). 0 to go
	 * on; nonzero ends the stream cut. */
	int (*data)(struct svc_call *c, int stream, const void *p, size_t n);
	/* logs: a {"exit_code","signal"} object (type "exit") or a
	 * {"truncated": bytes} gap (type "truncated"); o is not consumed. */
	int (*event)(struct svc_call *c, const char *type, const cJSON *o);
	/* The stream ended; cut when short of what it promised. */
	void (*end)(struct svc_call *c, int cut);
	/* Optional: nonzero while the front end can take no more (the
	 * upstream stops being read until svc_resume). */
	int (*full)(struct svc_call *c);
	/* Optional: a streamed upload's queue went below the watermark. */
	void (*drained)(struct svc_call *c);
	/* Optional: the data of one read of the upstream was all told; what
	 * it queued may go out now. */
	void (*flush)(struct svc_call *c);
	/* Optional: the call is waiting on something that may take long
	 * (a create being refreshed, an owner lookup). */
};

enum { SVC_DATA, SVC_STDOUT, SVC_STDERR };

typedef int (*svc_frame_cb)(struct svc_call *c, const struct sbx_frame *f);

/* One operation in progress. The front end sets the first group
 * (svc_call_init), svc_* the rest; svc_call_reset frees what an operation
 * left and keeps the first group, so one call may run steps in turn. */
struct svc_call {
	/* set by the front end */
	struct gw_vh *vh;
	struct lws *wsi;            /* its close closes the upstream (may be NULL) */
	const struct svc_sink *sink;
	void *owner;                /* the front end's */
	int key;                    /* the caller's key index */
	char sid[80], cid[80];
	/* arguments some operations take beyond their JSON */
	char path[4096];            /* files */
	long mode;                  /* write_file (-1, svc_call_init's: 0644) */
	size_t read_cap;            /* read_file: answer 413 past it (0: none) */
	int no_stdin;               /* a detached exec without a stdin pipe */
	int pieces;                 /* output may come in pieces of chunks (gw_up.h) */
	/* the operation's state */
	int answered;               /* reply or fail went out, or the stream began */
	int ended;                  /* the stream ended (or reply/fail) */
	struct gw_up up;
	svc_frame_cb on_frame;
	struct gw_op op;
	int create_pending;         /* creates counted in vh->creating[key] (a fork's: its count) */
	struct gw_owner_wait owner_wait;   /* a create waiting for the owner refresh */
	cJSON *held_body;           /* its body meanwhile */
	int refreshed;
	struct gw_place *place;
	struct gw_probe_wait probe_wait;   /* a create asking the runners not up again */
	int reprobed;               /* ... once */
	struct gw_fan *fan;
	struct gw_own_wait own_wait;
	void (*admitted)(struct svc_call *c);
	int step;                   /* a multi-step operation's position (snapshot
	                             * list: the runner asked; fork: the creates made) */
	int resumed;                /* the operation resumed a kept persistent
	                             * sandbox first (svc_agent; REST says so in
	                             * X-Sandbox-Resumed) */
	int resume_held;            /* counted as resuming c->sid (gw_owner_resume_hold)
	                             * until the runner's reply, or the call's end */
	int parent_closed;          /* lws closed the upstream with wsi (the front
	                             * end is going away): the fail or cut end
	                             * that follows is moot */
};

/* svc_call.c */
void svc_call_init(struct svc_call *c, struct gw_vh *vh, struct lws *wsi,
		   const struct svc_sink *sink, void *owner, int key);
/* Free what the last operation left (its upstream closes); keeps the
 * front end's fields. */
void svc_call_reset(struct svc_call *c);
/* Answer: once per operation (later answers are dropped). svc_fail
 * closes the upstream and returns -1. */
void svc_reply(struct svc_call *c, int status, cJSON *body);
int svc_fail(struct svc_call *c, int status, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A runner's or agent's {"ok":false,"error":{...}} as the API's error. */
void svc_runner_error(struct svc_call *c, const cJSON *reply);
/* Fail with a refusal of core's mapping (core/gw_refusal.h). */
struct gw_refusal;
void svc_fail_as(struct svc_call *c, const struct gw_refusal *why);
/* Streams: begin once, then data/event, then end (each a no-op after
 * the end). 0 to go on, -1 when the stream ended (cut). */
int svc_begin(struct svc_call *c, int64_t size);
int svc_data(struct svc_call *c, int stream, const void *p, size_t n);
void svc_end(struct svc_call *c, int cut);
/* The front end drained what it held: read the upstream again. */
void svc_resume(struct svc_call *c);

/* svc_up.c: the call's upstream (c->up): a runner op, or an agent op
 * through the runner's `connect` (straight to the agent's socket when
 * the gateway knows it). cb gets every frame after the runner's ok. 0, or
 * -1 after failing. */
int svc_runner(struct svc_call *c, cJSON *runner_req, svc_frame_cb cb);
int svc_agent(struct svc_call *c, cJSON *agent_req, svc_frame_cb cb);
/* The same on runner rn, for placement: 0 opened; GW_UP_ECONNECT or
 * GW_UP_EDOWN not answered (rn is down now); 1 answered (failed). */
int svc_runner_on(struct svc_call *c, struct gw_runner *rn, cJSON *req, svc_frame_cb cb);
/* A runner reply that says "resumed": the call resumed a kept sandbox
 * (c->resumed; it is live again). */
void svc_note_resumed(struct svc_call *c, const cJSON *reply);
/* The request that may resume c->sid (req consumed by the caller's open):
 * marked, and counted against the key's limit until the runner answered
 * (svc_resume_settled), so resumes racing for the last place are told
 * apart as creates are. explicit: the resume op itself (no "resume"). */
void svc_resume_mark(struct svc_call *c, cJSON *req, int explicit_op);
void svc_resume_settled(struct svc_call *c);
/* The call ended or failed without the runner's answer: it may have
 * resumed the sandbox, which then counts as live (gw_owner_resume_lost). */
void svc_resume_dropped(struct svc_call *c);
int svc_send(struct svc_call *c, enum sbx_frame_type t, const void *p, size_t n);
/* Parse a frame as a JSON object; with need_ok an error reply fails the
 * call. NULL after failing. */
cJSON *svc_reply_json(struct svc_call *c, const struct sbx_frame *f, int need_ok,
		      const char *what);

/* svc_place.c: place a create (req consumed) on a runner and send it. */
void svc_place_create(struct svc_call *c, cJSON *req, svc_frame_cb cb);
/* From the create's frame callback: reply the runner's error (NULL when
 * it closed without one): 0 not a refusal for want of room, 1 sent to
 * the next runner, 2 answered. */
int svc_place_retry(struct svc_call *c, const cJSON *reply);
void svc_place_taken(struct svc_call *c);

/* svc_admit.c: the caller's key may use sandbox c->sid. then(c) when it
 * may (at once, or after asking the sandbox's runner who owns it: a
 * sandbox made through another gateway); otherwise the call fails: 404
 * not_found (no such sandbox, or another key's: never told apart), 503
 * runner_unavailable when its runner could not be asked, 503
 * no_capacity when too many lookups are in flight. */
void svc_admit(struct svc_call *c, void (*then)(struct svc_call *c));
/* The same without waiting: 1 known and the key's; 0 unknown here (ask
 * with svc_admit); -1 after failing (another key's). */
int svc_admit_known(struct svc_call *c);

/* svc_sandbox.c. body: the API's JSON (consumed). */
void svc_create(struct svc_call *c, cJSON *body);
/* The caller's sandboxes, a page of them in id order: at most limit
 * (1..SVC_LIST_MAX) after cursor (NULL: from the start); "next_cursor"
 * in the reply continues it (null at the end). svc_list: the first page
 * of SVC_LIST_DEFAULT. */
#define SVC_LIST_DEFAULT 100
#define SVC_LIST_MAX 1000
void svc_list_page(struct svc_call *c, int limit, const char *cursor);
void svc_list(struct svc_call *c);
void svc_get(struct svc_call *c);
/* svc_stop ends a sandbox for good (a persistent one's kept files too);
 * svc_stop_keep keeps a persistent one (docs/api.md), else the same. */
void svc_stop(struct svc_call *c);
void svc_stop_keep(struct svc_call *c);
void svc_extend(struct svc_call *c, cJSON *body);
/* body {"network": policy}: the sandbox object with it */
void svc_network(struct svc_call *c, cJSON *body);
/* svc_network.c: the egress log entries after seq since, each an
 * event (type "entry") of a stream begun with size -1 */
void svc_network_log(struct svc_call *c, int64_t since);
void svc_capabilities(struct svc_call *c);
/* A runner's {"sandbox":...} reply as the API's object, answered with
 * status (a create's mode adds it to the owner table). 1 answered, -1 failed. */
int svc_sandbox_reply(struct svc_call *c, const struct sbx_frame *f, int status);
cJSON *svc_sandbox_public(struct gw_vh *vh, const cJSON *s);
/* svc_snapshot.c: snapshots (docs/api.md), owned by the key like
 * sandboxes; a snapshot id names its runner (snp_<runner>_<random>). */
void svc_snapshot_take(struct svc_call *c, cJSON *body);   /* of c->sid */
void svc_snapshots(struct svc_call *c);
void svc_snapshot_get(struct svc_call *c);                 /* c->cid names it */
void svc_snapshot_delete(struct svc_call *c);
/* A create's "source" member (detached from body): 0 with the snapshot
 * id in out ("" none), -1 after failing 422. */
int svc_snapshot_source(struct svc_call *c, cJSON *body, char *out, size_t n);
/* Send a create from snapshot snap (req consumed) to its runner. */
void svc_snapshot_place(struct svc_call *c, const char *snap, cJSON *req, svc_frame_cb cb);
/* svc_pause.c: pause and resume of c->sid; fork: a snapshot of c->sid and
 * {"count":N} creates from it with its settings and without its env. */
void svc_sandbox_pause(struct svc_call *c);
void svc_sandbox_resume(struct svc_call *c);
void svc_fork(struct svc_call *c, cJSON *body);
/* svc_images.c: {"images":[{name, created_at, os, runtimes}...]} */
void svc_images(struct svc_call *c);
/* svc_images.c: the image named c->cid goes from the runner: 204, 409
 * conflict while a sandbox uses it (and for "default"), 404 unknown. */
void svc_image_delete(struct svc_call *c);
/* svc_image_import.c: POST /v1/images. pull: the body is {"ref","name"}
 * JSON (fed by data, sent at done); else the body is the archive, streamed
 * to the runner. The name is in c->path. */
void svc_image_import_start(struct svc_call *c, int pull);
void svc_image_import_data(struct svc_call *c, const void *p, size_t n);
void svc_image_import_done(struct svc_call *c);

/* svc_command.c */
void svc_exec(struct svc_call *c, cJSON *body);
void svc_commands(struct svc_call *c);
/* wait: answer at the command's exit */
void svc_command_get(struct svc_call *c, int wait);
void svc_kill(struct svc_call *c, cJSON *body);
/* One agent request (consumed; "op" defaults to "commands"), answered
 * with its reply, or with its member wrap when given: the step a front
 * end's compound operation is made of (mkdir -p of a cwd, a stat, a move). */
void svc_agent_op(struct svc_call *c, cJSON *agent_req, const char *wrap);
/* stdin: svc_stdin_start, svc_stdin_data per chunk, svc_stdin_done; with
 * eof the agent closes the command's stdin and answers; without, the
 * answer comes once every byte went up. */
void svc_stdin_start(struct svc_call *c, int eof);
void svc_stdin_data(struct svc_call *c, const void *p, size_t n);
void svc_stdin_done(struct svc_call *c);
/* A stdin that stays open (a WebSocket session's writer): svc_stdin_data
 * per chunk, svc_send(SBX_FRAME_EOF) closes it. An error of the agent's
 * fails the call; the command's exit with every byte sent answers 200 {}
 * (the agent's conflict then is the writer's normal end). */
void svc_stdin_stream(struct svc_call *c);

/* svc_logs.c: the command's output from byte since, to its exit with
 * follow (else what existed), as sink data (SVC_STDOUT/SVC_STDERR) and
 * events ("truncated", "exit"). c->op.logs_off is each chunk's offset. */
void svc_logs(struct svc_call *c, int64_t since, int follow);
/* A terminal: cmd (NULL or "": a login bash) on a cols x rows PTY as the
 * sandbox user in its home, attached, hung up when the call's upstream
 * closes. Its output streams as svc_logs' does; the exec reply names the
 * command (c->cid, set before the stream begins); keystrokes go up with
 * svc_send (SBX_FRAME_STDIN). */
void svc_pty(struct svc_call *c, const char *cmd, int cols, int rows);

/* svc_files.c: c->path names the file (and c->mode a write's mode) */
void svc_read_file(struct svc_call *c);
void svc_write_file_start(struct svc_call *c);
void svc_write_file_data(struct svc_call *c, const void *p, size_t n);
void svc_write_file_done(struct svc_call *c);
void svc_mkdir(struct svc_call *c, cJSON *body);
void svc_list_files(struct svc_call *c);

/* svc_collect.c: a sink that keeps the whole answer, for front ends that
 * answer once the operation is over (MCP, the Vercel routes): done(c, a)
 * is called once, with the status and either the reply's JSON or the
 * error's code and message, or a bounded read's bytes, or for logs the
 * exit object (json) once the command ended. a is valid only
 * during done; a->json may be taken (set it to NULL). */
struct svc_answer {
	int status;
	cJSON *json;                /* the reply (NULL for an error or bytes) */
	const char *code, *msg;     /* an error (status >= 400) */
	const unsigned char *bytes; /* a read's content */
	size_t len;
	int cut;                    /* a stream ended early */
	int gap;                    /* logs: output was dropped before it could be sent */
};
struct svc_collect {
	struct svc_call call;
	void (*done)(struct svc_collect *k, struct svc_answer *a);
	/* optional: each output chunk (of a waited exec, of logs) as it
	 * comes; nonzero ends the stream there (cut) */
	int (*output)(struct svc_collect *k, int is_stderr, const void *p, size_t n);
	/* optional: a streamed upload's queue went below the watermark */
	void (*drained)(struct svc_collect *k);
	struct sbx_buf bytes;
	int status;
	int pending;                /* an answer is kept until done runs */
	cJSON *json;
	char code[32], msg[600];
	int cut, gap;
	/* done runs from the event loop, never inside the upstream's own
	 * callback (done may start the next step on the same call) */
	lws_sorted_usec_list_t sul;
};
extern const struct svc_sink svc_collect_sink;
/* Ready k for its first step (svc_call_init for its call, with this sink). */
void svc_collect_init(struct svc_collect *k, struct gw_vh *vh, struct lws *wsi, void *owner,
		      int key);
/* Ready k for a step: what the last one left is freed, done set. */
void svc_collect_step(struct svc_collect *k,
		      void (*done)(struct svc_collect *k, struct svc_answer *a));
/* Drop the step in flight (its upstream closes; done is not called). */
void svc_collect_cancel(struct svc_collect *k);
void svc_collect_free(struct svc_collect *k);
#endif
