/* An HTTP refusal written at once from inside an lws callback (gw.h):
 * for a request lws must not go on with (a pipelined body, a refused
 * WebSocket upgrade), where no WRITEABLE will come before the close. The
 * connection is fresh or between transactions, so nothing else is
 * queued on it (lws_return_http_status does the same, with HTML). */
#include <stdio.h>
#include <string.h>
#include "gw_req.h"

int gw_http_refuse(struct lws *wsi, unsigned status, const char *code, const char *msg,
		   int ws_version)
{
	static const unsigned char v13[] = "13";
	unsigned char buf[LWS_PRE + 1024];
	unsigned char *start = buf + LWS_PRE, *p = start, *end = buf + sizeof buf;
	char body[512];
	int n = snprintf(body, sizeof body,
			 "{\"error\":{\"code\":\"%s\",\"message\":\"%s\"}}\n", code, msg);

	if (n < 0 || (size_t)n >= sizeof body ||
	    lws_add_http_common_headers(wsi, status, "application/json", (lws_filepos_t)n, &p, end) ||
	    (ws_version && lws_add_http_header_by_token(wsi, WSI_TOKEN_VERSION, v13, 2, &p, end)) ||
	    lws_add_http_header_by_token(wsi, WSI_TOKEN_CONNECTION,
					 (const unsigned char *)"close", 5, &p, end) ||
	    lws_finalize_http_header(wsi, &p, end) || end - p < n)
		return -1;
	memcpy(p, body, (size_t)n);
	p += n;
	lws_write(wsi, start, (size_t)(p - start), LWS_WRITE_HTTP_HEADERS);
	return -1;
}
