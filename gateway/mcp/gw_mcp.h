/* The MCP endpoint's internal interface (gw_mcp.c: transport and JSON-RPC;
 * gw_mcp_tools.c: the tools; gw_mcp_session.c: Mcp-Session-Id). */
#ifndef GW_MCP_H
#define GW_MCP_H
#include "../http/gw_req.h"
#include "../svc/svc.h"

#define GW_MCP_BODY_CAP      (1024 * 1024)   /* a POST /mcp body */
#define GW_MCP_READ_CAP      (1024 * 1024)   /* read_file, command_output */
#define GW_MCP_MAX_FILES     64              /* write_files in one call */
#define GW_MCP_PROGRESS_CAP  (2 * 1024 * 1024) /* output sent as progress */

/* JSON-RPC 2.0 error codes */
enum { RPC_PARSE = -32700, RPC_INVALID_REQUEST = -32600, RPC_NO_METHOD = -32601,
       RPC_INVALID_PARAMS = -32602, RPC_INTERNAL = -32603 };

struct gw_mcp_tool;

/* One tools/call in progress on a POST /mcp request: its steps are
 * operations of the service layer on k, whose answers come whole. */
struct gw_mcp_call {
	struct gw_req *r;               /* the POST /mcp it answers */
	cJSON *id;                      /* the JSON-RPC id */
	const struct gw_mcp_tool *tool;
	cJSON *args;                    /* its validated arguments */
	struct svc_collect k;           /* the step in flight */
	int step;                       /* write_files: the file being written */
	cJSON *acc;                     /* a result being built over steps */
	struct sbx_buf data;            /* write_files: the file's bytes; command_output:
					 * stdout and stderr as they come */
	struct sbx_buf data2;
	double next_since;              /* command_output: where the next call starts */
	cJSON *progress;                /* the client's progressToken, or NULL */
	int sse;                        /* answering as an SSE stream */
	double progress_bytes;          /* output notified so far */
};

/* gw_mcp_tools.c */
cJSON *gw_mcp_tools_list(void);
const struct gw_mcp_tool *gw_mcp_tool_find(const char *name);
const char *gw_mcp_tool_name(const struct gw_mcp_tool *t);
/* Check args against the tool's input schema: NULL, or why not (static). */
const char *gw_mcp_tool_check(const struct gw_mcp_tool *t, const cJSON *args,
			      char *why, size_t whylen);
/* 1 when the tool sends progress notifications (run_command) */
int gw_mcp_tool_streams(const struct gw_mcp_tool *t);
/* Start the call's first step; its answers go to gw_mcp_step_done. */
void gw_mcp_tool_start(struct gw_mcp_call *c);
/* A step of the call ended: NULL when another one was started, else the
 * tools/call result (isError set for a tool error). */
cJSON *gw_mcp_tool_step(struct gw_mcp_call *c, struct svc_answer *a);

/* gw_mcp.c: a step's answer (the collecting sink's done) */
void gw_mcp_step_done(struct svc_collect *k, struct svc_answer *a);
/* run_command's output as progress notifications, when the client asked */
int gw_mcp_progress(struct svc_collect *k, int is_stderr, const void *p, size_t n);

/* gw_mcp_session.c: a session is bound to the key that opened it. */
int gw_mcp_session_new(int key, const char *proto, char id[33]);
/* 1 when id is a live session of key (and refreshes it), 0 otherwise */
int gw_mcp_session_check(const char *id, int key);
int gw_mcp_session_end(const char *id, int key);
/* gw_mcp.c: POST and DELETE /mcp (docs/mcp.md), rows of the route table */
void gw_mcp_post(struct gw_req *r);
void gw_mcp_delete(struct gw_req *r);
void gw_mcp_body_done(struct gw_req *r);
/* gw_mcp_session.c: at most max_per_key sessions per key, each key's least
 * recently used one replaced (--mcp-sessions-per-key); 0, or -1 */
#define GW_MCP_SESSIONS_PER_KEY      64
#define GW_MCP_SESSIONS_PER_KEY_MAX  1024
int gw_mcp_sessions_configure(int max_per_key);

#endif
