/* JSON helpers on cJSON for untrusted input: parse with a length (buffers
 * are not NUL-terminated), report where a parse failed, reject duplicate
 * keys, keep every string whole, and typed field getters whose errors name
 * the field.
 *
 * Whole strings. cJSON decodes "\u0000" into its C string and ends the
 * string there, without keeping its length: "gvisor\u0000x" would read as
 * "gvisor", "echo one\u0000; echo two" as "echo one". So the parse below
 * finds the strings that hold U+0000 in the text and turns each into an
 * item of type cJSON_Raw whose valuestring is the string's JSON text as
 * sent, quotes and escapes included (no NUL in it). Every cJSON_String of
 * a parsed tree is therefore whole (strlen is its length); a string with a
 * NUL is something cJSON_IsString says is not a string, never a shorter
 * value; printed again it is the same JSON, so a tree passed on carries it
 * whole. Names, paths, commands and the like refuse such a string
 * (sbx_json_get_str, sbx_json_refuse_nul, naming the field); data, where a
 * NUL is a byte like any other, decodes it with its length
 * (sbx_json_get_bytes). An object key that holds U+0000 is a parse error:
 * a key names a field, and cJSON would keep only the part before it. */
#ifndef SBX_JSON_H
#define SBX_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "sbx_err.h"

/* Parse [p, p+n) as one JSON value. Returns a tree the caller frees with
 * cJSON_Delete, or NULL with err set: EINVAL "invalid JSON at byte N"
 * (with why: a control character in a string, a key holding U+0000,
 * trailing data) or "duplicate key \"k\"". */
cJSON *sbx_json_parse(const void *p, size_t n, struct sbx_err *err);

/* The same for one JSON object: also "expected a JSON object". */
cJSON *sbx_json_parse_object(const void *p, size_t n, struct sbx_err *err);

/* 1 when v is a string value holding U+0000 (a cJSON_Raw of the parse). */
int sbx_json_has_nul(const cJSON *v);

/* The first string in tree (tree itself, its values, theirs...) that holds
 * U+0000: 1 with its path written to path ("args[2]", "env.PATH",
 * "files[0].path"; keys cut at 64 bytes, the path at n - 1), 0 when none. */
int sbx_json_find_nul(const cJSON *tree, char *path, size_t n);

/* For a tree none of whose strings is data: 0 when no string holds U+0000,
 * else -1 with err EINVAL "field \"<path>\" must not contain NUL (\u0000)". */
int sbx_json_refuse_nul(const cJSON *tree, struct sbx_err *err);

/* Field getters. Each returns 1 when the field is present and valid
 * (filling *out), 0 when absent (leaving *out as is), -1 with err set
 * naming the field when present with the wrong type or out of range.
 * A string that holds U+0000 is refused by sbx_json_get_str. */
int sbx_json_get_str(const cJSON *obj, const char *name, const char **out,
		     struct sbx_err *err);
/* A string that is data: its bytes, U+0000 included, in *out (malloc'd,
 * with a NUL after the last byte; free it) and their count in *len. */
int sbx_json_get_bytes(const cJSON *obj, const char *name, char **out,
		       size_t *len, struct sbx_err *err);
int sbx_json_get_bool(const cJSON *obj, const char *name, int *out,
		      struct sbx_err *err);
/* Move the members named in names[0..n) from src into dst: the
 * allow-list of what a client's request may pass on. */
void sbx_json_move(cJSON *dst, cJSON *src, const char *const *names, size_t n);
int sbx_json_get_i64(const cJSON *obj, const char *name, int64_t min,
		     int64_t max, int64_t *out, struct sbx_err *err);

/* Serialise obj unformatted; returns malloc'd text (free with cJSON_free)
 * or NULL on allocation failure. */
char *sbx_json_print(const cJSON *obj);

#endif
