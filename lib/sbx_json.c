#include "sbx_json.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* Length of the longest prefix of s, at most max bytes, that does not cut
 * a UTF-8 sequence (error messages go out in JSON and WebSocket text). */
static int utf8_prefix(const char *s, int max)
{
	int n = (int)strnlen(s, (size_t)max + 1);

	if (n <= max)
		return n;
	n = max;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

/* JSON forbids raw bytes below 0x20 inside strings, but cJSON takes them,
 * and a NUL then silently ends the C string: {"env\0x":..} would be read
 * as "env". Offset of the first such byte, or (size_t)-1. */
static size_t raw_control_in_string(const unsigned char *p, size_t n)
{
	int in = 0;

	for (size_t i = 0; i < n; i++) {
		if (!in) {
			if (p[i] == '"')
				in = 1;
		} else if (p[i] == '\\') {
			i++;   /* the escaped byte is checked by cJSON */
		} else if (p[i] == '"') {
			in = 0;
		} else if (p[i] < 0x20) {
			return i;
		}
	}
	return (size_t)-1;
}

/* cJSON keeps the first of duplicate keys while other parsers keep the last;
 * a request that means different things to different layers is refused. */
static int has_duplicate_keys(const cJSON *node, const char **dup)
{
	const cJSON *a, *b;

	for (a = node ? node->child : NULL; a; a = a->next) {
		if (cJSON_IsObject(node) && a->string)
			for (b = a->next; b; b = b->next)
				if (b->string && strcmp(a->string, b->string) == 0) {
					*dup = a->string;
					return 1;
				}
		if ((cJSON_IsObject(a) || cJSON_IsArray(a)) &&
		    has_duplicate_keys(a, dup))
			return 1;
	}
	return 0;
}

cJSON *sbx_json_parse_object(const void *p, size_t n, struct sbx_err *err)
{
	const char *end = NULL, *dup = NULL;
	cJSON *root;

	if (n == 0) {
		sbx_err_set(err, EINVAL, "empty body, expected a JSON object");
		return NULL;
	}
	{
		size_t bad = raw_control_in_string(p, n);
		if (bad != (size_t)-1) {
			sbx_err_set(err, EINVAL, "invalid JSON at byte %zu: control character "
				    "in a string (escape it)", bad);
			return NULL;
		}
	}
	root = cJSON_ParseWithLengthOpts(p, n, &end, 0);
	if (!root) {
		size_t at = end && end >= (const char *)p ?
			    (size_t)(end - (const char *)p) : 0;
		if (!end) {
			const char *ep = cJSON_GetErrorPtr();
			at = ep && ep >= (const char *)p &&
			     ep <= (const char *)p + n ?
			     (size_t)(ep - (const char *)p) : 0;
		}
		sbx_err_set(err, EINVAL, "invalid JSON at byte %zu", at);
		return NULL;
	}
	/* Only whitespace may follow the value. */
	if (end) {
		const char *q = end, *lim = (const char *)p + n;
		while (q < lim && (*q == ' ' || *q == '\t' || *q == '\n' ||
				   *q == '\r' || *q == '\0'))
			q++;
		if (q < lim) {
			sbx_err_set(err, EINVAL, "invalid JSON at byte %zu: trailing data",
				    (size_t)(q - (const char *)p));
			cJSON_Delete(root);
			return NULL;
		}
	}
	if (!cJSON_IsObject(root)) {
		sbx_err_set(err, EINVAL, "expected a JSON object");
		cJSON_Delete(root);
		return NULL;
	}
	if (has_duplicate_keys(root, &dup)) {
		sbx_err_set(err, EINVAL, "duplicate key \"%.*s\"", utf8_prefix(dup, 64), dup);
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

int sbx_json_get_str(const cJSON *obj, const char *name, const char **out,
		     struct sbx_err *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);

	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v))
		return sbx_err_set(err, EINVAL, "field \"%s\" must be a string", name);
	*out = v->valuestring;
	return 1;
}

int sbx_json_get_bool(const cJSON *obj, const char *name, int *out,
		      struct sbx_err *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);

	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsBool(v))
		return sbx_err_set(err, EINVAL, "field \"%s\" must be true or false", name);
	*out = cJSON_IsTrue(v);
	return 1;
}

int sbx_json_get_i64(const cJSON *obj, const char *name, int64_t min,
		     int64_t max, int64_t *out, struct sbx_err *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
	double d;

	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsNumber(v))
		return sbx_err_set(err, EINVAL, "field \"%s\" must be a number", name);
	d = v->valuedouble;
	if (!isfinite(d) || d != floor(d))
		return sbx_err_set(err, EINVAL, "field \"%s\" must be an integer", name);
	/* (double)INT64_MAX rounds up to 2^63, which would pass the range
	 * check and overflow the cast: out of int64_t range is out of range */
	if (d < (double)min || d > (double)max ||
	    d >= 9223372036854775808.0 || d < -9223372036854775808.0)
		return sbx_err_set(err, ERANGE,
				   "field \"%s\" must be between %lld and %lld",
				   name, (long long)min, (long long)max);
	*out = (int64_t)d;
	return 1;
}

char *sbx_json_print(const cJSON *obj)
{
	return cJSON_PrintUnformatted(obj);
}
