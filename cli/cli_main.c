/* sbx: the command-line client of the sandbox gateway (docs/cli.md). */
#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cli_command {
	const char *name;
	int (*run)(const struct cli_cfg *c, int argc, char **argv);
	const char *usage;
};

static const struct cli_command commands[] = {
	{ "create", cli_cmd_create,
	  "sbx create [--timeout 10m] [--port 3000]...\n"
	  "  Create a sandbox and print its id (--json: the whole object).\n"
	  "  --timeout: ms, s (default unit), m or h, e.g. 90s, 10m; --port: a port\n"
	  "  to preview (repeat for more).\n" },
	{ "ls", cli_cmd_ls,
	  "sbx ls\n  List this key's sandboxes: id, status, seconds left, ports\n"
	  "  (--json: the gateway's list).\n" },
	{ "stop", cli_cmd_stop,
	  "sbx stop ID...\n  Stop and destroy sandboxes (stopping a stopped one is not an error;\n"
	  "  --json: each stopped object).\n" },
	{ "url", cli_cmd_url,
	  "sbx url ID PORT\n  Print the preview URL of a port the sandbox declared at create\n"
	  "  (--json: its route object).\n" },
	{ "exec", cli_cmd_exec,
	  "sbx exec ID [--cwd DIR] [--sudo] [-e NAME=VALUE]... [-d] -- CMD [ARGS...]\n"
	  "  Run CMD in the sandbox; its stdout and stderr go to sbx's as they come,\n"
	  "  sbx's stdin is forwarded when it is not a terminal (a terminal: the\n"
	  "  command's stdin is closed), Ctrl-C sends SIGINT to the command, and\n"
	  "  sbx exits with its status (128+N for signal N). -d (--detach): start it,\n"
	  "  print its id (for sbx logs; --json: the command object) and return.\n" },
	{ "run", cli_cmd_run,
	  "sbx run [--timeout 10m] [--port N]... -- CMD [ARGS...]\n"
	  "  Create a sandbox, exec CMD in it as `exec` does, stop the sandbox.\n" },
	{ "cp", cli_cmd_cp,
	  "sbx cp LOCAL ID:PATH\nsbx cp ID:PATH LOCAL\n"
	  "  Copy a file in or out, streamed. LOCAL may be - (stdin / stdout).\n"
	  "  PATH is absolute or relative to /home/sandbox.\n" },
	{ "logs", cli_cmd_logs,
	  "sbx logs ID CMD_ID [-f] [--since N]\n"
	  "  Print a command's output (stdout and stderr to sbx's), exact bytes;\n"
	  "  -f follows it until the command ends; --since N skips the first N bytes\n"
	  "  (of both streams together).\n" },
	{ "sh", cli_cmd_sh,
	  "sbx sh ID\n"
	  "  An interactive login shell in the sandbox (raw terminal, window size\n"
	  "  sent at start and on resize). Exits with the shell's status; the\n"
	  "  terminal is restored however it ends.\n" },
};

static void usage_all(FILE *f)
{
	size_t i;

	fputs("usage: sbx [--url URL] [--key KEY] [--json] COMMAND [ARGS]\n\n"
	      "Talks to a sandbox gateway: SBX_URL (default http://127.0.0.1:8080) with\n"
	      "the API key SBX_API_KEY; --url and --key override them.\n\ncommands:\n", f);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %s", commands[i].usage);
	fputs("\n`sbx COMMAND --help` shows one command.\n\n"
	      "exit status: exec, run and sh exit with the remote command's status\n"
	      "(128+N when signal N ended it); otherwise 0 on success, and:\n"
	      "  120  bad command line\n"
	      "  121  the gateway answered with an error (its message is printed)\n"
	      "  122  the gateway could not be reached\n"
	      "  123  the connection was lost or the answer was not understood\n"
	      "  124  a local file or terminal error\n", f);
}

/* Take --url/--key/--json out of argv (before any "--"). */
static int take_globals(struct cli_cfg *c, int *argc, char **argv)
{
	int i, o = 0, n = *argc;

	for (i = 0; i < n; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			while (i < n)
				argv[o++] = argv[i++];
			break;
		}
		if ((!strcmp(a, "--url") || !strcmp(a, "--key")) && i + 1 < n) {
			if (a[2] == 'u')
				c->url_text = argv[++i];
			else
				c->key = argv[++i];
		} else if (!strncmp(a, "--url=", 6)) {
			c->url_text = a + 6;
		} else if (!strncmp(a, "--key=", 6)) {
			c->key = a + 6;
		} else if (!strcmp(a, "--json")) {
			c->json = 1;
		} else if (!strcmp(a, "--url") || !strcmp(a, "--key")) {
			cli_errf("%s needs a value", a);
			return -1;
		} else {
			argv[o++] = argv[i];
		}
	}
	argv[o] = NULL;
	*argc = o;
	return 0;
}

static int wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	struct cli_cfg c = { 0 };
	struct sbx_err err = { 0 };
	size_t i;

	signal(SIGPIPE, SIG_IGN);
	c.url_text = getenv("SBX_URL");
	c.key = getenv("SBX_API_KEY");
	argc--;
	argv++;
	if (take_globals(&c, &argc, argv))
		return CLI_EXIT_USAGE;
	if (!c.url_text || !*c.url_text)
		c.url_text = "http://127.0.0.1:8080";
	if (argc < 1 || !strcmp(argv[0], "--help") || !strcmp(argv[0], "-h") ||
	    !strcmp(argv[0], "help")) {
		usage_all(argc < 1 ? stderr : stdout);
		return argc < 1 ? CLI_EXIT_USAGE : 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[0], commands[i].name))
			continue;
		if (wants_help(argc, argv)) {
			fputs("usage: ", stdout);
			fputs(commands[i].usage, stdout);
			return 0;
		}
		if (cli_url_parse(c.url_text, &c.url, &err)) {
			cli_errf("%s", err.msg);
			return CLI_EXIT_USAGE;
		}
		if (!c.key || !*c.key) {
			cli_errf("no API key: set SBX_API_KEY or pass --key");
			return CLI_EXIT_USAGE;
		}
		return commands[i].run(&c, argc, argv);
	}
	cli_errf("unknown command '%s' (sbx --help lists them)", argv[0]);
	return CLI_EXIT_USAGE;
}
