/* JSON helpers on cJSON for untrusted input: parse with a length (buffers
 * are not NUL-terminated), report where a parse failed, reject duplicate
 * keys, and typed field getters whose errors name the field. */
#ifndef SBX_JSON_H
#define SBX_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "sbx_err.h"

/* Parse [p, p+n) as one JSON object. Returns a tree the caller frees with
 * cJSON_Delete, or NULL with err set: EINVAL "invalid JSON at byte N",
 * "duplicate key \"k\"", or "expected a JSON object". */
cJSON *sbx_json_parse_object(const void *p, size_t n, struct sbx_err *err);

/* Field getters. Each returns 1 when the field is present and valid
 * (filling *out), 0 when absent (leaving *out as is), -1 with err set
 * naming the field when present with the wrong type or out of range. */
int sbx_json_get_str(const cJSON *obj, const char *name, const char **out,
		     struct sbx_err *err);
int sbx_json_get_bool(const cJSON *obj, const char *name, int *out,
		      struct sbx_err *err);
int sbx_json_get_i64(const cJSON *obj, const char *name, int64_t min,
		     int64_t max, int64_t *out, struct sbx_err *err);

/* Serialise obj unformatted; returns malloc'd text (free with cJSON_free)
 * or NULL on allocation failure. */
char *sbx_json_print(const cJSON *obj);

#endif
