/* sandbox-gateway: flags (gw_flags.c), keys, the lws context and its one
 * vhost, the loop, and one way out: every exit after the start-up checks
 * goes through the end of run(), which stops what was started, the
 * embedded runner last. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include "http/gw_req.h"
#include "stream/gw_ws.h"
#include "mcp/gw_mcp.h"
#include "gw_local_runner.h"
#include "gw_routes.h"
#include "gw_flags.h"
#include "core/gw_runner_addr.h"
#include "core/gw_tls.h"
#include "mcp/gw_mcp_origin.h"
#include "proxy/gw_front.h"
#include "proxy/gw_proxy.h"
#include "core/gw_fdguard.h"
#include "core/gw_loop.h"
#include "proxy/gw_plimit.h"
#include "sbx_log.h"

static volatile sig_atomic_t stop_flag, reload_flag;   /* set by signals */
static struct lws_context *volatile sig_ctx;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reload_flag = 1;
	else
		stop_flag = 1;
	if (sig_ctx)
		lws_cancel_service(sig_ctx);
}

static const struct lws_protocols protocols[] = {
	{ "http", gw_http_callback, sizeof(struct gw_req), 0, 0, NULL, 0 },
	{ "gw-up", gw_up_callback, 0, 0, 0, NULL, 0 },
	GW_FRONT_PROTOCOLS,
	GW_LOOP_PROTOCOL,
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

/* Runners on other hosts (a --runner-socket or --runners entry of
 * HOST:PORT, or any from --runners-dns) are reached over mutual TLS with
 * --runner-ca/--runner-cert/--runner-key (gw_tls.c). The files are read
 * here, at start: a bad one is an exit 2 naming it. */
static int runner_tls_configure(struct gw_vh *vh, const struct gw_flags *fl)
{
	struct sbx_err err = { 0 };

	if ((gw_runners_tls(vh) || fl->runners_dns) && !fl->runner_ca) {
		const char *tcp = "";
		for (int i = 0; i < vh->nrunners && !*tcp; i++)
			if (vh->runners[i].kind == GW_RUNNER_TLS)
				tcp = vh->runners[i].addr;
		if (*tcp)
			sbx_err_log("%s is a TLS runner: give --runner-ca, --runner-cert and --runner-key", tcp);
		else
			sbx_err_log("--runners-dns %s gives TLS runners: give --runner-ca, --runner-cert "
				    "and --runner-key", fl->runners_dns);
		return -1;
	}
	if (!fl->runner_ca)
		return 0;
	vh->runner_tls = gw_tls_client_ctx(fl->runner_ca, fl->runner_cert, fl->runner_key, &err);
	if (!vh->runner_tls) {
		sbx_err_log("%s", err.msg);
		return -1;
	}
	return 0;
}

/* Keys, secrets and the checks that need no runner: 0, or an exit code. */
static int configure(struct gw_vh *vh, struct gw_front *front, const struct gw_flags *fl)
{
	struct sbx_err err = { 0 };

	vh->runner_socket = fl->runner_socket;
	vh->preview_domain = fl->preview_domain;
	vh->port = (int)fl->port;
	vh->max_sandboxes_per_key = (int)fl->max_per_key;
	vh->max_timeout_ms = fl->max_timeout_ms;
	vh->keepalive_s = (int)fl->keepalive_s;
	front->vh = vh;
	front->head_timeout_s = (int)fl->header_timeout_s;
	front->idle_timeout_s = (int)fl->idle_timeout_s;
	front->preview_stream = fl->preview_stream;
	if (fl->keys_file && gw_auth_load_file(vh, fl->keys_file, &err)) {
		sbx_err_log("%s", err.msg);
		return 1;
	}
	if (getenv("SANDBOX_API_KEYS") && gw_auth_add_list(vh, getenv("SANDBOX_API_KEYS"))) {
		sbx_err_log("SANDBOX_API_KEYS: a key is too long or there are too many");
		return 1;
	}
	if (gw_auth_metrics_key(vh, fl->metrics_key_file, getenv("SANDBOX_METRICS_KEY"), &err)) {
		sbx_err_log("%s", err.msg);
		return 1;
	}
	/* API keys and preview tokens must not cross a network in the clear */
	if (!fl->cert && !fl->insecure_http && strcmp(fl->addr, "localhost") &&
	    strncmp(fl->addr, "127.", 4) && strcmp(fl->addr, "::1")) {
		sbx_err_log("plain HTTP on %s: give --cert/--key, or --insecure-http", fl->addr);
		return 2;
	}
	front->tls = vh->tls = fl->cert != NULL;
	if (gw_mcp_origins_configure(fl->addr, fl->public_url, fl->mcp_origins, &err)) {
		sbx_err_log("%s", err.msg);
		return 2;
	}
	if (gw_mcp_sessions_configure((int)fl->mcp_sessions_per_key)) {
		sbx_err_log("MCP sessions: out of memory");
		return 1;
	}
	gw_route_table(gw_routes, gw_nroutes);
	gw_http_set_ws(gw_ws_callback);
	if (gw_stream_register()) {
		sbx_err_log("stream layer: no room for its hooks");
		return 1;
	}
	if (gw_psecret_load(vh, fl->psecret_file, &err)) {
		sbx_err_log("preview secret: %s", err.msg);
		return 1;
	}
	if ((fl->runner_socket || fl->runners || fl->runners_dns) &&
	    (fl->drivers || fl->default_isolation)) {
		sbx_err_log("--drivers and --default-isolation configure the embedded runner; "
			    "with --runner-socket, --runners or --runners-dns give them to those runners");
		return 2;
	}
	if (gw_runners_init(vh, fl->runner_socket, fl->runners) || runner_tls_configure(vh, fl))
		return 2;
	if (!vh->nkeys) {
		sbx_err_log("no API keys: give --keys-file or SANDBOX_API_KEYS");
		return 1;
	}
	/* Stream tokens are signed with a key derived from the preview
	 * secret: gateways that share --preview-secret-file accept each
	 * other's tokens, so a browser moved to another gateway by the load
	 * balancer keeps its stream; without a file both are per process. */
	unsigned int mdlen = 0;
	if (!HMAC(EVP_sha256(), vh->preview_secret, sizeof vh->preview_secret,
		  (const unsigned char *)"sandbox-stream-token-v1", 23, vh->token_secret, &mdlen) ||
	    mdlen != sizeof vh->token_secret) {
		sbx_err_log("cannot derive the stream token secret");
		return 1;
	}
	return gw_web_dir_init(vh, fl->web_dir) ? 1 : 0;
}

static struct lws_context *make_context(const struct gw_flags *fl)
{
	struct lws_context_creation_info ci;

	memset(&ci, 0, sizeof ci);
	ci.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS | LWS_SERVER_OPTION_VALIDATE_UTF8;
	if (fl->cert)
		ci.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
	ci.pt_serv_buf_size = 64 * 1024;
	/* Header buffers are pooled: a pool of lws's default size lets a few
	 * dozen slow senders (slowloris) make everyone else wait; each one
	 * still times out (timeout_secs_ah_idle, 10 s). */
	ci.max_http_header_pool = 4096;
	/* room for a whole 4095-byte path= and its headers (docs/api.md) */
	ci.max_http_header_data = 8192;
	/* Dead peers of long-lived streams go away through TCP keepalive (a
	 * stream to a quiet command sends nothing for minutes, so an idle
	 * timeout would cut live clients). */
	ci.ka_time = 60;
	ci.ka_probes = 3;
	ci.ka_interval = 10;
	return gw_loop_create(&ci, (enum gw_loop_kind)gw_loop_parse(fl->event_loop));
}

static struct lws_vhost *make_vhost(struct lws_context *ctx, struct gw_vh *vh,
				    const struct gw_flags *fl)
{
	struct lws_context_creation_info vi;
	struct lws_vhost *v;

	memset(&vi, 0, sizeof vi);
	/* gw_front.c owns the listening socket and hands connections over */
	vi.port = CONTEXT_PORT_NO_LISTEN_SERVER;
	vi.protocols = protocols;
	vi.vhost_name = "gateway";
	vi.options = LWS_SERVER_OPTION_VALIDATE_UTF8;
	gw_keepalive_vhost(&vi, vh->keepalive_s);
	if (fl->cert) {
		/* LIBWEBSOCKETS.md §5: without this flag on the vhost too, the
		 * vhost is silently plaintext */
		vi.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
		vi.ssl_cert_filepath = fl->cert;
		vi.ssl_private_key_filepath = fl->key;
		vi.ssl_options_set = SSL_OP_NO_TLSv1 | SSL_OP_NO_TLSv1_1;
		vi.alpn = "http/1.1";   /* h1 only: the proxy and WS stay on one path */
	}
	v = lws_create_vhost(ctx, &vi);
	struct gw_vh **pv = v ? lws_protocol_vh_priv_zalloc(v, &protocols[0], sizeof *pv) : NULL;
	if (!pv)
		return NULL;
	*pv = vh;
	return v;
}

/* Everything from the embedded runner to the end of the loop; every
 * way out is the one at the end. */
static int run(struct gw_vh *vh, struct gw_front *front, const struct gw_flags *fl)
{
	struct sbx_err err = { 0 };
	struct lws_context *ctx = NULL;
	const char *addr = strcmp(fl->addr, "localhost") ? fl->addr : "127.0.0.1";
	int rc = 1;

	/* the embedded runner only when no runner is given at all */
	if (!vh->runner_socket && !fl->runners && !fl->runners_dns) {
		if (gw_local_runner_start(fl->state_dir, fl->image_dir, fl->drivers,
					  fl->default_isolation, &stop_flag, &vh->runner_socket, &err)) {
			sbx_err_log("%s", err.msg);
			goto out;
		}
		if (gw_runners_add_local(vh, vh->runner_socket))
			goto out;
	}
	/* lws sizes its fd table from this limit when the context is made
	 * (LIBWEBSOCKETS.md §3); each preview costs two fds (client and
	 * guest), three while it is being routed. */
	long nofile = gw_fd_raise_limit();
	gw_plimit_config((int)fl->pmax_sandbox, (int)fl->pmax_client);
	ctx = make_context(fl);
	if (!ctx) {
		sbx_err_log("lws_create_context failed");
		goto out;
	}
	sbx_info("event loop: %s", gw_loop_name());
	vh->ctx = sig_ctx = ctx;
	vh->vhost = make_vhost(ctx, vh, fl);
	if (!vh->vhost) {
		sbx_err_log("cannot create the lws vhost");
		goto out;
	}
	/* Each runner's first status, and the owner table, before the first
	 * request: a restarted gateway must know its runners and its keys'
	 * sandboxes. A runner that does not answer is marked down within
	 * GW_PROBE_TIMEOUT_MS; the owner list is bounded (gw_owner.c). */
	gw_probe_start(vh);
	if (fl->runners_dns &&
	    gw_discovery_start(vh, fl->runners_dns, (int)fl->runner_port, (int)fl->discovery_ms))
		goto out;
	while (gw_probe_first_round(vh) && !stop_flag && gw_loop_turn(ctx) >= 0)
		;
	gw_owner_sync(vh);
	while (gw_owner_syncing() && !stop_flag && gw_loop_turn(ctx) >= 0)
		;
	if (gw_front_bind_protocols(front, protocols) ||
	    gw_front_start(front, addr, vh->port, &err)) {
		sbx_err_log("%s", err.msg[0] ? err.msg : "cannot set up the front door");
		goto out;
	}
	sbx_info("listening on %s://%s:%d, %d runner(s)%s%s, %d keys, previews *.%s",
		 fl->cert ? "https" : "http", addr, vh->port, vh->nrunners,
		 fl->runners_dns ? " and DNS " : "", fl->runners_dns ? fl->runners_dns : "",
		 vh->nkeys, vh->preview_domain);
	fprintf(stderr, "sandbox-gateway: port %d\n", vh->port);
	gw_fd_init(ctx, (long)fl->fd_reserve);
	sbx_info("file descriptors: limit %ld, %ld kept from previews for the API; previews: "
		 "at most %d per sandbox, %d per client address", nofile, gw_fd_reserve(),
		 fl->pmax_sandbox ? (int)fl->pmax_sandbox : GW_PREVIEW_MAX_PER_SANDBOX,
		 fl->pmax_client ? (int)fl->pmax_client : GW_PREVIEW_MAX_PER_CLIENT);
	gw_runner_watch_start(vh, gw_local_runner_check);
	rc = 0;
	while (!stop_flag) {
		if (gw_loop_run(ctx) < 0)
			break;
		if (reload_flag) {
			reload_flag = 0;
			gw_auth_reload(vh, fl->keys_file, getenv("SANDBOX_API_KEYS"));
		}
	}
	sbx_info("stopping");
out:
	gw_discovery_stop();
	gw_probe_stop(vh);
	gw_runner_watch_stop();
	gw_owner_stop();
	gw_fd_stop();
	sig_ctx = NULL;
	gw_loop_destroy(ctx);
	gw_local_runner_stop();   /* nothing without an embedded runner */
	gw_runners_free(vh);
	return rc;
}

int main(int argc, char **argv)
{
	static struct gw_vh vh;   /* large; lives for the whole process */
	static struct gw_front front;
	struct gw_flags fl;
	int rc = gw_flags_parse(&fl, argc, argv);

	if (rc)
		return rc == 1 ? 0 : 2;
	/* before anything is started: a signal during the start-up takes the
	 * same way out as one later */
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);   /* re-read the keys */
	signal(SIGPIPE, SIG_IGN);
	sbx_log_init("sandbox-gateway", fl.verbose ? SBX_LOG_DEBUG : SBX_LOG_INFO);
	lws_set_log_level(LLL_ERR | LLL_WARN, NULL);
	rc = configure(&vh, &front, &fl);
	if (!rc)
		rc = run(&vh, &front, &fl);
	gw_tls_forget_sessions(vh.runner_tls);
	SSL_CTX_free(vh.runner_tls);
	return rc;
}
