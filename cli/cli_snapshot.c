/* sbx snapshot, snapshots, fork, pause, resume: snapshots and pausing over
 * REST (docs/cli.md). */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An id that may go into a URL path (a sandbox's or a snapshot's). */
static int id_ok(const char *id)
{
	size_t n = strlen(id);

	if (!n || n > 100 || strspn(id, "abcdefghijklmnopqrstuvwxyz0123456789_-") != n) {
		cli_errf("'%s' is not an id", id);
		return 0;
	}
	return 1;
}

/* POST body to /v1/sandboxes/ID/what; prints the member key of the answer
 * (each string of it when an array of objects: their ids), or all of it
 * with --json. */
static int post_and_print(const struct cli_cfg *c, const char *id, const char *what,
			  const char *body)
{
	char path[256];
	cJSON *res = NULL;
	int rc;

	snprintf(path, sizeof path, "/v1/sandboxes/%s/%s", id, what);
	rc = cli_api_json(c, "POST", path, body, &res);
	if (rc)
		return rc;
	if (c->json) {
		rc = cli_print_json(res);
	} else if (!strcmp(what, "fork")) {
		const cJSON *s;
		cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(res, "sandboxes"))
			puts(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "id")));
	} else if (!strcmp(what, "snapshots")) {
		puts(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "id")));
	}
	cJSON_Delete(res);
	return rc;
}

/* sbx snapshot ID [--expires 1h] [--keep N] */
int cli_cmd_snapshot(const struct cli_cfg *c, int argc, char **argv)
{
	cJSON *req = cJSON_CreateObject();
	const char *id = NULL;
	char *body;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--expires") && i + 1 < argc) {
			long long ms = cli_parse_duration(argv[++i]);
			if (ms <= 0) {
				cli_errf("--expires: '%s' is not a duration (e.g. 30m, 24h)", argv[i]);
				cJSON_Delete(req);
				return CLI_EXIT_USAGE;
			}
			cJSON_AddNumberToObject(req, "expires_in_ms", (double)ms);
		} else if (!strcmp(argv[i], "--keep") && i + 1 < argc) {
			char *end;
			long n = strtol(argv[++i], &end, 10);
			if (*end || n < 1 || n > 100) {
				cli_errf("--keep: a number from 1 to 100");
				cJSON_Delete(req);
				return CLI_EXIT_USAGE;
			}
			cJSON_AddNumberToObject(req, "keep_last", (double)n);
		} else if (!id && argv[i][0] != '-') {
			id = argv[i];
		} else {
			cli_errf("usage: sbx snapshot ID [--expires DURATION] [--keep N]");
			cJSON_Delete(req);
			return CLI_EXIT_USAGE;
		}
	}
	if (!id || !id_ok(id)) {
		if (!id)
			cli_errf("usage: sbx snapshot ID [--expires DURATION] [--keep N]");
		cJSON_Delete(req);
		return CLI_EXIT_USAGE;
	}
	body = cJSON_PrintUnformatted(req);
	cJSON_Delete(req);
	rc = body ? post_and_print(c, id, "snapshots", body) : CLI_EXIT_LOCAL;
	cJSON_free(body);
	return rc;
}

/* sbx fork ID [--count N] */
int cli_cmd_fork(const struct cli_cfg *c, int argc, char **argv)
{
	long n = 1;
	char body[64];

	if (argc == 4 && !strcmp(argv[2], "--count")) {
		char *end;
		n = strtol(argv[3], &end, 10);
		if (*end || n < 1 || n > 10) {
			cli_errf("--count: a number from 1 to 10");
			return CLI_EXIT_USAGE;
		}
	} else if (argc != 2) {
		cli_errf("usage: sbx fork ID [--count N]");
		return CLI_EXIT_USAGE;
	}
	if (!id_ok(argv[1]))
		return CLI_EXIT_USAGE;
	snprintf(body, sizeof body, "{\"count\":%ld}", n);
	return post_and_print(c, argv[1], "fork", body);
}

/* sbx pause|resume ID... */
static int each(const struct cli_cfg *c, int argc, char **argv, const char *what)
{
	int rc = 0;

	if (argc < 2) {
		cli_errf("usage: sbx %s ID...", what);
		return CLI_EXIT_USAGE;
	}
	for (int i = 1; i < argc; i++) {
		int r;
		if (!id_ok(argv[i]))
			return CLI_EXIT_USAGE;
		r = post_and_print(c, argv[i], what, NULL);
		if (r && !rc)
			rc = r;
	}
	return rc;
}

int cli_cmd_pause(const struct cli_cfg *c, int argc, char **argv)
{
	return each(c, argc, argv, "pause");
}

int cli_cmd_resume(const struct cli_cfg *c, int argc, char **argv)
{
	return each(c, argc, argv, "resume");
}

/* sbx snapshots: id, sandbox, size, expiry (or --json) */
int cli_cmd_snapshots(const struct cli_cfg *c, int argc, char **argv)
{
	cJSON *res = NULL;
	const cJSON *s;
	int rc;

	(void)argv;
	if (argc != 1) {
		cli_errf("usage: sbx snapshots");
		return CLI_EXIT_USAGE;
	}
	rc = cli_api_json(c, "GET", "/v1/snapshots", NULL, &res);
	if (rc)
		return rc;
	if (c->json) {
		rc = cli_print_json(res);
	} else {
		cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(res, "snapshots")) {
			const cJSON *exp = cJSON_GetObjectItemCaseSensitive(s, "expires_at");
			printf("%s\t%s\t%.0f\t%s\n",
			       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "id")),
			       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "sandbox_id")),
			       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, "size")),
			       cJSON_IsNumber(exp) ? "expires" : "kept");
		}
	}
	cJSON_Delete(res);
	return rc;
}
