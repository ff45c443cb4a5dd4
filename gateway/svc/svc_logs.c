/* A command's output from an offset (the agent's attach), or a terminal's
 * (the agent's exec on a PTY with attach): its chunks as sink data (c->op.logs_off is where each chunk's first byte is in the
 * output of both streams), a gap the agent's retention bound made as a
 * "truncated" event, the exit as an "exit" event, the agent's error frame
 * (a pause) as the call's failure; without follow it
 * stops at what existed when asked ("end"). */
#include <stdio.h>
#include <string.h>
#include "svc.h"

static int on_frame(struct svc_call *c, const struct sbx_frame *f)
{
	const cJSON *t;
	cJSON *o;
	int rc = 0;

	if (c->op.phase == GW_OP_STREAMING && (f->type == SBX_FRAME_STDOUT || f->type == SBX_FRAME_STDERR)) {
		rc = svc_data(c, f->type == SBX_FRAME_STDERR ? SVC_STDERR : SVC_STDOUT, f->payload, f->len);
		c->op.logs_off += f->len;
		c->vh->m.bytes_streamed += f->len;
		return rc ? 1 : 0;
	}
	if (!(o = svc_reply_json(c, f, c->op.phase == GW_OP_FIRST, "frame from the sandbox")))
		return -1;
	if (c->op.phase == GW_OP_FIRST) {
		const cJSON *off = cJSON_GetObjectItemCaseSensitive(o, "offset");
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
		c->op.logs_off = cJSON_IsNumber(off) ? (uint64_t)off->valuedouble : 0;
		if (c->op.mode == GW_OP_PTY && cJSON_IsString(id)) {
			snprintf(c->cid, sizeof c->cid, "%s", id->valuestring);
			c->vh->m.commands_started++;
		}
		c->op.phase = GW_OP_STREAMING;
		cJSON_Delete(o);
		return svc_begin(c, -1) ? -1 : 0;
	}
	/* the agent ends a stream with an error frame when the sandbox is
	 * paused (`paused`): its code and message end the call */
	if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(o, "ok"))) {
		svc_runner_error(c, o);
		cJSON_Delete(o);
		return 1;
	}
	t = cJSON_GetObjectItemCaseSensitive(o, "type");
	if (cJSON_IsString(t) && !strcmp(t->valuestring, "exit")) {
		cJSON_DeleteItemFromObjectCaseSensitive(o, "type");
		rc = c->sink->event && !c->ended ? c->sink->event(c, "exit", o) : 0;
		cJSON_Delete(o);
		svc_end(c, rc != 0);
		return 1;
	}
	if (cJSON_IsString(t) && !strcmp(t->valuestring, "end")) {
		cJSON_Delete(o);
		svc_end(c, 0);
		return 1;
	}
	if (cJSON_IsString(t) && !strcmp(t->valuestring, "truncated")) {
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "bytes");
		double n = cJSON_IsNumber(b) ? b->valuedouble : 0;
		cJSON *gap = cJSON_CreateObject();
		cJSON_AddNumberToObject(gap, "truncated", n);
		c->op.logs_off += (uint64_t)n;
		rc = c->sink->event && !c->ended ? c->sink->event(c, "truncated", gap) : 0;
		cJSON_Delete(gap);
	}
	cJSON_Delete(o);
	if (rc) {
		svc_end(c, 1);
		return 1;
	}
	return 0;
}

void svc_logs(struct svc_call *c, int64_t since, int follow)
{
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "op", "attach");
	cJSON_AddStringToObject(a, "id", c->cid);
	cJSON_AddNumberToObject(a, "offset", (double)since);
	cJSON_AddBoolToObject(a, "follow", follow);
	svc_agent(c, a, on_frame);
}

void svc_pty(struct svc_call *c, const char *cmd, int cols, int rows)
{
	cJSON *a = cJSON_CreateObject(), *args;
	cJSON_AddStringToObject(a, "op", "exec");
	cJSON_AddStringToObject(a, "cmd", cmd && *cmd ? cmd : "bash");
	args = cJSON_AddArrayToObject(a, "args");
	if (!cmd || !*cmd || !strcmp(cmd, "bash"))
		cJSON_AddItemToArray(args, cJSON_CreateString("-l"));
	cJSON_AddStringToObject(a, "cwd", "/home/sandbox");
	cJSON_AddNumberToObject(a, "uid", 1000);
	cJSON_AddNumberToObject(a, "gid", 1000);
	cJSON_AddBoolToObject(a, "pty", 1);
	cJSON_AddBoolToObject(a, "attach", 1);
	cJSON_AddBoolToObject(a, "hangup_on_detach", 1);
	cJSON_AddNumberToObject(a, "cols", cols);
	cJSON_AddNumberToObject(a, "rows", rows);
	c->op.mode = GW_OP_PTY;
	svc_agent(c, a, on_frame);
}
