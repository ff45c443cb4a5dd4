/* sandbox-gateway's flags: each is one row (name, argument, range for a
 * number, what it does and its default), from which getopt_long's table,
 * the checks and --help all come. A number outside its range, or not a
 * whole number, is an error naming the flag (exit 2). */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "http/gw_req.h"
#include "mcp/gw_mcp.h"
#include "gw_flags.h"
#include "proxy/gw_plimit.h"
#include "core/gw_loop.h"

enum {
	F_PORT, F_LISTEN, F_RUNNER, F_KEYS, F_PDOMAIN, F_MAXKEY, F_MAXTIMEOUT, F_WEB,
	F_STATE, F_IMAGE, F_CERT, F_KEY, F_INSECURE, F_HEADER_TO, F_IDLE_TO, F_PSTREAM,
	F_KEEPALIVE, F_METRICS, F_PSECRET, F_FDRES, F_PMAX_SBX, F_PMAX_CLIENT, F_DRIVERS, F_ISOLATION, F_RUNNERS, F_RUNNERS_DNS, F_RUNNER_PORT, F_DISCOVERY_MS, F_VERBOSE,
	F_RUNNER_CA, F_RUNNER_CERT, F_RUNNER_KEY,
	F_PUBLIC_URL, F_MCP_ORIGINS, F_MCP_SESSIONS, F_EVLOOP,
	F_HELP, F_COUNT
};

/* Where a row's value goes in struct gw_flags: a number (long long) when
 * it has a range, else a string when it takes an argument, else an int
 * set to 1. --help has none. */
#define AT(field) offsetof(struct gw_flags, field)
#define NOWHERE ((size_t)-1)

struct flag {
	const char *name;
	const char *arg;            /* NULL: takes none */
	long long lo, hi;           /* a number's range (lo < hi), else 0, 0 */
	size_t at;
	const char *help;
};

static const struct flag flags[F_COUNT] = {
	[F_PORT] = { "port", "N", 0, 65535, AT(port), "TCP port of the API, the previews and the web demo (default 8080)" },
	[F_LISTEN] = { "listen-address", "A", 0, 0, AT(addr), "address to listen on (default 127.0.0.1; others need --cert/--key or --insecure-http)" },
	[F_RUNNER] = { "runner-socket", "PATH", 0, 0, AT(runner_socket), "the runner on this host: its control socket, or HOST:PORT / [V6]:PORT of a runner's TLS port (default: an embedded runner, unless --runners or --runners-dns is given)" },
	[F_KEYS] = { "keys-file", "F", 0, 0, AT(keys_file), "API keys, one a line; SIGHUP re-reads (default none; SANDBOX_API_KEYS adds comma-separated keys)" },
	[F_PDOMAIN] = { "preview-domain", "D", 0, 0, AT(preview_domain), "previews are <port>-<id>.D (default $PREVIEW_DOMAIN, else localhost)" },
	[F_MAXKEY] = { "max-sandboxes-per-key", "N", 0, GW_MAX_OWNED, AT(max_per_key), "running sandboxes a key may have (default 20)" },
	[F_MAXTIMEOUT] = { "max-timeout-ms", "N", 1, INT64_MAX, AT(max_timeout_ms), "longest sandbox lifetime a key may ask for (default 86400000)" },
	[F_WEB] = { "web-dir", "D", 0, 0, AT(web_dir), "the web demo's files (default web-demo/dist beside the checkout, if built)" },
	[F_STATE] = { "state-dir", "D", 0, 0, AT(state_dir), "embedded runner: its state directory (default inside its runtime directory)" },
	[F_IMAGE] = { "image-dir", "D", 0, 0, AT(image_dir), "embedded runner: images (default $SANDBOX_IMAGE_DIR, else /var/cache/sandbox/images)" },
	[F_CERT] = { "cert", "F", 0, 0, AT(cert), "TLS certificate (PEM); with --key (default none: plain HTTP)" },
	[F_KEY] = { "key", "F", 0, 0, AT(key), "TLS private key (PEM); with --cert (default none)" },
	[F_INSECURE] = { "insecure-http", NULL, 0, 0, AT(insecure_http), "allow plain HTTP on a non-loopback address (default off)" },
	[F_HEADER_TO] = { "header-timeout", "S", 1, 86400, AT(header_timeout_s), "seconds a client may take to send a request head (default 10)" },
	[F_IDLE_TO] = { "idle-timeout", "S", 1, 86400, AT(idle_timeout_s), "seconds a preview connection may stay quiet (default 300)" },
	[F_PSTREAM] = { "preview-stream", NULL, 0, 0, AT(preview_stream), "previews through the runner's stream, never a passed socket (default off)" },
	[F_KEEPALIVE] = { "keepalive-s", "S", 0, GW_KEEPALIVE_MAX_S, AT(keepalive_s), "WebSocket pings and ndjson keepalive lines every S seconds, 0 off (default 25)" },
	[F_METRICS] = { "metrics-key-file", "F", 0, 0, AT(metrics_key_file), "the key /metrics and the whole of /v1/runners want, its first line (default $SANDBOX_METRICS_KEY, else /metrics is closed)" },
	[F_PSECRET] = { "preview-secret-file", "F", 0, 0, AT(psecret_file), "preview tokens' secret, made once when missing (default none: random per start)" },
	[F_FDRES] = { "fd-reserve", "N", 0, 1 << 30, AT(fd_reserve), "descriptors previews may not take (default 256, at most a quarter of the limit)" },
	[F_PMAX_SBX] = { "preview-max-per-sandbox", "N", 0, 1 << 30, AT(pmax_sandbox), "open preview connections per sandbox, 0 the default (default 1024)" },
	[F_PMAX_CLIENT] = { "preview-max-per-client", "N", 0, 1 << 30, AT(pmax_client), "open preview connections per client address, 0 the default (default 256)" },
	[F_DRIVERS] = { "drivers", "NAME,...", 0, 0, AT(drivers), "embedded runner: the drivers to enable (default: every driver the runner has)" },
	[F_ISOLATION] = { "default-isolation", "NAME", 0, 0, AT(default_isolation), "embedded runner: a sandbox's driver when it names none (default jail)" },
	[F_RUNNERS] = { "runners", "LIST", 0, 0, AT(runners), "more runners, comma-separated: unix:/path, /path, IPV4:PORT or [IPV6]:PORT (TLS) (default none)" },
	[F_RUNNERS_DNS] = { "runners-dns", "NAME", 0, 0, AT(runners_dns), "runners from DNS: A/AAAA records of NAME, or SRV when NAME starts with _ (default none)" },
	[F_RUNNER_PORT] = { "runner-port", "N", 1, 65535, AT(runner_port), "the runners' TLS port for --runners-dns A/AAAA records (default 7443)" },
	[F_DISCOVERY_MS] = { "discovery-interval-ms", "N", 100, 3600000, AT(discovery_ms), "how often --runners-dns is resolved again (default 5000)" },
	[F_VERBOSE] = { "verbose", NULL, 0, 0, AT(verbose), "debug messages (default off)" },
	[F_RUNNER_CA] = { "runner-ca", "PEM", 0, 0, AT(runner_ca), "CA a TLS runner's certificate must chain to (required with a TLS runner)" },
	[F_RUNNER_CERT] = { "runner-cert", "PEM", 0, 0, AT(runner_cert), "the gateway's client certificate for TLS runners (required with a TLS runner)" },
	[F_RUNNER_KEY] = { "runner-key", "PEM", 0, 0, AT(runner_key), "its private key (required with a TLS runner)" },
	[F_PUBLIC_URL] = { "public-url", "URL", 0, 0, AT(public_url), "scheme://host[:port] people reach the gateway at (a name, a TLS proxy); /mcp accepts it as an Origin (default none)" },
	[F_MCP_ORIGINS] = { "mcp-allowed-origins", "LIST", 0, 0, AT(mcp_origins), "more Origins /mcp accepts, comma-separated scheme://host[:port] (default none: only the gateway's own URL and --public-url)" },
	[F_MCP_SESSIONS] = { "mcp-sessions-per-key", "N", 1, GW_MCP_SESSIONS_PER_KEY_MAX, AT(mcp_sessions_per_key), "MCP sessions a key may hold; a key's new one past this replaces its own least recently used (default 64)" },
	[F_EVLOOP] = { "event-loop", "uv|poll", 0, 0, AT(event_loop), "uv: epoll, through lws's libuv plugin (poll when that cannot load); poll: lws's own poll() loop, whose every turn visits every open descriptor (default uv)" },
	[F_HELP] = { "help", NULL, 0, 0, NOWHERE, "this text" },
};

static void help(FILE *out)
{
	fprintf(out, "usage: sandbox-gateway [flags]\n"
		"The sandbox service's REST API, WebSocket streams and preview proxy (docs/api.md).\n\n");
	for (int i = 0; i < F_COUNT; i++) {
		char left[64];
		snprintf(left, sizeof left, "--%s%s%s", flags[i].name, flags[i].arg ? " " : "",
			 flags[i].arg ? flags[i].arg : "");
		fprintf(out, "  %-30s %s\n", left, flags[i].help);
	}
}

static int number(int i, const char *v, long long *out)
{
	char *end;
	errno = 0;
	long long n = strtoll(v, &end, 10);
	if (errno || end == v || *end || n < flags[i].lo || n > flags[i].hi) {
		fprintf(stderr, "sandbox-gateway: --%s: '%s' is not a whole number from %lld to %lld\n",
			flags[i].name, v, flags[i].lo, flags[i].hi);
		return -1;
	}
	*out = n;
	return 0;
}

static void defaults(struct gw_flags *f)
{
	memset(f, 0, sizeof *f);
	f->addr = "127.0.0.1";
	f->preview_domain = getenv("PREVIEW_DOMAIN") ? getenv("PREVIEW_DOMAIN") : "localhost";
	f->image_dir = getenv("SANDBOX_IMAGE_DIR") ? getenv("SANDBOX_IMAGE_DIR") :
		"/var/cache/sandbox/images";
	f->port = 8080;
	f->max_per_key = 20;
	f->max_timeout_ms = 86400000;
	f->header_timeout_s = 10;
	f->idle_timeout_s = 300;
	f->keepalive_s = GW_KEEPALIVE_DEFAULT_S;
	f->fd_reserve = -1;
	f->runner_port = 7443;
	f->discovery_ms = 5000;   /* gw_fdguard.c: 256, at most a quarter of the limit */
	f->mcp_sessions_per_key = GW_MCP_SESSIONS_PER_KEY;
	f->event_loop = "uv";
}

int gw_flags_parse(struct gw_flags *f, int argc, char **argv)
{
	struct option longopts[F_COUNT + 1];

	defaults(f);
	for (int i = 0; i < F_COUNT; i++)
		longopts[i] = (struct option){ flags[i].name, flags[i].arg ? required_argument :
					       no_argument, NULL, 256 + i };
	longopts[F_COUNT] = (struct option){ NULL, 0, NULL, 0 };
	opterr = 0;   /* our own messages, below */
	for (;;) {
		int c = getopt_long(argc, argv, "", longopts, NULL), i = c - 256;
		if (c == -1)
			break;
		if (c < 256 || i >= F_COUNT) {
			if (optopt >= 256 && optopt - 256 < F_COUNT)
				fprintf(stderr, "sandbox-gateway: --%s needs a value\n", flags[optopt - 256].name);
			else
				fprintf(stderr, "sandbox-gateway: unknown flag %s\n", argv[optind - 1]);
			fprintf(stderr, "(sandbox-gateway --help lists the flags)\n");
			return 2;
		}
		char *at = (char *)f + flags[i].at;
		if (i == F_HELP)
			return help(stdout), 1;
		if (flags[i].lo < flags[i].hi) {
			if (number(i, optarg, (long long *)(void *)at))
				return 2;
		} else if (flags[i].arg) {
			*(const char **)(void *)at = optarg;
		} else {
			*(int *)(void *)at = 1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "sandbox-gateway: unexpected argument %s\n", argv[optind]);
		return 2;
	}
	if (f->runners_dns && (!*f->runners_dns || strlen(f->runners_dns) > 253)) {
		fprintf(stderr, "sandbox-gateway: --runners-dns: a DNS name of 1 to 253 characters\n");
		return 2;
	}
	if ((f->runner_ca || f->runner_cert || f->runner_key) &&
	    !(f->runner_ca && f->runner_cert && f->runner_key)) {
		fprintf(stderr, "sandbox-gateway: --runner-ca, --runner-cert and --runner-key go together\n");
		return 2;
	}
	if (gw_loop_parse(f->event_loop) < 0) {
		fprintf(stderr, "sandbox-gateway: --event-loop: uv or poll, not '%s'\n", f->event_loop);
		return 2;
	}
	if (!f->cert != !f->key) {
		fprintf(stderr, "sandbox-gateway: --cert and --key go together\n");
		return 2;
	}
	return 0;
}
