/* Query arguments of a request: the forms that answer a refusal 422
 * themselves (docs/api.md, "Query arguments"); the reading of one
 * argument is core/gw_query_arg.c's. */
#include <stdio.h>
#include <string.h>
#include "../http/gw_req.h"

/* A refused request's body is not read, so its connection closes after
 * the answer. */
static int refuse(struct gw_req *r, const char *why)
{
	r->close_after = 1;
	return gw_resp_error(r, 422, "invalid", "%s", why);
}

int gw_query_str(struct gw_req *r, const char *name, char *buf, size_t size)
{
	char why[160];
	int rc = gw_query_get(r->wsi, name, buf, size, why, sizeof why);

	return rc < 0 ? refuse(r, why) : rc;
}

int gw_query_i64(struct gw_req *r, const char *name, int64_t lo, int64_t hi, int64_t *out)
{
	char why[160];
	int rc = gw_query_num(r->wsi, name, lo, hi, out, why, sizeof why);

	return rc < 0 ? refuse(r, why) : rc;
}

int gw_query_bool(struct gw_req *r, const char *name, int *out)
{
	char b[GW_QUERY_BOOL_MAX + 1];
	int rc = gw_query_str(r, name, b, sizeof b);

	if (rc <= 0)
		return rc;
	if (!strcmp(b, "1") || !strcmp(b, "true")) {
		*out = 1;
	} else if (!strcmp(b, "0") || !strcmp(b, "false")) {
		*out = 0;
	} else {
		char why[160];
		snprintf(why, sizeof why, "query argument %s must be 0, 1, true or false", name);
		return refuse(r, why);
	}
	return 1;
}
