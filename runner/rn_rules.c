#include "rn_rules.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Headers the proxy frames itself: a rule may not set them. */
static const char *const managed[] = { "connection", "content-length", "transfer-encoding",
				       "host", "keep-alive", "upgrade", "te", "trailer", NULL };

static int is_managed(const char *name)
{
	for (int i = 0; managed[i]; i++)
		if (strcasecmp(name, managed[i]) == 0)
			return 1;
	return 0;
}

static int is_token(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("!#$%&'*+-.^_`|~", *s))
			return 0;
	return 1;
}

/* A header value: printable, tab allowed, no CR, LF or NUL. */
static int is_field_value(const char *s)
{
	for (; *s; s++)
		if (((unsigned char)*s < 0x20 && *s != '\t') || *s == 0x7f)
			return 0;
	return 1;
}

static char *dup_str(const cJSON *v)
{
	return strdup(v->valuestring);
}

static void str_free(struct rn_str_match *m)
{
	if (m->kind == RN_STR_REGEX)
		regfree(&m->re);
	free(m->s);
	m->s = NULL;
	m->kind = RN_STR_ANY;
}

static void rule_free(struct rn_rule *r)
{
	str_free(&r->path);
	for (int i = 0; i < r->n_methods; i++)
		free(r->methods[i]);
	for (int i = 0; i < r->n_query; i++) {
		str_free(&r->query[i].key);
		str_free(&r->query[i].value);
	}
	for (int i = 0; i < r->n_headers; i++) {
		str_free(&r->headers[i].key);
		str_free(&r->headers[i].value);
	}
	for (int i = 0; i < r->n_set; i++) {
		free(r->set[i].name);
		free(r->set[i].value);
	}
	free(r->forward_url);
	free(r->body);
	free(r->content_type);
}

void rn_rules_free(struct rn_rules *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->n; i++)
		rule_free(&r->r[i]);
	free(r->r);
	cJSON_Delete(r->src);
	free(r);
}

#define FIELD_MAX 256

/* "base.key" (key cut at 40 bytes) or "base[i]": the field an error names. */
static void sub_key(char *out, const char *base, const char *key)
{
	size_t n = strlen(base);

	if (n > FIELD_MAX - 48)
		n = FIELD_MAX - 48;
	memcpy(out, base, n);
	snprintf(out + n, FIELD_MAX - n, ".%.40s", key);
}

static void sub_index(char *out, const char *base, int i)
{
	size_t n = strlen(base);

	if (n > FIELD_MAX - 16)
		n = FIELD_MAX - 16;
	memcpy(out, base, n);
	snprintf(out + n, FIELD_MAX - n, "[%d]", i);
}

static int bad(struct sbx_err *err, const char *field, const char *what)
{
	return sbx_err_set(err, EINVAL, "%s: %s", field, what);
}

static int check_text(const cJSON *v, const char *field, size_t max, struct sbx_err *err)
{
	if (!cJSON_IsString(v))
		return bad(err, field, "expected a string");
	if (strlen(v->valuestring) > max)
		return sbx_err_set(err, EINVAL, "%s: longer than %zu bytes", field, max);
	return 0;
}

#define REGEX_MAX 256
#define REGEX_REPEATS_MAX 16
#define REGEX_BOUND_MAX 32
#define REGEX_COUNTED_MAX 2

/* A regex the runner's matcher stays cheap on: short, no back-references,
 * at most REGEX_REPEATS_MAX repetitions, none applied straight to another
 * ("a**", "a+{2}"), and at most two counted ones ({n,m}) up to 32 (glibc
 * copies the repeated part for each count: nested counts multiply).
 * Stacked repetitions made glibc's regcomp take gigabytes under the
 * fuzzer, and a policy is anyone's input. 0 or -1. */
static int regex_cheap(const char *re)
{
	int repeats = 0, counted = 0, after_repeat = 0;

	if (strlen(re) > REGEX_MAX)
		return -1;
	for (const char *c = re; *c; c++) {
		if (*c == '\\') {
			if (!c[1] || (c[1] >= '0' && c[1] <= '9'))
				return -1;
			c++;
			after_repeat = 0;
			continue;
		}
		if (*c == '*' || *c == '+' || *c == '?' || *c == '{') {
			if (after_repeat || ++repeats > REGEX_REPEATS_MAX)
				return -1;
			if (*c == '{') {
				char *end;
				if (++counted > REGEX_COUNTED_MAX)
					return -1;
				long lo = strtol(c + 1, &end, 10), hi = lo;
				if (end == c + 1 || lo > REGEX_BOUND_MAX)
					return -1;
				if (*end == ',') {
					const char *h = end + 1;
					hi = *h == '}' ? 0 : strtol(h, &end, 10);
					if ((*h != '}' && end == h) || hi > REGEX_BOUND_MAX)
						return -1;
					if (*h == '}')
						end = (char *)h;
				}
				if (*end != '}')
					return -1;
				c = end;
			}
			after_repeat = 1;
			continue;
		}
		after_repeat = 0;
	}
	return 0;
}

/* {"exact"|"startsWith"|"regex": s}: exactly one. lower: header names
 * match without regard to case. */
static int parse_str(const cJSON *v, const char *field, int lower, struct rn_str_match *m,
		     struct sbx_err *err)
{
	static const char *const keys[] = { "exact", "startsWith", "regex", NULL };
	static const enum rn_str_kind kinds[] = { RN_STR_EXACT, RN_STR_PREFIX, RN_STR_REGEX };
	const cJSON *f;
	char sub[FIELD_MAX];
	int n = 0;

	if (!cJSON_IsObject(v))
		return bad(err, field, "expected {\"exact\"|\"startsWith\"|\"regex\": string}");
	if (m->s)
		return bad(err, field, "given twice");
	cJSON_ArrayForEach(f, v) {
		int k;
		for (k = 0; keys[k] && strcmp(f->string, keys[k]) != 0; k++)
			;
		sub_key(sub, field, f->string);
		if (!keys[k])
			return bad(err, sub, "unknown field (exact, startsWith, regex)");
		if (++n > 1)
			return bad(err, field, "one of exact, startsWith, regex");
		if (check_text(f, sub, RN_RULE_TEXT_MAX, err) < 0)
			return -1;
		m->s = dup_str(f);
		if (!m->s)
			return sbx_err_set(err, ENOMEM, "out of memory");
		m->kind = kinds[k];
		if (lower && m->kind != RN_STR_REGEX)
			for (char *c = m->s; *c; c++)
				*c = (char)tolower((unsigned char)*c);
		if (m->kind == RN_STR_REGEX && regex_cheap(m->s) < 0) {
			m->kind = RN_STR_ANY;
			return bad(err, sub, "a regular expression of at most 256 bytes, 16 "
				   "repetitions (two counted, up to {32}), none of a repetition, "
				   "no back-references");
		}
		if (m->kind == RN_STR_REGEX &&
		    regcomp(&m->re, m->s, REG_EXTENDED | REG_NOSUB | (lower ? REG_ICASE : 0)) != 0) {
			m->kind = RN_STR_ANY;
			return bad(err, sub, "not a valid (POSIX extended) regular expression");
		}
	}
	if (n == 0)
		return bad(err, field, "expected one of exact, startsWith, regex");
	return 0;
}

static int parse_kvs(const cJSON *v, const char *field, int lower, struct rn_kv_match *out,
		     int *n, struct sbx_err *err)
{
	const cJSON *it, *f;
	char sub[FIELD_MAX];

	if (!cJSON_IsArray(v))
		return bad(err, field, "expected a list of {key, value} matchers");
	cJSON_ArrayForEach(it, v) {
		if (*n >= RN_RULE_KV_MAX)
			return sbx_err_set(err, EINVAL, "%s: at most %d", field, RN_RULE_KV_MAX);
		sub_index(sub, field, *n);
		if (!cJSON_IsObject(it))
			return bad(err, sub, "expected {key, value}");
		struct rn_kv_match *m = &out[(*n)++];
		cJSON_ArrayForEach(f, it) {
			char sub2[FIELD_MAX];
			sub_key(sub2, sub, f->string);
			if (strcmp(f->string, "key") == 0) {
				if (parse_str(f, sub2, lower, &m->key, err) < 0)
					return -1;
			} else if (strcmp(f->string, "value") == 0) {
				if (parse_str(f, sub2, 0, &m->value, err) < 0)
					return -1;
			} else {
				return bad(err, sub2, "unknown field (key, value)");
			}
		}
	}
	return 0;
}

static int parse_match(const cJSON *v, const char *field, struct rn_rule *r, struct sbx_err *err)
{
	const cJSON *f, *it;
	char sub[FIELD_MAX];

	if (!cJSON_IsObject(v))
		return bad(err, field, "expected an object (path, method, queryString, headers)");
	cJSON_ArrayForEach(f, v) {
		sub_key(sub, field, f->string);
		if (strcmp(f->string, "path") == 0) {
			if (parse_str(f, sub, 0, &r->path, err) < 0)
				return -1;
		} else if (strcmp(f->string, "method") == 0) {
			if (!cJSON_IsArray(f))
				return bad(err, sub, "expected a list of methods");
			cJSON_ArrayForEach(it, f) {
				if (r->n_methods >= 16)
					return bad(err, sub, "at most 16 methods");
				if (!cJSON_IsString(it) || !is_token(it->valuestring) ||
				    strlen(it->valuestring) > 32)
					return bad(err, sub, "expected method names such as \"POST\"");
				if (!(r->methods[r->n_methods] = dup_str(it)))
					return sbx_err_set(err, ENOMEM, "out of memory");
				r->n_methods++;
			}
		} else if (strcmp(f->string, "queryString") == 0) {
			if (parse_kvs(f, sub, 0, r->query, &r->n_query, err) < 0)
				return -1;
		} else if (strcmp(f->string, "headers") == 0) {
			if (parse_kvs(f, sub, 1, r->headers, &r->n_headers, err) < 0)
				return -1;
		} else {
			return bad(err, sub, "unknown field (path, method, queryString, headers)");
		}
	}
	return 0;
}

/* name -> value pairs of o into r->set; what a header may be. */
static int parse_headers(const cJSON *o, const char *field, struct rn_rule *r,
			 struct sbx_err *err)
{
	const cJSON *f;
	char sub[FIELD_MAX];

	if (!cJSON_IsObject(o))
		return bad(err, field, "expected an object of header name -> value");
	cJSON_ArrayForEach(f, o) {
		sub_key(sub, field, f->string);
		if (r->n_set >= RN_RULE_HDR_MAX)
			return sbx_err_set(err, EINVAL, "%s: at most %d headers", field,
					   RN_RULE_HDR_MAX);
		if (!is_token(f->string) || strlen(f->string) > 128)
			return bad(err, sub, "not a header name");
		if (is_managed(f->string))
			return bad(err, sub, "a header the proxy manages (connection, content-length, "
				   "transfer-encoding, host, keep-alive, upgrade, te, trailer)");
		for (int i = 0; i < r->n_set; i++)
			if (strcasecmp(r->set[i].name, f->string) == 0)
				return bad(err, sub, "a header named twice");
		if (check_text(f, sub, RN_RULE_TEXT_MAX, err) < 0)
			return -1;
		if (!is_field_value(f->valuestring))
			return bad(err, sub, "control characters in a header value");
		if (strcmp(f->valuestring, "<redacted>") == 0)
			return bad(err, sub, "\"<redacted>\" is how a secret is shown, not a value: "
				   "give the value");
		r->set[r->n_set].name = strdup(f->string);
		r->set[r->n_set].value = dup_str(f);
		r->n_set++;
		if (!r->set[r->n_set - 1].name || !r->set[r->n_set - 1].value)
			return sbx_err_set(err, ENOMEM, "out of memory");
	}
	return 0;
}

static int parse_transform(const cJSON *v, const char *field, struct rn_rule *r,
			   struct sbx_err *err)
{
	const cJSON *it, *f;
	char sub[FIELD_MAX];
	int i = 0;

	if (!cJSON_IsArray(v))
		return bad(err, field, "expected a list of {headers}");
	cJSON_ArrayForEach(it, v) {
		sub_index(sub, field, i++);
		if (!cJSON_IsObject(it))
			return bad(err, sub, "expected {headers}");
		cJSON_ArrayForEach(f, it) {
			char sub2[FIELD_MAX];
			sub_key(sub2, sub, f->string);
			if (strcmp(f->string, "headers") != 0)
				return bad(err, sub2, "unknown field (headers)");
			if (parse_headers(f, sub2, r, err) < 0)
				return -1;
		}
	}
	r->kind = RN_RULE_TRANSFORM;
	return 0;
}

int rn_forward_url_split(const char *url, char *host, size_t hostn, int *port,
			 char *path, size_t pathn)
{
	const char *h, *end, *colon;
	size_t n;

	if (strncmp(url, "https://", 8) != 0)
		return -1;
	h = url + 8;
	end = h + strcspn(h, "/?#");
	if (*end == '?' || *end == '#' || strpbrk(end, "?#"))
		return -1;
	colon = memchr(h, ':', (size_t)(end - h));
	n = (size_t)((colon ? colon : end) - h);
	if (n == 0 || n >= hostn || memchr(h, '@', (size_t)(end - h)))
		return -1;
	memcpy(host, h, n);
	host[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)host[i]) && host[i] != '-' && host[i] != '.')
			return -1;
	*port = 443;
	if (colon) {
		char *e;
		long p = strtol(colon + 1, &e, 10);
		if (e != end || colon + 1 == end || p < 1 || p > 65535)
			return -1;
		*port = (int)p;
	}
	/* the path prefix without a trailing '/': the request's path follows */
	n = strlen(end);
	while (n > 0 && end[n - 1] == '/')
		n--;
	if (n >= pathn || !is_field_value(end) || strpbrk(end, " \t"))
		return -1;
	memcpy(path, end, n);
	path[n] = '\0';
	return 0;
}

static int parse_response(const cJSON *v, const char *field, struct rn_rule *r,
			  struct sbx_err *err)
{
	const cJSON *f;
	char sub[FIELD_MAX];
	int have_status = 0;

	if (!cJSON_IsObject(v))
		return bad(err, field, "expected {statusCode, headers, body, contentType}");
	cJSON_ArrayForEach(f, v) {
		sub_key(sub, field, f->string);
		if (strcmp(f->string, "statusCode") == 0) {
			/* the range before the cast: a huge double to int is undefined */
			if (!cJSON_IsNumber(f) || !(f->valuedouble >= 200 && f->valuedouble <= 599) ||
			    f->valuedouble != (double)(int)f->valuedouble)
				return bad(err, sub, "expected a whole number from 200 to 599");
			r->status = (int)f->valuedouble;
			have_status = 1;
		} else if (strcmp(f->string, "headers") == 0) {
			if (parse_headers(f, sub, r, err) < 0)
				return -1;
		} else if (strcmp(f->string, "body") == 0) {
			if (r->body)
				return bad(err, sub, "given twice");
			if (check_text(f, sub, RN_RULE_BODY_MAX, err) < 0)
				return -1;
			if (!(r->body = dup_str(f)))
				return sbx_err_set(err, ENOMEM, "out of memory");
		} else if (strcmp(f->string, "contentType") == 0) {
			if (r->content_type)
				return bad(err, sub, "given twice");
			if (check_text(f, sub, 256, err) < 0)
				return -1;
			if (!is_field_value(f->valuestring))
				return bad(err, sub, "control characters in a header value");
			if (!(r->content_type = dup_str(f)))
				return sbx_err_set(err, ENOMEM, "out of memory");
		} else {
			return bad(err, sub, "unknown field (statusCode, headers, body, contentType)");
		}
	}
	if (!have_status)
		return bad(err, field, "statusCode is required");
	if (r->body && !r->content_type)
		return bad(err, field, "contentType is required with a body");
	if (r->body && (r->status == 204 || r->status == 205 || r->status == 304))
		return bad(err, field, "no body on 204, 205 or 304");
	for (int i = 0; i < r->n_set; i++)
		if (r->content_type && strcasecmp(r->set[i].name, "content-type") == 0)
			return bad(err, field, "content-type both in headers and contentType");
	r->kind = RN_RULE_RESPONSE;
	return 0;
}

static int parse_rule(const cJSON *v, const char *field, struct rn_rule *r, struct sbx_err *err)
{
	const cJSON *f;
	char sub[FIELD_MAX];
	int actions = 0;

	if (!cJSON_IsObject(v))
		return bad(err, field, "expected an object");
	cJSON_ArrayForEach(f, v) {
		sub_key(sub, field, f->string);
		if (strcmp(f->string, "match") == 0) {
			if (parse_match(f, sub, r, err) < 0)
				return -1;
			continue;
		}
		if (strcmp(f->string, "transform") && strcmp(f->string, "forwardURL") &&
		    strcmp(f->string, "response"))
			return bad(err, sub, "unknown field (match, transform, response, forwardURL)");
		if (++actions > 1)
			return bad(err, sub, "only one of transform, forwardURL, response per rule");
		if (strcmp(f->string, "transform") == 0) {
			if (parse_transform(f, sub, r, err) < 0)
				return -1;
		} else if (strcmp(f->string, "response") == 0) {
			if (parse_response(f, sub, r, err) < 0)
				return -1;
		} else {
			char host[256], path[1024];
			int port;
			if (check_text(f, sub, 1024, err) < 0)
				return -1;
			if (rn_forward_url_split(f->valuestring, host, sizeof(host), &port, path,
						 sizeof(path)) < 0)
				return bad(err, sub, "expected https://host[:port][/path] without a "
					   "query or fragment");
			if (!(r->forward_url = dup_str(f)))
				return sbx_err_set(err, ENOMEM, "out of memory");
			r->kind = RN_RULE_FORWARD;
		}
	}
	if (actions == 0)
		return bad(err, field, "one of transform, forwardURL, response is required");
	return 0;
}

int rn_rules_parse(const cJSON *v, const char *name, struct rn_rules **out,
		   struct sbx_err *err)
{
	struct rn_rules *rs;
	const cJSON *it;
	char field[FIELD_MAX];
	int n;

	*out = NULL;
	snprintf(field, sizeof(field), "network.allow[\"%.80s\"]", name);
	if (!cJSON_IsArray(v))
		return bad(err, field, "expected a list of rules");
	n = cJSON_GetArraySize(v);
	if (n == 0)
		return 0;
	if (n > RN_RULES_MAX)
		return sbx_err_set(err, EINVAL, "%s: at most %d rules", field, RN_RULES_MAX);
	rs = calloc(1, sizeof(*rs));
	if (!rs || !(rs->r = calloc((size_t)n, sizeof(*rs->r))) ||
	    !(rs->src = cJSON_Duplicate(v, 1))) {
		rn_rules_free(rs);
		return sbx_err_set(err, ENOMEM, "out of memory");
	}
	cJSON_ArrayForEach(it, v) {
		char sub[FIELD_MAX];
		sub_index(sub, field, rs->n);
		rs->n++;        /* freed whole even when half parsed */
		if (parse_rule(it, sub, &rs->r[rs->n - 1], err) < 0) {
			rn_rules_free(rs);
			return -1;
		}
	}
	*out = rs;
	return 0;
}

struct rn_rules *rn_rules_dup(const struct rn_rules *r)
{
	struct rn_rules *c = NULL;
	struct sbx_err err = { 0, "" };

	if (!r)
		return NULL;
	rn_rules_parse(r->src, "", &c, &err);
	return c;
}

static cJSON *str_json(const struct rn_str_match *m)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, m->kind == RN_STR_EXACT ? "exact" :
				m->kind == RN_STR_PREFIX ? "startsWith" : "regex", m->s);
	return o;
}

static cJSON *kvs_json(const struct rn_kv_match *m, int n)
{
	cJSON *a = cJSON_CreateArray();

	for (int i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		if (m[i].key.kind != RN_STR_ANY)
			cJSON_AddItemToObject(o, "key", str_json(&m[i].key));
		if (m[i].value.kind != RN_STR_ANY)
			cJSON_AddItemToObject(o, "value", str_json(&m[i].value));
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

cJSON *rn_rules_json(const struct rn_rules *rs)
{
	cJSON *a = cJSON_CreateArray();

	for (int i = 0; rs && i < rs->n; i++) {
		const struct rn_rule *r = &rs->r[i];
		cJSON *o = cJSON_CreateObject(), *h;
		if (r->path.kind != RN_STR_ANY || r->n_methods || r->n_query || r->n_headers) {
			cJSON *m = cJSON_AddObjectToObject(o, "match");
			if (r->path.kind != RN_STR_ANY)
				cJSON_AddItemToObject(m, "path", str_json(&r->path));
			if (r->n_methods) {
				cJSON *ms = cJSON_AddArrayToObject(m, "method");
				for (int k = 0; k < r->n_methods; k++)
					cJSON_AddItemToArray(ms, cJSON_CreateString(r->methods[k]));
			}
			if (r->n_query)
				cJSON_AddItemToObject(m, "queryString", kvs_json(r->query, r->n_query));
			if (r->n_headers)
				cJSON_AddItemToObject(m, "headers", kvs_json(r->headers, r->n_headers));
		}
		switch (r->kind) {
		case RN_RULE_TRANSFORM: {
			/* the values are secrets: their names only */
			cJSON *t = cJSON_AddArrayToObject(o, "transform"), *one = cJSON_CreateObject();
			h = cJSON_AddObjectToObject(one, "headers");
			for (int k = 0; k < r->n_set; k++)
				cJSON_AddStringToObject(h, r->set[k].name, "<redacted>");
			cJSON_AddItemToArray(t, one);
			break;
		}
		case RN_RULE_FORWARD:
			cJSON_AddStringToObject(o, "forwardURL", r->forward_url);
			break;
		case RN_RULE_RESPONSE: {
			cJSON *resp = cJSON_AddObjectToObject(o, "response");
			cJSON_AddNumberToObject(resp, "statusCode", r->status);
			if (r->n_set) {
				h = cJSON_AddObjectToObject(resp, "headers");
				for (int k = 0; k < r->n_set; k++)
					cJSON_AddStringToObject(h, r->set[k].name, r->set[k].value);
			}
			if (r->body)
				cJSON_AddStringToObject(resp, "body", r->body);
			if (r->content_type)
				cJSON_AddStringToObject(resp, "contentType", r->content_type);
			break;
		}
		}
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static int str_ok(const struct rn_str_match *m, const char *s, int lower)
{
	switch (m->kind) {
	case RN_STR_ANY:
		return 1;
	case RN_STR_EXACT:
		return lower ? strcasecmp(s, m->s) == 0 : strcmp(s, m->s) == 0;
	case RN_STR_PREFIX:
		return lower ? strncasecmp(s, m->s, strlen(m->s)) == 0 :
			       strncmp(s, m->s, strlen(m->s)) == 0;
	case RN_STR_REGEX:
		return regexec(&m->re, s, 0, NULL, 0) == 0;
	}
	return 0;
}

/* Some query entry of q satisfies m (entries split at '&', the key at
 * the first '=', compared as sent). */
static int query_ok(const struct rn_kv_match *m, const char *q)
{
	char key[1024], val[4096];

	while (*q) {
		size_t n = strcspn(q, "&");
		const char *eq = memchr(q, '=', n);
		size_t kn = eq ? (size_t)(eq - q) : n, vn = eq ? n - kn - 1 : 0;
		if (kn < sizeof(key) && vn < sizeof(val)) {
			memcpy(key, q, kn);
			key[kn] = '\0';
			memcpy(val, eq ? eq + 1 : "", vn);
			val[vn] = '\0';
			if (str_ok(&m->key, key, 0) && str_ok(&m->value, val, 0))
				return 1;
		}
		q += n;
		if (*q == '&')
			q++;
	}
	return 0;
}

static int header_ok(const struct rn_kv_match *m, const struct rn_req_view *q)
{
	for (int i = 0; i < q->n_headers; i++)
		if (str_ok(&m->key, q->hnames[i], 1) && str_ok(&m->value, q->hvalues[i], 0))
			return 1;
	return 0;
}

static int rule_matches(const struct rn_rule *r, const struct rn_req_view *q)
{
	int ok = r->n_methods == 0;

	for (int i = 0; i < r->n_methods && !ok; i++)
		ok = strcasecmp(r->methods[i], q->method) == 0;
	if (!ok || !str_ok(&r->path, q->path, 0))
		return 0;
	for (int i = 0; i < r->n_query; i++)
		if (!query_ok(&r->query[i], q->query))
			return 0;
	for (int i = 0; i < r->n_headers; i++)
		if (!header_ok(&r->headers[i], q))
			return 0;
	return 1;
}

const struct rn_rule *rn_rules_pick(const struct rn_rules *rs, const struct rn_req_view *q)
{
	for (int i = 0; rs && i < rs->n; i++)
		if (rule_matches(&rs->r[i], q))
			return &rs->r[i];
	return NULL;
}
