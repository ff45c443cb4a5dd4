#include "sbx_json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

static int is_hex(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Bytes in strings that cJSON takes but JSON forbids, and that would make a
 * NUL of their own: a raw byte below 0x20 (a raw NUL ends the C string:
 * {"env\0x":..} would be read as "env"), and a \u escape without four hex
 * digits (cJSON decodes "\uZZZZ" as U+0000, which no check of "\u0000"
 * would see). Offset of the first one with *why, or (size_t)-1. */
static size_t bad_byte_in_string(const unsigned char *p, size_t n, const char **why)
{
	int in = 0;

	for (size_t i = 0; i < n; i++) {
		if (!in) {
			if (p[i] == '"')
				in = 1;
		} else if (p[i] == '\\') {
			if (i + 1 < n && p[i + 1] == 'u' &&
			    !(i + 5 < n && is_hex(p[i + 2]) && is_hex(p[i + 3]) &&
			      is_hex(p[i + 4]) && is_hex(p[i + 5]))) {
				*why = "\\u needs four hex digits";
				return i;
			}
			i++;   /* any other escaped byte is checked by cJSON */
		} else if (p[i] == '"') {
			in = 0;
		} else if (p[i] < 0x20) {
			*why = "control character in a string (escape it)";
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

/* ---- strings holding U+0000 (sbx_json.h, "Whole strings") ---- */

/* The next string of the JSON text t[*at, lim): its opening quote at
 * *start, one past its closing quote at *stop, *nul set when it holds a
 * \u0000 escape. 0 when there is none. t is text cJSON accepted, so a
 * quote outside a string opens one, and a backslash in one escapes the
 * next byte (the four hex digits of \u are plain bytes). */
static int next_string(const char *t, size_t lim, size_t *at, size_t *start,
		       size_t *stop, int *nul)
{
	size_t i = *at;

	while (i < lim && t[i] != '"')
		i++;
	if (i >= lim)
		return 0;
	*start = i++;
	*nul = 0;
	while (i < lim && t[i] != '"') {
		if (t[i] != '\\') {
			i++;
			continue;
		}
		if (i + 5 < lim && t[i + 1] == 'u' && !memcmp(t + i + 2, "0000", 4))
			*nul = 1;
		i += 2;
	}
	if (i >= lim)
		return 0;
	*stop = *at = i + 1;
	return 1;
}

struct nul_walk {
	const char *t;
	size_t lim, at;
	struct sbx_err *err;
};

/* The text's next string, which must be there: cJSON made an item of it. */
static int take(struct nul_walk *w, size_t *start, size_t *stop, int *nul)
{
	if (!next_string(w->t, w->lim, &w->at, start, stop, nul))
		return sbx_err_set(w->err, EINVAL, "invalid JSON: its strings do not line up");
	return 0;
}

/* The string item it, whose text is t[0, n) with its quotes, as the
 * cJSON_Raw that stands for a string holding U+0000. */
static int to_raw(cJSON *it, const char *t, size_t n, struct sbx_err *err)
{
	char *raw = cJSON_malloc(n + 1);

	if (!raw)
		return sbx_err_set(err, ENOMEM, "out of memory");
	memcpy(raw, t, n);
	raw[n] = '\0';
	cJSON_free(it->valuestring);
	it->valuestring = raw;
	it->type = cJSON_Raw;
	return 0;
}

/* Walk the tree in the order of the text (cJSON builds it in that order:
 * a member's key, then its value), taking one string of the text for each
 * key and each string value. */
static int mark_nul(struct nul_walk *w, cJSON *it)
{
	size_t start, stop;
	int nul;

	if (cJSON_IsString(it)) {
		if (take(w, &start, &stop, &nul))
			return -1;
		return nul ? to_raw(it, w->t + start, stop - start, w->err) : 0;
	}
	if (!cJSON_IsArray(it) && !cJSON_IsObject(it))
		return 0;
	for (cJSON *c = it->child; c; c = c->next) {
		if (cJSON_IsObject(it)) {
			if (take(w, &start, &stop, &nul))
				return -1;
			if (nul)
				return sbx_err_set(w->err, EINVAL, "invalid JSON at byte %zu: a key "
						   "holds NUL (\\u0000)", start);
		}
		if (mark_nul(w, c))
			return -1;
	}
	return 0;
}

/* Strings of root (parsed from t[0, lim)) that hold U+0000 become raw
 * items; a key that holds one is an error. The six bytes "\u0000" are in
 * the text of any such string, so a text without them is done at once. */
static int keep_strings_whole(cJSON *root, const char *t, size_t lim, struct sbx_err *err)
{
	struct nul_walk w = { t, lim, 0, err };
	size_t start, stop;
	int nul;

	if (!memmem(t, lim, "\\u0000", 6))
		return 0;
	if (mark_nul(&w, root))
		return -1;
	if (next_string(t, lim, &w.at, &start, &stop, &nul))
		return sbx_err_set(err, EINVAL, "invalid JSON: its strings do not line up");
	return 0;
}

int sbx_json_has_nul(const cJSON *v)
{
	return v && cJSON_IsRaw(v) && v->valuestring && v->valuestring[0] == '"';
}

/* find_nul's walk under it, whose own path is path[0, len). */
static int find_nul(const cJSON *it, char *path, size_t n, size_t len)
{
	int i = 0;

	for (const cJSON *c = it->child; c; c = c->next, i++) {
		int k = cJSON_IsObject(it) ?
			snprintf(path + len, n - len, "%s%.*s", len ? "." : "",
				 utf8_prefix(c->string ? c->string : "", 64),
				 c->string ? c->string : "") :
			snprintf(path + len, n - len, "[%d]", i);
		size_t end = k < 0 ? len : len + (size_t)k;

		if (end >= n)
			end = n - 1;   /* cut: still names where it starts */
		if (sbx_json_has_nul(c) || (c->child && find_nul(c, path, n, end)))
			return 1;
	}
	path[len] = '\0';
	return 0;
}

int sbx_json_find_nul(const cJSON *tree, char *path, size_t n)
{
	if (!n)
		return 0;
	path[0] = '\0';
	if (!tree)
		return 0;
	return sbx_json_has_nul(tree) || find_nul(tree, path, n, 0);
}

int sbx_json_refuse_nul(const cJSON *tree, struct sbx_err *err)
{
	char path[200];

	if (!sbx_json_find_nul(tree, path, sizeof path))
		return 0;
	return sbx_err_set(err, EINVAL, "field \"%s\" must not contain NUL (\\u0000)", path);
}

static int hex4(const char *s, unsigned *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {   /* stops at the terminating NUL */
		char c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return -1;
		*v = *v << 4 | (unsigned)d;
	}
	return 0;
}

static size_t utf8_put(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Decode the JSON string s, its quotes included (text cJSON accepted), into
 * out, which has room for strlen(s) bytes (no escape grows). Its length,
 * or -1 when s is not such a string. */
static long decode_string(const char *s, char *out)
{
	const char *p = s + 1;
	char *o = out;

	if (s[0] != '"')
		return -1;
	while (*p && *p != '"') {
		unsigned cp, lo;

		if (*p != '\\') {
			*o++ = *p++;
			continue;
		}
		switch (*++p) {
		case '"': case '\\': case '/': *o++ = *p; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u':
			if (hex4(p + 1, &cp))
				return -1;
			p += 4;
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return -1;   /* a low surrogate first, as cJSON refuses */
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (p[1] != '\\' || p[2] != 'u' || hex4(p + 3, &lo) ||
				    lo < 0xdc00 || lo > 0xdfff)
					return -1;
				p += 6;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			o += utf8_put(o, cp);
			break;
		default:
			return -1;
		}
		p++;
	}
	if (*p != '"' || p[1])
		return -1;
	return (long)(o - out);
}

/* ---- parsing ---- */

cJSON *sbx_json_parse(const void *p, size_t n, struct sbx_err *err)
{
	const char *end = NULL, *dup = NULL;
	cJSON *root;

	if (n == 0) {
		sbx_err_set(err, EINVAL, "empty body, expected a JSON object");
		return NULL;
	}
	{
		const char *why = "";
		size_t bad = bad_byte_in_string(p, n, &why);
		if (bad != (size_t)-1) {
			sbx_err_set(err, EINVAL, "invalid JSON at byte %zu: %s", bad, why);
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
	if (keep_strings_whole(root, p, end ? (size_t)(end - (const char *)p) : n, err)) {
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

cJSON *sbx_json_parse_object(const void *p, size_t n, struct sbx_err *err)
{
	cJSON *root = sbx_json_parse(p, n, err);

	if (root && !cJSON_IsObject(root)) {
		sbx_err_set(err, EINVAL, "expected a JSON object");
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
	if (sbx_json_has_nul(v))
		return sbx_err_set(err, EINVAL, "field \"%s\" must not contain NUL (\\u0000)", name);
	if (!cJSON_IsString(v))
		return sbx_err_set(err, EINVAL, "field \"%s\" must be a string", name);
	*out = v->valuestring;
	return 1;
}

int sbx_json_get_bytes(const cJSON *obj, const char *name, char **out,
		       size_t *len, struct sbx_err *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
	size_t room;
	long k;
	char *b;

	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v) && !sbx_json_has_nul(v))
		return sbx_err_set(err, EINVAL, "field \"%s\" must be a string", name);
	room = strlen(v->valuestring);
	if (!(b = malloc(room + 1)))
		return sbx_err_set(err, ENOMEM, "field \"%s\": out of memory", name);
	if (cJSON_IsString(v)) {
		memcpy(b, v->valuestring, room);
		k = (long)room;
	} else if ((k = decode_string(v->valuestring, b)) < 0) {
		free(b);   /* not text the parse made: not ours to guess at */
		return sbx_err_set(err, EINVAL, "field \"%s\" is not a JSON string", name);
	}
	b[k] = '\0';
	*out = b;
	*len = (size_t)k;
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

void sbx_json_move(cJSON *dst, cJSON *src, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(src, names[i]);
		if (v)
			cJSON_AddItemToObject(dst, names[i], v);
	}
}
