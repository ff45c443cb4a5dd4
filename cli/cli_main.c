/* sbx: the command-line client of the sandbox gateway (docs/cli.md). */
#include "cli.h"

#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbx_usage.h"

struct cli_command {
	const char *name;
	int (*run)(const struct cli_cfg *c, int argc, char **argv);
	const char *usage;
};

static const struct cli_command commands[] = {
	{ "create", cli_cmd_create,
	  "sbx create [--timeout 10m] [--port 3000]... [--image NAME] [--snapshot ID]\n"
	  "           [--persistent]\n"
	  "  Create a sandbox and print its id (--json: the whole object).\n"
	  "  --timeout: ms, s (default unit), m or h, e.g. 90s, 10m; --port: a port\n"
	  "  to preview (repeat for more); --image: one of sbx images (default:\n"
	  "  the gateway's default image); --snapshot: start from one of sbx\n"
	  "  snapshots; --persistent: its timeout keeps it (sbx resume, or any\n"
	  "  exec or file call, brings it back; sbx stop keeps it, sbx rm ends it\n"
	  "  for good).\n" },
	{ "ls", cli_cmd_ls,
	  "sbx ls\n  List this key's sandboxes: id, status, seconds left, ports\n"
	  "  (--json: the gateway's list).\n" },
	{ "images", cli_cmd_images,
	  "sbx images\n  List the images a sandbox can be created from: name, OS, node and\n"
	  "  python versions (--json: the gateway's list).\n"
	  "sbx images rm NAME...\n  Delete images (refused while a sandbox uses one).\n" },
	{ "stop", cli_cmd_stop,
	  "sbx stop ID...\n  Stop sandboxes; a persistent one is kept and resumes on its next\n"
	  "  exec or file call (stopping a stopped one is not an error; --json: each\n"
	  "  stopped object).\n" },
	{ "rm", cli_cmd_rm,
	  "sbx rm ID...\n  Stop and destroy sandboxes for good, a persistent one's kept files\n"
	  "  too (again is not an error; --json: each stopped object).\n" },
	{ "net", cli_cmd_net,
	  "sbx net ID POLICY\n  Apply a network policy to a running sandbox's new connections:\n"
	  "  deny-all, allow-all, names separated by commas (an allow-list; *.x for\n"
	  "  subdomains), or the API's JSON object. Prints the policy now in force.\n" },
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
	  "sbx run [--timeout 10m] [--port N]... [--image NAME] -- CMD [ARGS...]\n"
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
	{ "snapshot", cli_cmd_snapshot,
	  "sbx snapshot ID [--expires DURATION] [--keep N]\n"
	  "  Keep the sandbox's files as a snapshot and print its id (--json: the\n"
	  "  object); --keep N keeps only the newest N snapshots of the sandbox.\n" },
	{ "snapshots", cli_cmd_snapshots,
	  "sbx snapshots\n  List this key's snapshots: id, sandbox, bytes, expires or kept.\n" },
	{ "fork", cli_cmd_fork,
	  "sbx fork ID [--count N]\n"
	  "  Snapshot the sandbox and start N (default 1) new ones from it with its\n"
	  "  settings, without its env; prints their ids.\n" },
	{ "pause", cli_cmd_pause,
	  "sbx pause ID...\n  Stop every process of the sandboxes where it stands (memory kept).\n" },
	{ "resume", cli_cmd_resume,
	  "sbx resume ID...\n  Let paused sandboxes run on.\n" },
	{ "errors", cli_cmd_errors,
	  "sbx errors\n  The API's error codes: each one's class and the status sbx exits\n"
	  "  with when the gateway answers it (--json: an array). Needs no gateway.\n" },
	{ "sh", cli_cmd_sh,
	  "sbx sh ID\n"
	  "  An interactive login shell in the sandbox (raw terminal, window size\n"
	  "  sent at start and on resize). Exits with the shell's status; the\n"
	  "  terminal is restored however it ends.\n" },
};

/* The global flags: anywhere before "--", as --NAME VALUE or --NAME=VALUE
 * (--json takes none); a value's default is its environment variable's,
 * else dflt. */
struct global {
	const char *name;
	const char *arg;            /* its value's name; NULL: takes none */
	size_t at;                  /* in struct cli_cfg: a const char * or an int */
	const char *env, *dflt;
};

#define AT(field) offsetof(struct cli_cfg, field)

static const struct global globals[] = {
	{ "url", "URL", AT(url_text), "SBX_URL", "http://127.0.0.1:8080" },
	{ "key", "KEY", AT(key), "SBX_API_KEY", NULL },
	{ "json", NULL, AT(json), NULL, NULL },
};
#define N_GLOBALS (sizeof(globals) / sizeof(globals[0]))

static const char **text_at(struct cli_cfg *c, const struct global *g)
{
	return (const char **)(void *)((char *)c + g->at);
}

/* One command's usage in the overall list: every line two spaces in, so
 * a command's second synopsis line (sbx images rm) lines up with its first. */
static void print_indented(FILE *f, const char *text)
{
	const char *p = text, *nl;

	while (*p) {
		nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
		fprintf(f, "  %.*s", (int)n, p);
		p += n;
	}
}

static void usage_all(FILE *f)
{
	char text[N_GLOBALS][32];
	const char *groups[N_GLOBALS + 2];
	size_t i;

	for (i = 0; i < N_GLOBALS; i++) {
		snprintf(text[i], sizeof(text[i]), "[--%s%s%s]", globals[i].name,
			 globals[i].arg ? " " : "", globals[i].arg ? globals[i].arg : "");
		groups[i] = text[i];
	}
	groups[i++] = "COMMAND";
	groups[i++] = "[ARGS]";
	sbx_usage_synopsis(f, "usage: sbx ", groups, i, 80);
	fputs("\nTalks to a sandbox gateway: SBX_URL (default http://127.0.0.1:8080) with\n"
	      "the API key SBX_API_KEY; --url and --key override them.\n\ncommands:\n", f);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		print_indented(f, commands[i].usage);
	fputs("\n`sbx COMMAND --help` shows one command.\n\n"
	      "exit status: exec, run and sh exit with the remote command's status\n"
	      "(128+N when signal N ended it); otherwise 0 on success, and:\n"
	      "  111  the request is invalid (InvalidError: bad_request, invalid, ...)\n"
	      "  112  no key, a wrong one, or no scope (UnauthorizedError)\n"
	      "  113  no such sandbox, command, file, snapshot or image (NotFoundError)\n"
	      "  114  not in a state for this: stopped, paused, exists (ConflictError)\n"
	      "  115  this key is at its limit (RateLimitedError)\n"
	      "  116  no room now: memory, slots, storage (CapacityError)\n"
	      "  117  the runner cannot be reached now; try again (UnavailableError)\n"
	      "  120  bad command line\n"
	      "  121  another error of the gateway (its message is printed)\n"
	      "  122  the gateway could not be reached\n"
	      "  123  the connection was lost or the answer was not understood\n"
	      "  124  a local file or terminal error\n", f);
}

/* The global flag word a is, or NULL; *value its "=VALUE" part, if any. */
static const struct global *global_of(const char *a, const char **value)
{
	*value = NULL;
	if (strncmp(a, "--", 2) != 0)
		return NULL;
	for (size_t i = 0; i < N_GLOBALS; i++) {
		size_t n = strlen(globals[i].name);

		if (strncmp(a + 2, globals[i].name, n) != 0)
			continue;
		if (!a[2 + n])
			return &globals[i];
		if (a[2 + n] == '=' && globals[i].arg) {
			*value = a + 3 + n;
			return &globals[i];
		}
	}
	return NULL;
}

/* Take the global flags out of argv (before any "--"), over their
 * environment variables and defaults. */
static int take_globals(struct cli_cfg *c, int *argc, char **argv)
{
	int i, o = 0, n = *argc;
	size_t g;

	for (g = 0; g < N_GLOBALS; g++)
		if (globals[g].env)
			*text_at(c, &globals[g]) = getenv(globals[g].env);
	for (i = 0; i < n; i++) {
		const char *a = argv[i], *v;
		const struct global *gl = global_of(a, &v);

		if (!strcmp(a, "--")) {
			while (i < n)
				argv[o++] = argv[i++];
			break;
		}
		if (!gl) {
			argv[o++] = argv[i];
		} else if (!gl->arg) {
			*(int *)(void *)((char *)c + gl->at) = 1;
		} else if (v) {
			*text_at(c, gl) = v;
		} else if (i + 1 < n) {
			*text_at(c, gl) = argv[++i];
		} else {
			cli_errf("%s needs a value", a);
			return -1;
		}
	}
	argv[o] = NULL;
	*argc = o;
	for (g = 0; g < N_GLOBALS; g++) {
		const char **t = globals[g].dflt ? text_at(c, &globals[g]) : NULL;

		if (t && (!*t || !**t))
			*t = globals[g].dflt;
	}
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

static const struct cli_command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

/* What every command needs: a URL that parses and a key. */
static int check_cfg(struct cli_cfg *c)
{
	struct sbx_err err = { 0 };

	if (cli_url_parse(c->url_text, &c->url, &err)) {
		cli_errf("%s", err.msg);
		return -1;
	}
	if (!c->key || !*c->key) {
		cli_errf("no API key: set SBX_API_KEY or pass --key");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct cli_cfg c = { 0 };
	const struct cli_command *cmd;

	signal(SIGPIPE, SIG_IGN);
	argc--;
	argv++;
	if (take_globals(&c, &argc, argv))
		return CLI_EXIT_USAGE;
	if (argc < 1 || !strcmp(argv[0], "--help") || !strcmp(argv[0], "-h") ||
	    !strcmp(argv[0], "help")) {
		usage_all(argc < 1 ? stderr : stdout);
		return argc < 1 ? CLI_EXIT_USAGE : 0;
	}
	cmd = find_command(argv[0]);
	if (!cmd) {
		cli_errf("unknown command '%s' (sbx --help lists them)", argv[0]);
		return CLI_EXIT_USAGE;
	}
	if (wants_help(argc, argv)) {
		fputs("usage: ", stdout);
		fputs(cmd->usage, stdout);
		return 0;
	}
	if (cmd->run == cli_cmd_errors)   /* a table of sbx's own: no gateway asked */
		return cmd->run(&c, argc, argv);
	if (check_cfg(&c) < 0)
		return CLI_EXIT_USAGE;
	return cmd->run(&c, argc, argv);
}
