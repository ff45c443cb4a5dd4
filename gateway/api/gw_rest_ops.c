/* The /v1 routes' handlers (rows of gw_route.c): each reads its query
 * arguments and body into the service layer's arguments and calls the
 * one svc_* operation (most rows need nothing more than gw_rest_plain or
 * gw_rest_json with the operation in the row); the answer comes back through the REST sinks
 * (gw_rest.c). Nothing here talks to a runner or agent. */
#include <stdio.h>
#include <string.h>
#include "../http/gw_req.h"
#include "gw_rest.h"

/* r->call for this route's sink; NULL after answering 500 (body freed) */
static struct svc_call *rest(struct gw_req *r, const struct svc_sink *sink, cJSON *body)
{
	struct svc_call *c = gw_rest_call(r, sink);
	if (!c) {
		cJSON_Delete(body);
		gw_resp_error(r, 500, "internal", "out of memory");
	}
	return c;
}

/* A row whose codec is only "run this operation" (.ctx, a gw_rest_op):
 * the operation's arguments are the path's ids and the JSON body. */
void gw_rest_plain(struct gw_req *r)
{
	const struct gw_rest_op *op = r->rt->ctx;
	if (rest(r, &gw_rest_json_sink, NULL))
		op->plain(r->call);
}

void gw_rest_json(struct gw_req *r, cJSON *body)
{
	const struct gw_rest_op *op = r->rt->ctx;
	if (rest(r, &gw_rest_json_sink, body))
		op->json(r->call, body);
}

/* GET /v1/runners: the runners table as this gateway sees it; the whole
 * of it for the metrics key, names and states for an API key. */
void gw_runners_list(struct gw_req *r)
{
	gw_resp_json(r, 200, gw_runners_json(r->vh, gw_auth_metrics(r->vh, r->wsi)));
}

/* GET /v1/sandboxes?limit=N&cursor=ID: a page of the caller's sandboxes */
void gw_sandboxes_list(struct gw_req *r)
{
	char cursor[sizeof r->call->op.cursor];
	int64_t limit = SVC_LIST_DEFAULT;
	int has;

	if (gw_query_i64(r, "limit", 1, SVC_LIST_MAX, &limit) < 0 ||
	    (has = gw_query_str(r, "cursor", cursor, sizeof cursor)) < 0)
		return;
	if (!rest(r, &gw_rest_json_sink, NULL))
		return;
	svc_list_page(r->call, (int)limit, has ? cursor : NULL);
}

void gw_cmd_get(struct gw_req *r)
{
	int wait = 0;
	if (gw_query_bool(r, "wait", &wait) < 0)
		return;
	if (wait)
		gw_keepalive_http_start(r, 0);   /* as long as the command runs */
	if (!rest(r, &gw_rest_json_sink, NULL))
		return;
	svc_command_get(r->call, wait);
}

/* POST .../stdin: the body goes out as it comes; ?eof=1 closes the
 * command's stdin after it. */
void gw_cmd_stdin_start(struct gw_req *r)
{
	int eof = 0;
	if (gw_query_bool(r, "eof", &eof) < 0)
		return;
	if (!rest(r, &gw_rest_json_sink, NULL))
		return;
	svc_stdin_start(r->call, eof);
}

void gw_cmd_stdin_data(struct gw_req *r, const void *in, size_t len)
{
	svc_stdin_data(r->call, in, len);
}

void gw_cmd_stdin_done(struct gw_req *r)
{
	svc_stdin_done(r->call);
}

/* GET .../logs?since=N&follow=1&encoding=base64 as ndjson (gw_rest.c) */
void gw_cmd_logs(struct gw_req *r)
{
	char enc[GW_QUERY_ENC_MAX + 1];
	int64_t off = 0;
	int follow = 0, has_enc;

	if (gw_query_i64(r, "since", 0, INT64_MAX / 2, &off) < 0 ||
	    gw_query_bool(r, "follow", &follow) < 0 ||
	    (has_enc = gw_query_str(r, "encoding", enc, sizeof enc)) < 0)
		return;
	if (has_enc && strcmp(enc, "base64") && strcmp(enc, "utf-8") && strcmp(enc, "text"))
		return (void)gw_resp_error(r, 422, "invalid", "encoding is base64 or text");
	gw_keepalive_http_start(r, 1);
	if (!rest(r, &gw_rest_logs_sink, NULL))
		return;
	r->call->op.b64 = has_enc && !strcmp(enc, "base64");
	svc_logs(r->call, off, follow);
}

/* path= (required, not empty) into r->call->path: 0, or -1 after answering */
static int path_arg(struct gw_req *r)
{
	int rc = gw_query_str(r, "path", r->call->path, sizeof r->call->path);
	if (rc < 0)
		return -1;
	if (!rc)
		return gw_resp_error(r, 422, "invalid", "path is required");
	return 0;
}

/* mode=: octal digits only (no sign, no spaces), 0..07777 */
static int mode_arg(struct gw_req *r, long *mode)
{
	char b[GW_QUERY_MODE_MAX + 1];
	int rc = gw_query_str(r, "mode", b, sizeof b);

	if (rc <= 0)
		return rc;
	*mode = b[0] ? 0 : -1;
	for (const char *p = b; *p && *mode >= 0; p++)
		*mode = *p >= '0' && *p <= '7' ? *mode * 8 + (*p - '0') : -1;
	if (*mode < 0 || *mode > 07777)
		return gw_resp_error(r, 422, "invalid", "mode must be octal, 0..07777");
	return 1;
}

void gw_files_put_start(struct gw_req *r)
{
	long mode = 0644;
	if (!rest(r, &gw_rest_json_sink, NULL))
		return;
	if (path_arg(r) || mode_arg(r, &mode) < 0)
		return;
	r->call->mode = mode;
	svc_write_file_start(r->call);
}

void gw_files_put_data(struct gw_req *r, const void *in, size_t len)
{
	svc_write_file_data(r->call, in, len);
}

void gw_files_put_done(struct gw_req *r)
{
	svc_write_file_done(r->call);
}

void gw_files_get(struct gw_req *r)
{
	if (!rest(r, &gw_rest_file_sink, NULL))
		return;
	if (path_arg(r))
		return;
	gw_keepalive_http_download(r);
	svc_read_file(r->call);
}

void gw_files_list(struct gw_req *r)
{
	if (!rest(r, &gw_rest_json_sink, NULL))
		return;
	if (path_arg(r))
		return;
	svc_list_files(r->call);
}
