/* GET /v1/sandboxes/{id}/network/log?since=N: the egress log as ndjson,
 * one entry a line (svc_network_log). */
#include <stdint.h>
#include "../http/gw_req.h"
#include "gw_rest.h"

void gw_network_log(struct gw_req *r)
{
	int64_t since = 0;
	struct svc_call *c;

	if (gw_query_i64(r, "since", 0, INT64_MAX / 2, &since) < 0)
		return;
	c = gw_rest_call(r, &gw_rest_logs_sink);
	if (!c) {
		gw_resp_error(r, 500, "internal", "out of memory");
		return;
	}
	svc_network_log(c, since);
}
