/* GET /metrics: Prometheus text exposition of the per-vhost counters. */
#include <stdio.h>
#include "../http/gw_req.h"
#include "gw_rest.h"

void gw_metrics_reply(struct gw_req *r)
{
	struct gw_vh *vh = r->vh;
	struct gw_metrics *m = &vh->m;
	char b[4096 + 160 * 64];
	int live = 0;
	for (int i = 0; i < vh->nowned; i++)
		live += vh->owned[i].live;
	int n = snprintf(b, sizeof b,
		"# TYPE sandbox_gateway_http_requests_total counter\n"
		"sandbox_gateway_http_requests_total %llu\n"
		"# TYPE sandbox_gateway_http_errors_total counter\n"
		"sandbox_gateway_http_errors_total{class=\"4xx\"} %llu\n"
		"sandbox_gateway_http_errors_total{class=\"5xx\"} %llu\n"
		"sandbox_gateway_upstream_errors_total %llu\n"
		"# TYPE sandbox_gateway_sandboxes gauge\n"
		"sandbox_gateway_sandboxes{state=\"running\"} %d\n"
		"sandbox_gateway_sandboxes{state=\"stopped\"} %d\n"
		"sandbox_gateway_sandboxes_created_total %llu\n"
		"sandbox_gateway_sandboxes_deleted_total %llu\n"
		"sandbox_gateway_commands_started_total %llu\n"
		"sandbox_gateway_bytes_streamed_total %llu\n"
		"sandbox_gateway_file_bytes_total{dir=\"in\"} %llu\n"
		"sandbox_gateway_file_bytes_total{dir=\"out\"} %llu\n"
		"# TYPE sandbox_gateway_websockets_open gauge\n"
		"sandbox_gateway_websockets_open %lld\n"
		"# TYPE sandbox_gateway_proxy_requests_total counter\n"
		"sandbox_gateway_proxy_requests_total %llu\n"
		"# TYPE sandbox_gateway_proxy_errors_total counter\n"
		"sandbox_gateway_proxy_errors_total %llu\n"
		"# TYPE sandbox_gateway_runner_tls_handshakes_total counter\n"
		"sandbox_gateway_runner_tls_handshakes_total{kind=\"full\"} %llu\n"
		"sandbox_gateway_runner_tls_handshakes_total{kind=\"resumed\"} %llu\n"
		"# TYPE sandbox_gateway_runner_kept_requests_total counter\n"
		"sandbox_gateway_runner_kept_requests_total %llu\n",
		(unsigned long long)m->http_requests, (unsigned long long)m->http_4xx,
		(unsigned long long)m->http_5xx, (unsigned long long)m->upstream_errors,
		live, vh->nowned - live,
		(unsigned long long)m->sandboxes_created,
		(unsigned long long)m->sandboxes_deleted,
		(unsigned long long)m->commands_started,
		(unsigned long long)m->bytes_streamed,
		(unsigned long long)m->files_put_bytes,
		(unsigned long long)m->files_get_bytes, (long long)m->ws_open,
		(unsigned long long)m->proxy_requests,
		(unsigned long long)m->proxy_errors,
		(unsigned long long)m->runner_tls[0], (unsigned long long)m->runner_tls[1],
		(unsigned long long)m->runner_kept);
	if (n > 0 && (size_t)n < sizeof b)
		n += gw_runners_metrics(vh, b + n, sizeof b - (size_t)n);
	sbx_buf_reset(&r->resp);
	sbx_buf_append(&r->resp, b, (size_t)n);
	r->resp_done = 1;
	gw_resp_start_stream(r, 200, "text/plain; version=0.0.4", (int64_t)n);
}
