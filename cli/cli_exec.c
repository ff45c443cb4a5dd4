/* sbx exec and sbx run: a detached command followed over its WebSocket
 * stream, so output arrives as it is written and stdin can be sent. */
#include "cli_ws.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, 0 };

/* Ctrl-C (and SIGTERM, SIGHUP, SIGQUIT) go to the command, which decides
 * whether it ends; sbx keeps streaming until the exit message comes. */
static void exec_signal(struct cli_ws *s, int sig)
{
	char name[16];

	snprintf(name, sizeof(name), "SIG%s", sigabbrev_np(sig));
	cli_ws_kill(s, name);
}

static void exec_open(struct cli_ws *s)
{
	if (!s->forward_stdin) /* stdin is a terminal: the command gets none */
		cli_ws_stdin_eof(s);
}

/* The body of POST .../commands for argv, with exec's options. */
static char *command_body(int argc, char **argv, const char *cwd, int sudo,
			  cJSON *env)
{
	cJSON *req = cJSON_CreateObject(), *args = cJSON_AddArrayToObject(req, "args");
	char *s;
	int i;

	cJSON_AddStringToObject(req, "cmd", argv[0]);
	for (i = 1; i < argc; i++)
		cJSON_AddItemToArray(args, cJSON_CreateString(argv[i]));
	if (cwd)
		cJSON_AddStringToObject(req, "cwd", cwd);
	if (sudo)
		cJSON_AddTrueToObject(req, "sudo");
	if (env)
		cJSON_AddItemToObject(req, "env", cJSON_Duplicate(env, 1));
	cJSON_AddTrueToObject(req, "detached");
	s = cJSON_PrintUnformatted(req);
	cJSON_Delete(req);
	return s;
}

static int exec_in(const struct cli_cfg *c, const char *id, int argc, char **argv,
		   const char *cwd, int sudo, cJSON *env, int detach)
{
	char path[512], kill_path[512], *body = command_body(argc, argv, cwd, sudo, env);
	cJSON *res = NULL, *cid;
	struct cli_ws s;
	int rc;

	if (!body)
		return CLI_EXIT_LOCAL;
	snprintf(path, sizeof(path), "/v1/sandboxes/%s/commands", id);
	rc = cli_api_json(c, "POST", path, body, &res);
	cJSON_free(body);
	if (rc)
		return rc;
	cid = cJSON_GetObjectItemCaseSensitive(res, "id");
	if (!cJSON_IsString(cid) || strlen(cid->valuestring) > 100) {
		cJSON_Delete(res);
		cli_errf("the gateway's answer has no command id");
		return CLI_EXIT_CONN;
	}
	if (detach) { /* its id, for sbx logs (--json: the command object) */
		if (c->json)
			cli_print_json(res);
		else
			puts(cid->valuestring);
		cJSON_Delete(res);
		return 0;
	}
	snprintf(kill_path, sizeof(kill_path), "/v1/sandboxes/%s/commands/%s/kill", id,
		 cid->valuestring);
	snprintf(path, sizeof(path), "/v1/sandboxes/%s/commands/%s/stream?since=0", id,
		 cid->valuestring);
	cJSON_Delete(res);
	memset(&s, 0, sizeof(s));
	s.mode = CLI_WS_STREAM;
	s.cfg = c;
	s.path = path;
	s.forward_stdin = !isatty(0);
	s.signals = forwarded;
	s.on_signal = exec_signal;
	s.on_open = exec_open;
	if (cli_ws_run(&s)) {
		cli_errf("%s", s.error);
		return CLI_EXIT_CONN;
	}
	if (s.output_gone && !s.got_exit) {
		/* as a local command writing to that pipe would get */
		cli_api_json(c, "POST", kill_path, "{\"signal\":\"SIGPIPE\"}", NULL);
		return 128 + SIGPIPE;
	}
	if (!s.got_exit) {
		cli_errf("the stream ended before the command did%s%s", s.error[0] ? ": " : "",
			 s.error);
		return CLI_EXIT_CONN;
	}
	return s.exit_status;
}

/* exec's options before "--": --cwd, --sudo, -e NAME=VALUE. */
static int exec_opts(int argc, char **argv, int first, const char **cwd, int *sudo,
		     cJSON *env, int *detach, int *rest)
{
	int i;

	for (i = first; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			*rest = i + 1;
			return 0;
		}
		if (!strcmp(a, "--cwd") && i + 1 < argc) {
			*cwd = argv[++i];
		} else if (!strcmp(a, "--sudo")) {
			*sudo = 1;
		} else if (!strcmp(a, "-d") || !strcmp(a, "--detach")) {
			*detach = 1;
		} else if (!strcmp(a, "-e") && i + 1 < argc) {
			char *eq = strchr(argv[++i], '=');

			if (!eq || eq == argv[i]) {
				cli_errf("-e %s: give NAME=VALUE", argv[i]);
				return CLI_EXIT_USAGE;
			}
			*eq = '\0';
			cJSON_AddStringToObject(env, argv[i], eq + 1);
			*eq = '=';
		} else {
			/* no "--": the command starts here */
			*rest = i;
			return 0;
		}
	}
	*rest = argc;
	return 0;
}

int cli_exec_stream(const struct cli_cfg *c, const char *id, int argc, char **argv)
{
	return exec_in(c, id, argc, argv, NULL, 0, NULL, 0);
}

int cli_cmd_exec(const struct cli_cfg *c, int argc, char **argv)
{
	const char *cwd = NULL;
	cJSON *env = cJSON_CreateObject();
	int sudo = 0, detach = 0, rest, rc;

	if (argc < 2 || argv[1][0] == '-') {
		cli_errf("usage: sbx exec ID -- CMD [ARGS...]");
		cJSON_Delete(env);
		return CLI_EXIT_USAGE;
	}
	rc = exec_opts(argc, argv, 2, &cwd, &sudo, env, &detach, &rest);
	if (!rc && rest >= argc) {
		cli_errf("exec: no command (sbx exec ID -- CMD [ARGS...])");
		rc = CLI_EXIT_USAGE;
	}
	if (!rc)
		rc = exec_in(c, argv[1], argc - rest, argv + rest, cwd, sudo,
			     cJSON_GetArraySize(env) ? env : NULL, detach);
	cJSON_Delete(env);
	return rc;
}

int cli_cmd_run(const struct cli_cfg *c, int argc, char **argv)
{
	struct cli_create_opts o;
	int rest, rc, src;
	char id[128], path[256];

	rc = cli_parse_create_opts(argc, argv, &o, &rest);
	if (rc)
		return rc;
	if (rest >= argc) {
		cli_errf("run: no command (sbx run [--timeout 10m] -- CMD [ARGS...])");
		return CLI_EXIT_USAGE;
	}
	rc = cli_create_sandbox(c, &o, id, sizeof(id), NULL);
	if (rc)
		return rc;
	rc = cli_exec_stream(c, id, argc - rest, argv + rest);
	snprintf(path, sizeof(path), "/v1/sandboxes/%s", id);
	src = cli_api_json(c, "DELETE", path, NULL, NULL);
	if (src)
		cli_errf("sandbox %s may still be running: end it with sbx rm %s", id, id);
	return rc;
}
