/* libFuzzer target: a REST request body as the gateway reads it (create,
 * exec, kill, extend, mkdir): sbx_json_parse_object, then the typed field
 * getters with the ranges the API uses, then the re-serialisation that the
 * gateway forwards to the runner or agent. Checks: getters keep their
 * contract (1 = in range, -1 = error with a message), what is forwarded
 * parses again as the same object (so the runner acts on the value the
 * gateway checked), error messages are valid UTF-8 when the body was
 * (they are sent inside JSON), and every string is whole: one holding U+0000
 * is refused where a name is read and decodes with its NUL where data is. */
#include <stdlib.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sbx_json.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_msg(const struct sbx_err *err, int input_utf8)
{
	size_t n = strnlen(err->msg, sizeof err->msg);

	if (n == 0 || n == sizeof err->msg)
		__builtin_trap();   /* an error names what is wrong, NUL-terminated */
	if (input_utf8 && !utf8_ok((const unsigned char *)err->msg, n))
		__builtin_trap();   /* it goes into a JSON string: must stay UTF-8 */
}

static int has_nonfinite(const cJSON *n)
{
	for (; n; n = n->next) {
		if (cJSON_IsNumber(n) && !isfinite(n->valuedouble))
			return 1;
		if (n->child && has_nonfinite(n->child))
			return 1;
	}
	return 0;
}

/* Each member of obj (and below) that is a string: whole, or holding U+0000
 * and then decoded with it. */
static void check_strings(const cJSON *obj, size_t size)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, obj) {
		if (cJSON_IsObject(c) || cJSON_IsArray(c))
			check_strings(c, size);
		if (!cJSON_IsObject(obj) || !(cJSON_IsString(c) || sbx_json_has_nul(c)))
			continue;
		struct sbx_err err = { 0 };
		char *b = NULL;
		size_t n = 0;
		if (sbx_json_get_bytes(obj, c->string, &b, &n, &err) != 1 || n > size)
			__builtin_trap();
		/* a plain string has no NUL to lose; the other kind holds one */
		if (!!memchr(b, 0, n) != sbx_json_has_nul(c) ||
		    (cJSON_IsString(c) && n != strlen(c->valuestring)))
			__builtin_trap();
		free(b);
	}
}

static const struct { const char *name; int64_t min, max; } ints[] = {
	{ "timeout_ms", 1, INT64_MAX },          /* gateway create: its own key limit after */
	{ "timeout_ms", 0, 86400000 },           /* exec */
	{ "idle_timeout_ms", 0, 86400000 },
	{ "vcpus", 1, 8 }, { "memory_mb", 32, 8192 }, { "pids", 16, 4096 },
	{ "disk_mb", 16, 16384 }, { "nofile", 64, 65536 },
	{ "duration_ms", 1, 86400000 },          /* extend */
	{ "cols", 1, 1000 }, { "rows", 1, 1000 },
	{ "since", 0, INT64_MAX },
};
static const char *const strs[] = { "cmd", "cwd", "network", "image", "signal", "path" };
static const char *const bools[] = { "sudo", "detached", "parents" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_err err = { 0 };
	int in_utf8 = utf8_ok(data, size);
	cJSON *o = sbx_json_parse_object(data, size, &err);

	if (!o) {
		check_msg(&err, in_utf8);
		return 0;
	}
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
		int64_t v = INT64_MIN + 7;
		memset(&err, 0, sizeof err);
		int rc = sbx_json_get_i64(o, ints[i].name, ints[i].min, ints[i].max, &v, &err);
		if (rc == 1 && (v < ints[i].min || v > ints[i].max))
			__builtin_trap();
		if (rc == 0 && v != INT64_MIN + 7)
			__builtin_trap();
		if (rc < 0)
			check_msg(&err, in_utf8);
	}
	for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
		const char *s = NULL;
		memset(&err, 0, sizeof err);
		int rc = sbx_json_get_str(o, strs[i], &s, &err);
		if (rc == 1 && (!s || strlen(s) > size))
			__builtin_trap();
		if (rc < 0)
			check_msg(&err, in_utf8);
	}
	for (size_t i = 0; i < sizeof bools / sizeof bools[0]; i++) {
		int b = 7;
		memset(&err, 0, sizeof err);
		int rc = sbx_json_get_bool(o, bools[i], &b, &err);
		if (rc == 1 && b != 0 && b != 1)
			__builtin_trap();
		if (rc < 0)
			check_msg(&err, in_utf8);
	}
	/* args (strings), ports (numbers), env (object of strings) are passed
	 * through: walk them as the receiving side does */
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(o, "args"))
		if (cJSON_IsString(e) && strlen(e->valuestring) > size)
			__builtin_trap();
	/* env is only walked by name when it is an object (an array is
	 * passed on and refused by the agent's own check) */
	if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(o, "env")))
		cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(o, "env"))
			if (!e->string || (cJSON_IsString(e) && !e->valuestring))
				__builtin_trap();

	check_strings(o, size);
	{
		char path[200];
		int found = sbx_json_find_nul(o, path, sizeof path);
		memset(&err, 0, sizeof err);
		if (found != (sbx_json_refuse_nul(o, &err) < 0))
			__builtin_trap();
		if (found)
			check_msg(&err, in_utf8);
	}

	/* what the gateway forwards is printed from this tree and parsed by the
	 * runner/agent with the same parser: it must be the same object */
	char *s = sbx_json_print(o);
	if (s) {
		cJSON *again = sbx_json_parse_object(s, strlen(s), &err);
		if (!again)
			__builtin_trap();
		if (!cJSON_Compare(o, again, 1) && !has_nonfinite(o))
			__builtin_trap();
		cJSON_Delete(again);
		cJSON_free(s);
	}
	cJSON_Delete(o);
	return 0;
}
