/* libFuzzer target: a client text message on a stream or terminal
 * WebSocket, handled as gateway/stream/gw_ws.c receive() and
 * gw_stream.c gw_session_message() do, written against lib/ only (the
 * gateway itself needs lws): parse as one JSON object with a string
 * "type", dispatch on kill / stdin_eof / resize / pause / resume with the
 * field getters, build the agent request the gateway would send, or the
 * error message it would send back. Checks: the agent request parses again
 * and carries exactly the checked values; every message the gateway would
 * send is a JSON object in valid UTF-8 (lws sends our text frames as they
 * are, and a browser fails the connection on invalid UTF-8). lws only
 * delivers text messages that are valid UTF-8, so other inputs only have to
 * not crash. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sbx_json.h"
#include "fuzz_util.h"

#define WS_TEXT_MAX 4096   /* gw_ws.c: larger messages are closed with 1009 */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int in_utf8;

/* What goes to the client as a text message. */
static void to_client(cJSON *m)
{
	char *s = sbx_json_print(m);
	struct sbx_err err = { 0 };

	if (!s)
		__builtin_trap();
	if (in_utf8 && !utf8_ok((const unsigned char *)s, strlen(s)))
		__builtin_trap();
	cJSON *back = sbx_json_parse_object(s, strlen(s), &err);
	if (!back)
		__builtin_trap();
	cJSON_Delete(back);
	cJSON_free(s);
	cJSON_Delete(m);
}

static void ws_error(const char *code, const char *msg)
{
	cJSON *o = cJSON_CreateObject(), *e;

	cJSON_AddStringToObject(o, "type", "error");
	e = cJSON_AddObjectToObject(o, "error");
	cJSON_AddStringToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", msg);
	to_client(o);
}

/* What goes to the agent: it must parse back to the same values. */
static void to_agent(cJSON *a, const char *field, const char *want_s, int64_t want_n)
{
	char *s = sbx_json_print(a);
	struct sbx_err err = { 0 };
	cJSON *back = s ? sbx_json_parse_object(s, strlen(s), &err) : NULL;
	const char *got_s = NULL;
	int64_t got_n = 0;

	if (!back)
		__builtin_trap();
	if (want_s && (sbx_json_get_str(back, field, &got_s, &err) != 1 || strcmp(got_s, want_s)))
		__builtin_trap();
	if (!want_s && field && (sbx_json_get_i64(back, field, 1, 1000, &got_n, &err) != 1 || got_n != want_n))
		__builtin_trap();
	cJSON_Delete(back);
	cJSON_free(s);
	cJSON_Delete(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_err err = { 0 };
	const char *cid = "cmd_abcdefghijklmnopqrstuvwx";

	if (size > WS_TEXT_MAX)
		return 0;
	in_utf8 = utf8_ok(data, size);
	cJSON *o = sbx_json_parse_object(data, size, &err);
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "type");
	if (!o || !cJSON_IsString(t)) {
		cJSON_Delete(o);
		ws_error("bad_request", o ? "a message needs a string \"type\"" : err.msg);
		return 0;
	}
	const char *type = t->valuestring;
	if (!strcmp(type, "kill")) {
		const char *sig = "SIGTERM";
		if (sbx_json_get_str(o, "signal", &sig, &err) < 0) {
			ws_error("invalid", err.msg);
		} else {
			cJSON *a = cJSON_CreateObject();
			cJSON_AddStringToObject(a, "op", "signal");
			cJSON_AddStringToObject(a, "id", cid);
			cJSON_AddStringToObject(a, "signal", sig);
			to_agent(a, "signal", sig, 0);
		}
	} else if (!strcmp(type, "stdin_eof")) {
		cJSON *a = cJSON_CreateObject();
		cJSON_AddStringToObject(a, "op", "stdin_eof");
		cJSON_AddStringToObject(a, "id", cid);
		to_agent(a, "id", cid, 0);
	} else if (!strcmp(type, "resize")) {
		int64_t cols = 0, rows = 0;
		if (sbx_json_get_i64(o, "cols", 1, 1000, &cols, &err) <= 0 ||
		    sbx_json_get_i64(o, "rows", 1, 1000, &rows, &err) <= 0) {
			ws_error("invalid", err.msg[0] ? err.msg : "cols and rows are required");
		} else {
			if (cols < 1 || cols > 1000 || rows < 1 || rows > 1000)
				__builtin_trap();
			cJSON *a = cJSON_CreateObject();
			cJSON_AddStringToObject(a, "op", "resize");
			cJSON_AddStringToObject(a, "id", cid);
			cJSON_AddNumberToObject(a, "cols", (double)cols);
			cJSON_AddNumberToObject(a, "rows", (double)rows);
			to_agent(a, "cols", NULL, cols);
		}
	} else if (!strcmp(type, "pause") || !strcmp(type, "resume")) {
		/* flow control only: nothing is sent */
	} else {
		ws_error("bad_request", "unknown message type");
	}
	cJSON_Delete(o);
	return 0;
}
