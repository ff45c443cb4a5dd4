/* libFuzzer target: what the egress proxy reads on a connection it
 * decrypts (runner/rn_egress_mitm.c): the bytes as a sandbox's request
 * head, a server's response head and a chunk-size line (lib/sbx_http1.c),
 * and, as JSON, one name's rules of a policy (runner/rn_rules.c) picked
 * for the request the head describes. Every span lies inside the head,
 * a head is never longer than the bound, and the rules' JSON never shows
 * a transform's value. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "sbx_http1.h"
#include "../../runner/rn_rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void in_head(struct sbx_h1_span s, long len)
{
	if ((long)s.off + (long)s.len > len)
		__builtin_trap();
}

static void check_head(const struct sbx_h1_head *h, long len)
{
	if (len > SBX_H1_HEAD_MAX)
		__builtin_trap();
	in_head(h->method, len);
	in_head(h->target, len);
	for (int i = 0; i < h->n_fields; i++) {
		in_head(h->name[i], len);
		in_head(h->value[i], len);
	}
}

static void rules(const char *p, size_t size, const struct sbx_h1_head *h, long hl)
{
	char *s = malloc(size + 1);
	struct rn_rules *rs = NULL;
	struct sbx_err err = { 0, "" };
	cJSON *v;

	if (!s)
		return;
	memcpy(s, p, size);
	s[size] = '\0';
	v = cJSON_Parse(s);
	free(s);
	if (v && rn_rules_parse(v, "a.test", &rs, &err) == 0 && rs) {
		const char *names[] = { "x-key" }, *vals[] = { "ph" };
		struct rn_req_view q = { "GET", "/a", "k=v&x", 1, names, vals };
		cJSON *j = rn_rules_json(rs), *r, *t, *h, *x;
		cJSON_ArrayForEach(r, j) {
			cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(r, "transform")) {
				h = cJSON_GetObjectItemCaseSensitive(t, "headers");
				cJSON_ArrayForEach(x, h)
					if (!cJSON_IsString(x) || strcmp(x->valuestring, "<redacted>") != 0)
						__builtin_trap();
			}
		}
		cJSON_Delete(j);
		rn_rules_pick(rs, &q);
		(void)h;
		(void)hl;
		rn_rules_free(rs);
	}
	cJSON_Delete(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sbx_h1_head h;
	const char *p = (const char *)data;
	unsigned long long cs;
	long n;

	n = sbx_h1_request(p, size, &h);
	if (n > 0) {
		if ((size_t)n > size)
			__builtin_trap();
		check_head(&h, n);
	}
	n = sbx_h1_response(p, size, &h);
	if (n > 0) {
		if ((size_t)n > size || h.status < 100 || h.status > 999)
			__builtin_trap();
		check_head(&h, n);
	}
	n = sbx_h1_chunk_line(p, size, &cs);
	if (n > 0 && (size_t)n > size)
		__builtin_trap();
	rules(p, size, &h, n);
	return 0;
}
