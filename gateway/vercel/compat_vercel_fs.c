/* Files: fs/read (streamed as on /v1), fs/mkdir, fs/write.
 *
 * fs/write takes a gzip-compressed tar (the SDK's writeFiles) and never
 * holds it: compressed bytes are inflated and read as they arrive
 * (compat_vercel_tar.c), and each file's bytes go on to the sandbox at
 * once. "Nothing written" for a bad archive: an entry cannot be judged
 * before it comes, so every file goes first into a staging directory
 * /tmp/.vercel-write-<random> (the sandbox user's, 0700); only when the
 * whole archive was read and every entry was good does one command, as
 * the sandbox user, move the files into place (a list of kind, staged
 * name and target, NUL-separated, written beside them). An archive
 * refused halfway (an entry escaping x-cwd, a link or device, bad gzip,
 * over a cap) has its staging directory removed, and the target paths
 * never changed. A client that disconnects mid-upload leaves a staging
 * directory the next fs/write of the sandbox removes once an hour old. */
#include <openssl/rand.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compat_vercel.h"
#include "../http/gw_rest_sink.h"
#include "compat_vercel_tar.h"
#include "sbx_log.h"

#define IN_HIGH (64 * 1024)   /* compressed bytes held before pausing the client */

enum { W_MKSTAGE, W_STREAM, W_MANIFEST, W_MOVE, W_CLEANUP };

struct cv_write {
	struct cv_tar tar;
	char target[2050];           /* x-cwd, normalised, no trailing '/' ("" = /) */
	char staging[64];
	int phase;
	struct sbx_buf in;           /* compressed bytes not read yet */
	struct sbx_buf manifest;
	int in_entry, waiting, files, body_done, failed;
	int answer_ready;            /* refused: answered once the body was read */
	int err_status;
	char err_code[32], err_msg[400];
};

static const char move_script[] =
	"set -u; S=$1\n"
	"find /tmp -maxdepth 1 -name '.vercel-write-*' -user \"$(id -u)\" -mmin +60 "
	"! -path \"$S\" -exec rm -rf -- {} + 2>/dev/null\n"
	"cd -- \"$S\" || exit 1\n"
	"fail=0\n"
	"while IFS= read -r -d '' kind && IFS= read -r -d '' src && IFS= read -r -d '' dst; do\n"
	"  if [ \"$kind\" = d ]; then mkdir -p -- \"$dst\" || { fail=1; break; }\n"
	"  else dir=${dst%/*}\n"
	"    if [ -n \"$dir\" ] && [ ! -d \"$dir\" ]; then mkdir -p -- \"$dir\" || { fail=1; break; }; fi\n"
	"    mv -fT -- \"$src\" \"$dst\" || { fail=1; break; }\n"
	"  fi\n"
	"done < .manifest\n"
	"cd /; rm -rf -- \"$S\"\n"
	"exit $fail\n";

void cv_fs_write_free(struct cv_write *w)
{
	if (!w)
		return;
	cv_tar_free(&w->tar);
	sbx_buf_free(&w->in);
	sbx_buf_free(&w->manifest);
	free(w);
}

/* ---- read, mkdir ---- */

static int body_path(struct gw_req *r, struct cv_call *c, char *out, size_t n)
{
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(c->body, "path");
	const cJSON *cwd = cJSON_GetObjectItemCaseSensitive(c->body, "cwd");
	if (!cJSON_IsString(p) || (cwd && !cJSON_IsNull(cwd) && !cJSON_IsString(cwd)))
		return gw_resp_error(r, 422, "invalid", "path (a string) is required; cwd is a string");
	return cv_resolve(r, p->valuestring, cJSON_GetStringValue(cwd), out, n);
}

static void read_checked(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a->json, "type"));
	if (a->status >= 400) {
		cv_fail_answer(r, a);
		return;
	}
	if (!type || strcmp(type, "file")) {
		gw_resp_error(r, 422, "invalid", "%s is not a regular file", c->path);
		return;
	}
	/* streamed on r: Content-Length, application/octet-stream */
	struct svc_call *sc = gw_rest_call(r, &gw_rest_file_sink);
	if (!sc) {
		gw_resp_error(r, 500, "internal", "out of memory");
		return;
	}
	snprintf(sc->path, sizeof sc->path, "%s", c->path);
	gw_keepalive_http_download(r);
	svc_read_file(sc);
}

void cv_fs_read(struct gw_req *r, struct cv_call *c)
{
	struct svc_call *s;
	cJSON *o;
	if (body_path(r, c, c->path, sizeof c->path))
		return;
	s = cv_step(c, read_checked);
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "op", "stat");
	cJSON_AddStringToObject(o, "path", c->path);
	svc_agent_op(s, o, NULL);
}

static void made_dir(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	(void)c;
	if (a->status >= 400)
		cv_fail_answer(r, a);
	else
		gw_resp_json(r, 200, cJSON_CreateObject());
}

void cv_fs_mkdir(struct gw_req *r, struct cv_call *c)
{
	char path[4096];
	struct svc_call *s;
	cJSON *o;
	if (body_path(r, c, path, sizeof path))
		return;
	s = cv_step(c, made_dir);
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "op", "mkdir");
	cJSON_AddStringToObject(o, "path", path);
	cJSON_AddNumberToObject(o, "mode", 0755);
	cJSON_AddNumberToObject(o, "uid", 1000);
	cJSON_AddNumberToObject(o, "gid", 1000);
	svc_agent_op(s, o, NULL);
}

/* ---- write ---- */

static void rx_flow(struct gw_req *r, struct cv_write *w)
{
	if (!r->wsi)
		return;
	if (!r->http_rx_paused && w->in.len >= IN_HIGH && !w->failed) {
		r->http_rx_paused = 1;
		lws_rx_flow_control(r->wsi, 0);
	} else if (r->http_rx_paused && w->in.len < IN_HIGH / 4) {
		r->http_rx_paused = 0;
		lws_rx_flow_control(r->wsi, 1 | LWS_RXFLOW_REASON_FLAG_PROCESS_NOW);
	}
}

/* A refusal is answered once the whole body was read (and thrown away):
 * answering while the client still sends would have its kernel reset
 * the connection, and the client might never see why. */
static void answer_refusal(struct gw_req *r, struct cv_write *w)
{
	if (!r->body_done) {
		w->answer_ready = 1;
		return;
	}
	gw_resp_error(r, w->err_status, w->err_code, "%s", w->err_msg);
}

static void cleaned(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	(void)a;
	answer_refusal(r, c->w);
}

static void exec_bash(struct cv_call *c, const char *script, cv_step_fn next)
{
	struct svc_call *s = cv_step(c, next);
	cJSON *b, *args;
	b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "cmd", "bash");
	args = cJSON_AddArrayToObject(b, "args");
	cJSON_AddItemToArray(args, cJSON_CreateString("-c"));
	cJSON_AddItemToArray(args, cJSON_CreateString(script));
	cJSON_AddItemToArray(args, cJSON_CreateString("bash"));
	cJSON_AddItemToArray(args, cJSON_CreateString(c->w->staging));
	cJSON_AddStringToObject(b, "cwd", "/");
	s->no_stdin = 1;
	svc_exec(s, b);
}

/* Refuse the archive: the staging directory goes, then the answer. */
__attribute__((format(printf, 5, 6)))
static void refuse(struct gw_req *r, struct cv_call *c, int status, const char *code,
		   const char *fmt, ...)
{
	va_list ap;
	struct cv_write *w = c->w;
	if (w->failed)
		return;
	w->failed = 1;
	w->err_status = status;
	snprintf(w->err_code, sizeof w->err_code, "%s", code);
	va_start(ap, fmt);
	vsnprintf(w->err_msg, sizeof w->err_msg, fmt, ap);
	va_end(ap);
	if (c->next) {        /* a staged file cut short: the agent drops it */
		svc_collect_cancel(&c->k);
		c->next = NULL;
	}
	sbx_buf_reset(&w->in);
	rx_flow(r, w);   /* the rest of the body is read and thrown away */
	if (w->phase == W_MKSTAGE) {
		answer_refusal(r, w);
		return;
	}
	w->phase = W_CLEANUP;
	exec_bash(c, "rm -rf -- \"$1\"", cleaned);
}

static void moved(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(a->json, "exit_code");
	const char *err = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a->json, "stderr"));
	(void)c;
	if (a->status >= 400) {
		cv_fail_answer(r, a);
		return;
	}
	if (!cJSON_IsNumber(code) || code->valueint) {
		gw_resp_error(r, 422, "write_failed", "moving the files into place failed: %.300s",
			      err && *err ? err : "(no message)");
		return;
	}
	gw_resp_json(r, 200, cJSON_CreateObject());
}

static void manifest_written(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	if (a->status >= 400) {
		refuse(r, c, a->status, "write_failed", "staging the list of files failed%s", "");
		return;
	}
	c->w->phase = W_MOVE;
	exec_bash(c, move_script, moved);
}

static void put_file(struct cv_call *c, const char *name, long mode,
		     const void *p, size_t n, cv_step_fn next)
{
	struct svc_call *s = cv_step(c, next);
	snprintf(s->path, sizeof s->path, "%s/%s", c->w->staging, name);
	s->mode = mode;
	svc_write_file_start(s);
	if (!s->answered && n)
		svc_write_file_data(s, p, n);
}

static void archive_read(struct cv_call *c)
{
	struct cv_write *w = c->w;
	w->phase = W_MANIFEST;
	put_file(c, ".manifest", 0600, sbx_buf_head(&w->manifest), w->manifest.len,
		 manifest_written);
	if (c->next && !c->k.call.answered)
		svc_write_file_done(&c->k.call);
}

static void staged(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	if (a->status >= 400) {
		refuse(r, c, a->status, "write_failed", "staging a file failed%s", "");
		return;
	}
	c->w->waiting = 0;
	cv_fs_write_pump(r, c);
}

static int manifest_add(struct cv_write *w, char kind, const char *src, const char *dst)
{
	char k[2] = { kind, '\0' };
	if (w->manifest.len + strlen(src) + strlen(dst) + 4 > CV_MANIFEST_CAP)
		return -1;
	return sbx_buf_append(&w->manifest, k, 2) || sbx_buf_append(&w->manifest, src, strlen(src) + 1) ||
	       sbx_buf_append(&w->manifest, dst, strlen(dst) + 1) ? -1 : 0;
}

static void entry(struct gw_req *r, struct cv_call *c)
{
	struct cv_write *w = c->w;
	char rel[CV_TAR_NAME_MAX], dst[CV_TAR_NAME_MAX + 2048 + 2], src[16];

	if (cv_tar_name_ok(w->tar.name, rel, sizeof rel))
		return refuse(r, c, 400, "bad_request",
			      "tar entry \"%.200s\" escapes the target (absolute, \"..\" or empty name): nothing was written",
			      w->tar.name);
	if (w->tar.type != '0' && w->tar.type != '5')
		return refuse(r, c, 400, "bad_request",
			      "tar entry \"%.200s\" is a link, device or fifo: only files and directories are accepted; nothing was written",
			      w->tar.name);
	if (++w->files > CV_WRITE_MAX_FILES)
		return refuse(r, c, 413, "too_large", "archive over %s entries: nothing was written", "10000");
	snprintf(dst, sizeof dst, "%s/%s", w->target, rel);
	snprintf(src, sizeof src, "%d", w->files);
	if (manifest_add(w, w->tar.type == '5' ? 'd' : 'f', w->tar.type == '5' ? "" : src, dst))
		return refuse(r, c, 413, "too_large", "archive names over %s: nothing was written", "4 MiB");
	if (w->tar.type == '5') {
		if (w->tar.size)
			return refuse(r, c, 400, "bad_request", "tar entry \"%.200s\": a directory with data", w->tar.name);
		return;
	}
	put_file(c, src, (long)(w->tar.mode & 0777), NULL, 0, staged);
	w->in_entry = c->next != NULL;
}

void cv_fs_write_pump(struct gw_req *r, struct cv_call *c)
{
	struct cv_write *w = c->w;

	while (w->phase == W_STREAM && !w->failed && !r->resp_ready && !w->waiting) {
		struct svc_call *s = c->next ? &c->k.call : NULL;
		size_t used = 0;
		enum cv_tar_ev ev;

		if (s && (s->answered || !w->in_entry))
			break;   /* its answer comes to the step's continuation */
		if (s && gw_up_queued(&s->up) >= GW_QUEUE_HIGH) {
			c->put_full = 1;   /* the step's drained wakes the pump */
			break;
		}
		ev = cv_tar_next(&w->tar, sbx_buf_head(&w->in), w->in.len, &used);
		sbx_buf_consume(&w->in, used);
		if (ev == CV_TAR_MORE) {
			if (!w->body_done || w->in.len)
				break;
			ev = cv_tar_finish(&w->tar);
		}
		switch (ev) {
		case CV_TAR_ENTRY:
			entry(r, c);
			break;
		case CV_TAR_DATA:
			if (!w->in_entry || !c->next)
				return refuse(r, c, 400, "bad_request", "tar entry \"%.200s\": data for no file", w->tar.name);
			r->vh->m.files_put_bytes += w->tar.ndata;
			/* the client waits while the sandbox takes the bytes: lws
			 * would cut a body not complete within 5 s */
			if (r->wsi)
				lws_set_timeout(r->wsi, PENDING_TIMEOUT_HTTP_CONTENT, 60);
			svc_write_file_data(&c->k.call, w->tar.data, w->tar.ndata);
			break;
		case CV_TAR_ENTRY_END:
			if (w->in_entry && c->next) {
				w->in_entry = 0;
				w->waiting = 1;
				svc_write_file_done(&c->k.call);
			}
			break;
		case CV_TAR_END:
			archive_read(c);
			return;
		case CV_TAR_ERROR:
			return refuse(r, c, strstr(w->tar.err, "size cap") ? 413 : 400,
				      strstr(w->tar.err, "size cap") ? "too_large" : "bad_request",
				      "%s: nothing was written", w->tar.err);
		default:
			break;
		}
	}
	rx_flow(r, w);
}

static void staging_made(struct gw_req *r, struct cv_call *c, struct cv_answer *a)
{
	if (a->status >= 400) {
		c->w->failed = 1;
		cv_fail_answer(r, a);
		return;
	}
	c->w->phase = W_STREAM;
	cv_fs_write_pump(r, c);
}

int cv_fs_write_start(struct gw_req *r, struct cv_call *c)
{
	struct cv_write *w = calloc(1, sizeof *w);
	unsigned char rnd[8];
	char cwd[2048] = "/", norm[2048];
	struct svc_call *s;
	cJSON *o;
	int n;

	if (!w)
		return gw_resp_error(r, 500, "internal", "out of memory");
	c->w = w;
	sbx_buf_init(&w->in, 0);
	sbx_buf_init(&w->manifest, CV_MANIFEST_CAP);
	if (cv_tar_init(&w->tar, CV_WRITE_MAX_BYTES))
		return gw_resp_error(r, 500, "internal", "cannot start zlib");
	n = lws_hdr_custom_length(r->wsi, "x-cwd:", 6);
	if (n >= (int)sizeof cwd)
		return gw_resp_error(r, 400, "bad_request", "x-cwd longer than %zu bytes", sizeof cwd - 1);
	if (n > 0 && lws_hdr_custom_copy(r->wsi, cwd, sizeof cwd, "x-cwd:", 6) < 0)
		return gw_resp_error(r, 400, "bad_request", "bad x-cwd header");
	if (cwd[0] != '/')
		return gw_resp_error(r, 400, "bad_request", "x-cwd must be an absolute path");
	if (cwd[1] && cv_tar_name_ok(cwd + 1, norm, sizeof norm))
		return gw_resp_error(r, 400, "bad_request", "x-cwd must not contain \"..\"");
	snprintf(w->target, sizeof w->target, "%s%s", cwd[1] ? "/" : "", cwd[1] ? norm : "");
	if (RAND_bytes(rnd, sizeof rnd) != 1)
		return gw_resp_error(r, 500, "internal", "no randomness");
	snprintf(w->staging, sizeof w->staging, "/tmp/.vercel-write-%02x%02x%02x%02x%02x%02x%02x%02x",
		 rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
	w->phase = W_MKSTAGE;
	if (!(s = cv_step(c, staging_made)))
		return -1;
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "op", "mkdir");
	cJSON_AddStringToObject(o, "path", w->staging);
	cJSON_AddNumberToObject(o, "mode", 0700);
	cJSON_AddNumberToObject(o, "uid", 1000);
	cJSON_AddNumberToObject(o, "gid", 1000);
	svc_agent_op(s, o, NULL);
	return 0;
}

void cv_fs_write_data(struct gw_req *r, struct cv_call *c, const void *in, size_t len)
{
	struct cv_write *w = c->w;
	if (!w || w->failed || r->resp_ready)
		return;
	if (sbx_buf_append(&w->in, in, len)) {
		gw_resp_error(r, 500, "internal", "out of memory");
		return;
	}
	cv_fs_write_pump(r, c);
	rx_flow(r, w);
}

void cv_fs_write_done(struct gw_req *r, struct cv_call *c)
{
	struct cv_write *w = c->w;
	if (w && w->failed && w->answer_ready)
		answer_refusal(r, w);
	if (!w || w->failed || r->resp_ready)
		return;
	w->body_done = 1;
	cv_fs_write_pump(r, c);
}
