/* The `list` operation (docs/runner.md). A reply is one frame that must fit
 * the connection's output buffer (rn_conn.h), so it holds at most
 * LIST_BUDGET bytes of sandboxes:
 * - paged (any of "owner", "after", "limit"): the sandboxes of that owner
 *   whose id sorts after "after", in id order, at most "limit" of them;
 *   "next" names the last one when more follow, and the caller asks again
 *   with "after": next;
 * - whole (none of them): live sandboxes first, then stopped ones, while
 *   they fit; "truncated":true says some were left out (get still answers
 *   for each). */
#include "rn_list.h"

#include <stdlib.h>
#include <string.h>

#include "rn_sandbox.h"
#include "sbx_json.h"

#define LIST_BUDGET (RN_SPLICE_BUF - 16u * 1024)

/* Appends item when it fits the budget (else frees it): 0 added, -1 full. */
static int add(cJSON *arr, cJSON *item, size_t *total)
{
	char *txt = sbx_json_print(item);
	*total += txt ? strlen(txt) + 1 : LIST_BUDGET;
	cJSON_free(txt);
	if (*total > LIST_BUDGET) {
		cJSON_Delete(item);
		return -1;
	}
	cJSON_AddItemToArray(arr, item);
	return 0;
}

static void whole(struct runner *r, struct rn_conn *c)
{
	cJSON *o = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(o, "sandboxes");
	size_t total = 0;
	int truncated = 0;

	cJSON_AddBoolToObject(o, "ok", 1);
	for (int pass = 0; pass < 2 && !truncated; pass++)
		for (struct rn_sandbox *sb = r->sandboxes; sb && !truncated; sb = sb->next)
			if (!sb->warm && rn_sandbox_final(sb) == pass && add(a, rn_sandbox_json(r, sb), &total))
				truncated = 1;
	if (truncated)
		cJSON_AddBoolToObject(o, "truncated", 1);
	rn_conn_reply_obj(c, o);
}

static int by_id(const void *a, const void *b)
{
	return strcmp((*(struct rn_sandbox *const *)a)->id, (*(struct rn_sandbox *const *)b)->id);
}

static void paged(struct runner *r, struct rn_conn *c, const char *owner, const char *after,
		  int64_t limit)
{
	size_t n = 0, cap = 0, total = 0, i;
	struct rn_sandbox **v = NULL, *sb;
	cJSON *o, *a;

	for (sb = r->sandboxes; sb; sb = sb->next)
		cap++;
	if (cap && !(v = malloc(cap * sizeof *v))) {
		rn_conn_reply_err(c, "internal", "out of memory");
		return;
	}
	for (sb = r->sandboxes; sb; sb = sb->next)
		if (!sb->warm && (!owner || !strcmp(sb->spec.owner, owner)) && (!after || strcmp(sb->id, after) > 0))
			v[n++] = sb;
	if (n)
		qsort(v, n, sizeof *v, by_id);
	o = cJSON_CreateObject();
	a = cJSON_AddArrayToObject(o, "sandboxes");
	cJSON_AddBoolToObject(o, "ok", 1);
	for (i = 0; i < n && (int64_t)i < limit; i++)
		if (add(a, rn_sandbox_json(r, v[i]), &total))
			break;
	if (i < n && i > 0)
		cJSON_AddStringToObject(o, "next", v[i - 1]->id);
	else if (i < n)   /* not even one fits: cannot happen with the budget */
		cJSON_AddBoolToObject(o, "truncated", 1);
	free(v);
	rn_conn_reply_obj(c, o);
}

void rn_list(struct runner *r, struct rn_conn *c, const cJSON *req)
{
	struct sbx_err err = { 0, "" };
	const char *owner = NULL, *after = NULL;
	int64_t limit = RN_LIST_LIMIT_MAX;
	int ho, ha, hl;

	if ((ho = sbx_json_get_str(req, "owner", &owner, &err)) < 0 ||
	    (ha = sbx_json_get_str(req, "after", &after, &err)) < 0 ||
	    (hl = sbx_json_get_i64(req, "limit", 1, RN_LIST_LIMIT_MAX, &limit, &err)) < 0) {
		rn_conn_reply_err(c, "invalid", err.msg);
		return;
	}
	if (owner && strlen(owner) >= sizeof(((struct rn_spec *)0)->owner)) {
		rn_conn_reply_err(c, "invalid", "owner: at most 64 bytes");
		return;
	}
	if (after && strlen(after) >= RN_ID_MAX) {
		rn_conn_reply_err(c, "invalid", "after: longer than a sandbox id");
		return;
	}
	if (ho || ha || hl)
		paged(r, c, owner, after, limit);
	else
		whole(r, c);
}
