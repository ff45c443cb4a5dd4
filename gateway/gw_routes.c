/* The route table: every endpoint of the gateway, one row each (gw_route.h
 * says what a row holds). Adding an endpoint is adding a row here: an
 * operation of the service layer (svc.h) reaches REST with
 * GW_REST_PLAIN/GW_REST_JSON and a handler of its front end otherwise.
 * The composition root: it names the handlers of every front end. */
#include "http/gw_req.h"
#include "api/gw_rest.h"
#include "mcp/gw_mcp.h"
#include "vercel/compat_vercel.h"
#include "gw_routes.h"

/* The query arguments each endpoint takes; any other is refused. */
static const char *const no_args[] = { NULL };
static const char *const list_args[] = { "limit", "cursor", NULL };
static const char *const put_args[] = { "path", "mode", NULL };
static const char *const path_args[] = { "path", NULL };
static const char *const image_args[] = { "name", NULL };
static const char *const wait_args[] = { "wait", NULL };
static const char *const eof_args[] = { "eof", NULL };
static const char *const logs_args[] = { "since", "follow", "encoding", NULL };
static const char *const stream_args[] = { "since", "access_token", NULL };
static const char *const since_args[] = { "since", NULL };
static const char *const pty_args[] = { "cmd", "cols", "rows", "access_token", NULL };

#define SBX "/v1/sandboxes/{sid}"
#define CMD SBX "/commands/{cid}"
#define V2 "/v2/sandboxes"
#define VS V2 "/sessions/{sid}"
#define KEY .auth = GW_AUTH_KEY
#define JSON .body = GW_BODY_JSON

const struct gw_route gw_routes[] = {
	{ NULL, "/healthz", .start = gw_healthz },
	{ NULL, "/metrics", .start = gw_metrics_get },
	{ "GET", "/v1/openapi.json", .args = no_args, .start = gw_openapi_get },
	{ "POST", "/mcp", .auth = GW_AUTH_KEY_CHALLENGE, .body = GW_BODY_RAW,
	  .body_cap = GW_MCP_BODY_CAP, .start = gw_mcp_post, .done = gw_mcp_body_done },
	{ "DELETE", "/mcp", .auth = GW_AUTH_KEY_CHALLENGE, .start = gw_mcp_delete },
	{ "GET", "/v1/capabilities", KEY, .args = no_args, GW_REST_PLAIN(svc_capabilities) },
	{ "GET", "/v1/images", KEY, .args = no_args, GW_REST_PLAIN(svc_images) },
	{ "POST", "/v1/images", KEY, .body = GW_BODY_STREAM, .body_cap = GW_IMAGE_BODY_CAP,
	  .args = image_args, .start = gw_images_post_start, .data = gw_images_post_data,
	  .done = gw_images_post_done },
	{ "DELETE", "/v1/images/{name}", KEY, .args = no_args, GW_REST_PLAIN(svc_image_delete) },
	{ "GET", "/v1/runners", .auth = GW_AUTH_KEY_OR_OPERATOR, .args = no_args, .start = gw_runners_list },
	{ "POST", "/v1/sandboxes", KEY, JSON, .args = no_args, GW_REST_JSON(svc_create) },
	{ "GET", "/v1/sandboxes", KEY, .args = list_args, .start = gw_sandboxes_list },
	{ "GET", SBX, KEY, .args = no_args, GW_REST_PLAIN(svc_get) },
	{ "DELETE", SBX, KEY, .args = no_args, GW_REST_PLAIN(svc_stop) },
	{ "POST", SBX "/stop", KEY, .args = no_args, GW_REST_PLAIN(svc_stop_keep) },
	{ "POST", SBX "/extend", KEY, JSON, .args = no_args, GW_REST_JSON(svc_extend) },
	{ "POST", SBX "/token", KEY, JSON, .args = no_args, .json = gw_token_create },
	{ "PATCH", SBX "/network", KEY, JSON, .args = no_args, GW_REST_JSON(svc_network) },
	{ "GET", SBX "/network/log", KEY, .args = since_args, .start = gw_network_log },
	/* snapshots, fork, pause (svc_snapshot.c, svc_pause.c); {cid} holds a
	 * snapshot id: the router's second id, never a sandbox to admit */
	{ "POST", SBX "/snapshots", KEY, JSON, .args = no_args, GW_REST_JSON(svc_snapshot_take) },
	{ "POST", SBX "/fork", KEY, JSON, .args = no_args, GW_REST_JSON(svc_fork) },
	{ "POST", SBX "/pause", KEY, .args = no_args, GW_REST_PLAIN(svc_sandbox_pause) },
	{ "POST", SBX "/resume", KEY, .args = no_args, GW_REST_PLAIN(svc_sandbox_resume) },
	{ "GET", "/v1/snapshots", KEY, .args = no_args, GW_REST_PLAIN(svc_snapshots) },
	{ "GET", "/v1/snapshots/{cid}", KEY, .args = no_args, GW_REST_PLAIN(svc_snapshot_get) },
	{ "DELETE", "/v1/snapshots/{cid}", KEY, .args = no_args, GW_REST_PLAIN(svc_snapshot_delete) },
	{ NULL, SBX "/pty", KEY, .args = pty_args, .ws = GW_WS_PTY, .ws_scope = GW_SCOPE_TERMINAL },
	{ "PUT", SBX "/files", KEY, .body = GW_BODY_STREAM, .body_cap = GW_FILE_BODY_CAP,
	  .args = put_args, .start = gw_files_put_start, .data = gw_files_put_data,
	  .done = gw_files_put_done },
	{ "GET", SBX "/files", KEY, .args = path_args, .start = gw_files_get },
	{ "POST", SBX "/files/mkdir", KEY, JSON, .args = no_args, GW_REST_JSON(svc_mkdir) },
	{ "GET", SBX "/files/list", KEY, .args = path_args, .start = gw_files_list },
	{ "POST", SBX "/commands", KEY, JSON, .args = no_args, GW_REST_JSON(svc_exec) },
	{ "GET", SBX "/commands", KEY, .args = no_args, GW_REST_PLAIN(svc_commands) },
	{ "GET", CMD, KEY, .args = wait_args, .start = gw_cmd_get },
	{ "POST", CMD "/kill", KEY, JSON, .args = no_args, GW_REST_JSON(svc_kill) },
	{ "POST", CMD "/stdin", KEY, .body = GW_BODY_STREAM, .body_cap = SBX_FRAME_MAX,
	  .args = eof_args, .start = gw_cmd_stdin_start, .data = gw_cmd_stdin_data,
	  .done = gw_cmd_stdin_done },
	{ "GET", CMD "/logs", KEY, .args = logs_args, .start = gw_cmd_logs },
	{ NULL, CMD "/stream", KEY, .args = stream_args, .ws = GW_WS_STREAM, .ws_scope = GW_SCOPE_READ },
	/* the @vercel/sandbox surface (compat_vercel*.c, docs/vercel.md): its
	 * query arguments (teamId, projectId...) are not checked */
	{ "POST", "/v3/sandboxes", KEY, JSON, .json = cv_h_json, .ctx = &cv_op_create },
	{ "POST", V2, KEY, JSON, .json = cv_h_json, .ctx = &cv_op_create },
	{ "GET", V2, KEY, JSON, .json = cv_h_json, .ctx = &cv_op_list },
	{ "GET", V2 "/snapshots", KEY, JSON, .json = cv_h_json, .ctx = &cv_op_snap_list },
	{ "GET", V2 "/snapshots/{cid}", KEY, JSON, .json = cv_h_json, .ctx = &cv_op_snap_get },
	{ "DELETE", V2 "/snapshots/{cid}", KEY, JSON, .json = cv_h_json, .ctx = &cv_op_snap_delete },
	{ NULL, V2 "/snapshots", .prefix = 1, KEY, .start = cv_h_no_snapshots },
	{ NULL, V2 "/drives", .prefix = 1, KEY, .start = cv_h_no_drives },
	{ "GET", V2 "/sessions", KEY, JSON, .json = cv_h_json, .ctx = &cv_op_sessions },
	{ "GET", VS, KEY, JSON, .json = cv_h_json, .ctx = &cv_op_session_get },
	{ "POST", VS "/cmd", KEY, JSON, .json = cv_h_json, .ctx = &cv_op_cmd_run },
	{ "GET", VS "/cmd/{cid}", KEY, JSON, .json = cv_h_json, .ctx = &cv_op_cmd_get },
	{ "GET", VS "/cmd/{cid}/logs", KEY, JSON, .json = cv_h_json, .ctx = &cv_op_cmd_logs },
	{ "POST", VS "/cmd/{cid}/kill", KEY, JSON, .json = cv_h_json, .ctx = &cv_op_cmd_kill },
	{ "POST", VS "/fs/write", KEY, .body = GW_BODY_STREAM, .body_cap = GW_FILE_BODY_CAP,
	  .start = cv_h_fs_write_start, .data = cv_h_fs_write_data, .done = cv_h_fs_write_done },
	{ "POST", VS "/fs/read", KEY, JSON, .json = cv_h_json, .ctx = &cv_op_fs_read },
	{ "POST", VS "/fs/mkdir", KEY, JSON, .json = cv_h_json, .ctx = &cv_op_fs_mkdir },
	{ "POST", VS "/stop", KEY, JSON, .json = cv_h_json, .ctx = &cv_op_stop },
	{ "POST", VS "/extend-timeout", KEY, JSON, .json = cv_h_json, .ctx = &cv_op_extend },
	{ "POST", VS "/network-policy", KEY, JSON, .json = cv_h_json, .ctx = &cv_op_network },
	{ "POST", VS "/snapshot", KEY, JSON, .json = cv_h_json, .ctx = &cv_op_snapshot },
	{ "POST", VS "/interactive", KEY, .start = cv_h_no_interactive },
	{ "GET", V2 "/{sid}", KEY, JSON, .json = cv_h_json, .ctx = &cv_op_box_get },
	{ "DELETE", V2 "/{sid}", KEY, JSON, .json = cv_h_json, .ctx = &cv_op_box_delete },
	{ "PATCH", V2 "/{sid}", KEY, .start = cv_h_no_update },
	{ "POST", V2 "/{sid}/fork", KEY, JSON, .json = cv_h_json, .ctx = &cv_op_fork },
};
const size_t gw_nroutes = sizeof gw_routes / sizeof gw_routes[0];
