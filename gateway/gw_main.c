/* sandbox-gateway: flags, keys, the lws context and its one vhost. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <openssl/rand.h>
#include "gw.h"
#include "gw_front.h"
#include "gw_proxy.h"
#include "gw_fdguard.h"
#include "gw_plimit.h"
#include "sbx_log.h"

static volatile sig_atomic_t stop_flag, reload_flag;   /* set by signals */
static struct lws_context *sig_ctx;

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
	{ "gw-upstream", gw_up_callback, 0, 0, 0, NULL, 0 },
	{ "gw-side", gw_side_callback, 0, 0, 0, NULL, 0 },
	GW_FRONT_PROTOCOLS,
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

static void usage(void)
{
	fprintf(stderr, "usage: sandbox-gateway [--port N] [--listen-address A] "
		"[--runner-socket PATH] [--keys-file F] [--preview-domain D] "
		"[--max-sandboxes-per-key N] [--max-timeout-ms N] [--web-dir D] "
		"[--state-dir D] [--image-dir D] [--cert F --key F] [--insecure-http] "
		"[--header-timeout S] [--idle-timeout S] [--preview-stream] [--keepalive-s S] "
		"[--metrics-key-file F] [--preview-secret-file F] [--fd-reserve N] "
		"[--preview-max-per-sandbox N] [--preview-max-per-client N] [--verbose]\n"
		"[--drivers NAME,...] [--default-isolation NAME]\n"
		"  without --runner-socket the gateway starts its own sandbox-runner\n"
		"  (--drivers and --default-isolation are passed to it)\n");
}

int main(int argc, char **argv)
{
	static struct gw_vh vh;   /* large; lives for the whole process */
	struct sbx_err err = { 0 };
	const char *addr = "127.0.0.1", *keys_file = NULL, *web_dir = NULL;
	const char *state_dir = NULL, *image_dir = getenv("SANDBOX_IMAGE_DIR");
	int verbose = 0, local_runner = 0;
	static struct gw_front front;
	const char *cert = NULL, *key = NULL, *psecret_file = NULL;
	const char *metrics_key_file = NULL;
	const char *drivers = NULL, *default_isolation = NULL;
	int insecure = 0;
	long fd_reserve = -1;
	int pmax_sandbox = 0, pmax_client = 0;

	vh.runner_socket = NULL;
	vh.preview_domain = getenv("PREVIEW_DOMAIN") ? getenv("PREVIEW_DOMAIN") : "localhost";
	vh.port = 8080;
	vh.max_sandboxes_per_key = 20;
	vh.max_timeout_ms = 86400000;
	vh.keepalive_s = GW_KEEPALIVE_DEFAULT_S;
	front.vh = &vh;
	front.head_timeout_s = 10;
	front.idle_timeout_s = 300;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--verbose")) { verbose = 1; continue; }
		if (!strcmp(a, "--insecure-http")) { insecure = 1; continue; }
		if (!strcmp(a, "--preview-stream")) { front.preview_stream = 1; continue; }
		if (!v) { usage(); return 2; }
		if (!strcmp(a, "--port")) vh.port = atoi(v);
		else if (!strcmp(a, "--listen-address")) addr = v;
		else if (!strcmp(a, "--runner-socket")) vh.runner_socket = v;
		else if (!strcmp(a, "--keys-file")) keys_file = v;
		else if (!strcmp(a, "--preview-domain")) vh.preview_domain = v;
		else if (!strcmp(a, "--max-sandboxes-per-key")) vh.max_sandboxes_per_key = atoi(v);
		else if (!strcmp(a, "--max-timeout-ms")) vh.max_timeout_ms = atoll(v);
		else if (!strcmp(a, "--web-dir")) web_dir = v;
		else if (!strcmp(a, "--state-dir")) state_dir = v;
		else if (!strcmp(a, "--image-dir")) image_dir = v;
		else if (!strcmp(a, "--cert")) cert = v;
		else if (!strcmp(a, "--key")) key = v;
		else if (!strcmp(a, "--header-timeout")) front.head_timeout_s = atoi(v);
		else if (!strcmp(a, "--idle-timeout")) front.idle_timeout_s = atoi(v);
		else if (!strcmp(a, "--keepalive-s")) vh.keepalive_s = atoi(v);
		else if (!strcmp(a, "--metrics-key-file")) metrics_key_file = v;
		else if (!strcmp(a, "--preview-secret-file")) psecret_file = v;
		else if (!strcmp(a, "--fd-reserve")) fd_reserve = atol(v);
		else if (!strcmp(a, "--preview-max-per-sandbox")) pmax_sandbox = atoi(v);
		else if (!strcmp(a, "--preview-max-per-client")) pmax_client = atoi(v);
		else if (!strcmp(a, "--drivers")) drivers = v;
		else if (!strcmp(a, "--default-isolation")) default_isolation = v;
		else { usage(); return 2; }
		i++;
	}
	sbx_log_init("sandbox-gateway", verbose ? SBX_LOG_DEBUG : SBX_LOG_INFO);
	lws_set_log_level(LLL_ERR | LLL_WARN, NULL);
	if (keys_file && gw_auth_load_file(&vh, keys_file, &err)) {
		sbx_err_log("%s", err.msg);
		return 1;
	}
	if (getenv("SANDBOX_API_KEYS") && gw_auth_add_list(&vh, getenv("SANDBOX_API_KEYS"))) {
		sbx_err_log("SANDBOX_API_KEYS: a key is too long or there are too many");
		return 1;
	}
	if (gw_auth_metrics_key(&vh, metrics_key_file, getenv("SANDBOX_METRICS_KEY"), &err)) {
		sbx_err_log("%s", err.msg);
		return 1;
	}
	if (!cert != !key || front.head_timeout_s < 1 || front.idle_timeout_s < 1 ||
	    vh.keepalive_s < 0 || vh.keepalive_s > GW_KEEPALIVE_MAX_S ||
	    pmax_sandbox < 0 || pmax_client < 0) {
		usage();
		return 2;
	}
	/* API keys and preview tokens must not cross a network in the clear */
	if (!cert && !insecure && strcmp(addr, "localhost") && strncmp(addr, "127.", 4) &&
	    strcmp(addr, "::1")) {
		sbx_err_log("plain HTTP on %s: give --cert/--key, or --insecure-http", addr);
		return 2;
	}
	front.tls = vh.tls = cert != NULL;
	if (gw_psecret_load(&vh, psecret_file, &err)) {
		sbx_err_log("preview secret: %s", err.msg);
		return 1;
	}
	if (!strcmp(addr, "localhost"))
		addr = "127.0.0.1";
	if (!vh.nkeys) {
		sbx_err_log("no API keys: give --keys-file or SANDBOX_API_KEYS");
		return 1;
	}
	if (RAND_bytes(vh.token_secret, sizeof vh.token_secret) != 1) {
		sbx_err_log("no randomness for the stream token secret");
		return 1;
	}
	if (gw_web_dir_init(&vh, web_dir))
		return 1;
	if (vh.runner_socket && (drivers || default_isolation)) {
		sbx_err_log("--drivers and --default-isolation configure the embedded runner; "
			    "with --runner-socket give them to that runner");
		return 2;
	}
	if (!vh.runner_socket) {
		if (gw_local_runner_start(state_dir, image_dir ? image_dir : "/var/cache/sandbox/images",
					  drivers, default_isolation, &vh.runner_socket, &err)) {
			sbx_err_log("%s", err.msg);
			return 1;
		}
		local_runner = 1;
	}

	/* lws sizes its fd table from this limit when the context is made
	 * (LIBWEBSOCKETS.md §3); each preview costs two fds (client and
	 * guest), three while it is being routed. */
	long nofile = gw_fd_raise_limit();
	gw_plimit_config(pmax_sandbox, pmax_client);

	struct lws_context_creation_info ci;
	memset(&ci, 0, sizeof ci);
	ci.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS | LWS_SERVER_OPTION_VALIDATE_UTF8;
	if (cert)
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
	struct lws_context *ctx = lws_create_context(&ci);
	if (!ctx) {
		sbx_err_log("lws_create_context failed");
		if (local_runner)
			gw_local_runner_stop();
		return 1;
	}
	struct lws_context_creation_info vi;
	memset(&vi, 0, sizeof vi);
	/* gw_front.c owns the listening socket and hands connections over */
	vi.port = CONTEXT_PORT_NO_LISTEN_SERVER;
	vi.protocols = protocols;
	vi.vhost_name = "gateway";
	vi.options = LWS_SERVER_OPTION_VALIDATE_UTF8;
	gw_keepalive_vhost(&vi, vh.keepalive_s);
	if (cert) {
		/* LIBWEBSOCKETS.md §5: without this flag on the vhost too, the
		 * vhost is silently plaintext */
		vi.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
		vi.ssl_cert_filepath = cert;
		vi.ssl_private_key_filepath = key;
		vi.ssl_options_set = SSL_OP_NO_TLSv1 | SSL_OP_NO_TLSv1_1;
		vi.alpn = "http/1.1";   /* h1 only: the proxy and WS stay on one path */
	}
	vh.ctx = ctx;
	vh.vhost = lws_create_vhost(ctx, &vi);
	if (!vh.vhost) {
		sbx_err_log("cannot listen on %s:%d", addr, vh.port);
		lws_context_destroy(ctx);
		if (local_runner)
			gw_local_runner_stop();
		return 1;
	}
	struct gw_vh **pv = lws_protocol_vh_priv_zalloc(vh.vhost, &protocols[0], sizeof *pv);
	if (!pv) {
		lws_context_destroy(ctx);
		return 1;
	}
	*pv = &vh;
	if (gw_front_bind_protocols(&front, protocols) ||
	    gw_front_start(&front, addr, vh.port, &err)) {
		sbx_err_log("%s", err.msg[0] ? err.msg : "cannot set up the front door");
		lws_context_destroy(ctx);
		if (local_runner)
			gw_local_runner_stop();
		return 1;
	}
	sbx_info("listening on %s://%s:%d runner %s, %d keys, previews *.%s",
		 cert ? "https" : "http", addr, vh.port, vh.runner_socket, vh.nkeys,
		 vh.preview_domain);
	fprintf(stderr, "sandbox-gateway: port %d\n", vh.port);

	sig_ctx = ctx;
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);   /* re-read the keys */
	signal(SIGPIPE, SIG_IGN);
	gw_fd_init(ctx, fd_reserve);
	sbx_info("file descriptors: limit %ld, %ld kept from previews for the API; previews: "
		 "at most %d per sandbox, %d per client address", nofile, gw_fd_reserve(),
		 pmax_sandbox ? pmax_sandbox : GW_PREVIEW_MAX_PER_SANDBOX,
		 pmax_client ? pmax_client : GW_PREVIEW_MAX_PER_CLIENT);
	gw_owner_sync(&vh);
	gw_runner_watch_start(&vh);
	while (!stop_flag) {
		if (lws_service(ctx, 0) < 0)
			break;
		if (reload_flag) {
			reload_flag = 0;
			gw_auth_reload(&vh, keys_file, getenv("SANDBOX_API_KEYS"));
		}
	}
	sbx_info("stopping");
	gw_runner_watch_stop();
	gw_fd_stop();
	lws_context_destroy(ctx);
	if (local_runner)
		gw_local_runner_stop();
	return 0;
}
