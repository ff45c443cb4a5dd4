/* sandbox-gateway's command line (gw_flags.c): one table gives the long
 * options, their checks and --help. */
#ifndef GW_FLAGS_H
#define GW_FLAGS_H

struct gw_flags {
	const char *addr, *runner_socket, *keys_file, *preview_domain;
	const char *web_dir, *state_dir, *image_dir, *cert, *key;
	const char *metrics_key_file, *psecret_file, *drivers, *default_isolation;
	const char *runners, *runners_dns;
	const char *runner_ca, *runner_cert, *runner_key;
	const char *public_url, *mcp_origins, *event_loop;
	long long port, max_per_key, max_timeout_ms, header_timeout_s, idle_timeout_s;
	long long keepalive_s, fd_reserve, pmax_sandbox, pmax_client;
	long long runner_port, discovery_ms, mcp_sessions_per_key;
	int verbose, insecure_http, preview_stream;
};

/* Fill f from argv (defaults first, some from the environment). 0 to run,
 * 1 after printing --help (exit 0), 2 after saying what is wrong (exit 2). */
int gw_flags_parse(struct gw_flags *f, int argc, char **argv);
#endif
