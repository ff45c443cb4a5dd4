/* GET .../commands/{cid}/logs?since=N&follow=1&encoding=base64: the
 * command's output as ndjson, one line per chunk
 * {"stream":"stdout","data":"..","offset":N} (offset: where the chunk's
 * first byte is in the output of both streams), then
 * {"exit_code":..,"signal":..} once it ended. Without follow the lines stop
 * at what existed when the request came. Text mode writes bytes that are
 * not UTF-8 as U+FFFD; base64 keeps them exact. Lines are built here
 * rather than with cJSON so that NUL bytes survive (as \u0000). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/gw.h"


/* Length of the valid UTF-8 sequence at p (1..4), 0 if invalid. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0) { len = 2; cp = p[0] & 0x1f; }
	else if ((p[0] & 0xf0) == 0xe0) { len = 3; cp = p[0] & 0x0f; }
	else if ((p[0] & 0xf8) == 0xf0) { len = 4; cp = p[0] & 0x07; }
	else return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

static int put(struct sbx_buf *b, const void *p, size_t n)
{
	return sbx_buf_append(b, p, n);
}

static int put_text(struct sbx_buf *b, const unsigned char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i = 0;

	while (i < n) {
		size_t k = utf8_seq(p + i, n - i);
		char esc[8];

		if (!k) {
			if (put(b, "\\ufffd", 6))
				return -1;
			i++;
			continue;
		}
		if (k > 1 || (p[i] >= 0x20 && p[i] != '"' && p[i] != '\\')) {
			if (put(b, p + i, k))
				return -1;
		} else if (p[i] == '"' || p[i] == '\\' || p[i] == '\n' || p[i] == '\t' ||
			   p[i] == '\r') {
			esc[0] = '\\';
			esc[1] = p[i] == '\n' ? 'n' : p[i] == '\t' ? 't' : p[i] == '\r' ? 'r' : (char)p[i];
			if (put(b, esc, 2))
				return -1;
		} else {
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[p[i] >> 4];
			esc[5] = hex[p[i] & 15];
			if (put(b, esc, 6))
				return -1;
		}
		i += k;
	}
	return 0;
}

static int put_b64(struct sbx_buf *b, const unsigned char *p, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned char *d = sbx_buf_reserve(b, 4 * ((n + 2) / 3));
	size_t i, k = 0;

	if (!d)
		return -1;
	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		d[k++] = (unsigned char)tab[v >> 18];
		d[k++] = (unsigned char)tab[(v >> 12) & 63];
		d[k++] = (unsigned char)tab[(v >> 6) & 63];
		d[k++] = (unsigned char)tab[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
		d[k++] = (unsigned char)tab[v >> 18];
		d[k++] = (unsigned char)tab[(v >> 12) & 63];
		d[k++] = i + 1 < n ? (unsigned char)tab[(v >> 6) & 63] : '=';
		d[k++] = '=';
	}
	sbx_buf_commit(b, k);
	return 0;
}

static int chunk_line(struct gw_req *r, const struct sbx_frame *f)
{
	char tail[64];

	if (put(&r->resp, f->type == SBX_FRAME_STDOUT ? "{\"stream\":\"stdout\",\"data\":\"" :
		"{\"stream\":\"stderr\",\"data\":\"", 27) ||
	    (r->op.b64 ? put_b64(&r->resp, f->payload, f->len) :
			   put_text(&r->resp, f->payload, f->len)))
		return -1;
	snprintf(tail, sizeof tail, "\",\"offset\":%llu}\n", (unsigned long long)r->op.logs_off);
	r->op.logs_off += f->len;
	r->vh->m.bytes_streamed += f->len;
	return put(&r->resp, tail, strlen(tail));
}

static int json_line(struct gw_req *r, cJSON *o)
{
	char *s = sbx_json_print(o);
	int rc = s && !put(&r->resp, s, strlen(s)) && !put(&r->resp, "\n", 1) ? 0 : -1;

	cJSON_free(s);
	cJSON_Delete(o);
	return rc;
}

static int on_frame(struct gw_req *r, const struct sbx_frame *f)
{
	const cJSON *t;
	cJSON *o;
	int rc = 0;

	if (r->op.phase == GW_OP_STREAMING && (f->type == SBX_FRAME_STDOUT || f->type == SBX_FRAME_STDERR)) {
		if (r->logs_chunk) {
			r->op.logs_off += f->len;
			r->vh->m.bytes_streamed += f->len;
			rc = r->logs_chunk(r, f->type == SBX_FRAME_STDERR, f->payload, f->len);
		} else {
			rc = chunk_line(r, f);
		}
		goto out;
	}
	if (!(o = gw_reply_json(r, f, r->op.phase == GW_OP_FIRST, "frame from the sandbox")))
		return -1;
	if (r->op.phase == GW_OP_FIRST) {
		const cJSON *off = cJSON_GetObjectItemCaseSensitive(o, "offset");
		r->op.logs_off = cJSON_IsNumber(off) ? (uint64_t)off->valuedouble : 0;
		r->op.phase = GW_OP_STREAMING;
		cJSON_Delete(o);
		gw_resp_start_stream(r, 200, "application/x-ndjson", -1);
		return 0;
	}
	t = cJSON_GetObjectItemCaseSensitive(o, "type");
	if (cJSON_IsString(t) && !strcmp(t->valuestring, "exit")) {
		cJSON_DeleteItemFromObjectCaseSensitive(o, "type");
		if (r->logs_exit) {
			rc = r->logs_exit(r, o);
			cJSON_Delete(o);
		} else {
			rc = json_line(r, o);
		}
		r->resp_done = 1;
		gw_req_wake(r);
		return rc ? -1 : 1;
	}
	if (cJSON_IsString(t) && !strcmp(t->valuestring, "end")) {
		cJSON_Delete(o);
		r->resp_done = 1;
		gw_req_wake(r);
		return 1;
	}
	if (cJSON_IsString(t) && !strcmp(t->valuestring, "truncated")) {
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "bytes");
		if (cJSON_IsNumber(b))
			r->op.logs_off += (uint64_t)b->valuedouble;
		if (r->logs_chunk) {   /* the SDK's lines have no form for a gap */
			cJSON_Delete(o);
			goto out;
		}
		cJSON_DeleteItemFromObjectCaseSensitive(o, "type");
		cJSON_AddNumberToObject(o, "truncated", cJSON_IsNumber(b) ? b->valuedouble : 0);
		cJSON_DeleteItemFromObjectCaseSensitive(o, "bytes");
		rc = json_line(r, o);
		goto out;
	}
	cJSON_Delete(o);
out:
	gw_keepalive_lines_sent(r);
	if (rc) {
		/* headers went out already: end the response where it is */
		r->resp_done = 1;
		r->close_after = 1;
		gw_req_wake(r);
		return 1;
	}
	gw_req_wake(r);
	return 0;
}

void gw_logs_start(struct gw_req *r)
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
	gw_logs_open(r, off, follow, has_enc && !strcmp(enc, "base64"));
}

void gw_logs_open(struct gw_req *r, int64_t off, int follow, int b64)
{
	cJSON *a;

	r->op.b64 = b64;
	a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "op", "attach");
	cJSON_AddStringToObject(a, "id", r->cid);
	cJSON_AddNumberToObject(a, "offset", (double)off);
	cJSON_AddBoolToObject(a, "follow", follow);
	gw_req_agent(r, a, on_frame);
}

int gw_json_text(struct sbx_buf *b, const unsigned char *p, size_t n)
{
	return put_text(b, p, n);
}

char *gw_utf8_clean(const unsigned char *p, size_t n)
{
	char *out = malloc(3 * n + 1), *d = out;   /* U+FFFD is 3 bytes */
	size_t i = 0;

	if (!out)
		return NULL;
	while (i < n) {
		size_t k = p[i] ? utf8_seq(p + i, n - i) : 0;
		if (!k) {
			memcpy(d, "\xef\xbf\xbd", 3);
			d += 3;
			i++;
			continue;
		}
		memcpy(d, p + i, k);
		d += k;
		i += k;
	}
	*d = '\0';
	return out;
}

char *gw_base64(const unsigned char *p, size_t n)
{
	struct sbx_buf b;
	char *out;

	sbx_buf_init(&b, 0);
	if (put_b64(&b, p, n) || sbx_buf_append(&b, "", 1)) {
		sbx_buf_free(&b);
		return NULL;
	}
	out = malloc(b.len);
	if (out)
		memcpy(out, sbx_buf_head(&b), b.len);
	sbx_buf_free(&b);
	return out;
}
