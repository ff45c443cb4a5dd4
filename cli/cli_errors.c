/* sbx: the API's error codes as classes and exit statuses. The code -> class
 * table is the clients' (docs/errors.md; tests/openapi checks that they and
 * docs/openapi.yaml agree), so a script can tell "not found" from "try again"
 * by sbx's exit status alone. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

struct err_class {
	const char *name;
	int exit;
};

/* Indexed by enum cli_err_class. */
static const struct err_class classes[] = {
	[CLI_ERR_OTHER] = { "SandboxError", CLI_EXIT_API },
	[CLI_ERR_INVALID] = { "InvalidError", CLI_EXIT_INVALID },
	[CLI_ERR_UNAUTHORIZED] = { "UnauthorizedError", CLI_EXIT_UNAUTHORIZED },
	[CLI_ERR_NOT_FOUND] = { "NotFoundError", CLI_EXIT_NOT_FOUND },
	[CLI_ERR_CONFLICT] = { "ConflictError", CLI_EXIT_CONFLICT },
	[CLI_ERR_RATE_LIMITED] = { "RateLimitedError", CLI_EXIT_RATE_LIMITED },
	[CLI_ERR_CAPACITY] = { "CapacityError", CLI_EXIT_CAPACITY },
	[CLI_ERR_UNAVAILABLE] = { "UnavailableError", CLI_EXIT_UNAVAILABLE },
};

/* docs/errors.md: one row per code, sorted by code. */
static const struct {
	const char *code;
	enum cli_err_class cls;
} codes[] = {
	{ "bad_request", CLI_ERR_INVALID },
	{ "conflict", CLI_ERR_CONFLICT },
	{ "connection_failed", CLI_ERR_UNAVAILABLE },
	{ "forbidden", CLI_ERR_UNAUTHORIZED },
	{ "insufficient_storage", CLI_ERR_CAPACITY },
	{ "internal", CLI_ERR_OTHER },
	{ "invalid", CLI_ERR_INVALID },
	{ "isolation_unavailable", CLI_ERR_INVALID },
	{ "length_required", CLI_ERR_INVALID },
	{ "limit_reached", CLI_ERR_RATE_LIMITED },
	{ "method_not_allowed", CLI_ERR_INVALID },
	{ "no_capacity", CLI_ERR_CAPACITY },
	{ "no_route", CLI_ERR_INVALID },
	{ "not_found", CLI_ERR_NOT_FOUND },
	{ "paused", CLI_ERR_CONFLICT },
	{ "pull_failed", CLI_ERR_OTHER },
	{ "runner_unavailable", CLI_ERR_UNAVAILABLE },
	{ "sandbox_stopped", CLI_ERR_CONFLICT },
	{ "too_large", CLI_ERR_INVALID },
	{ "too_many_connections", CLI_ERR_CAPACITY },
	{ "unauthorized", CLI_ERR_UNAUTHORIZED },
	{ "unknown_isolation", CLI_ERR_INVALID },
	{ "unsupported", CLI_ERR_INVALID },
	{ "upgrade_required", CLI_ERR_INVALID },
	{ "write_failed", CLI_ERR_OTHER },
};

/* A code not in the table (a newer gateway's) goes by its status. */
static enum cli_err_class class_of_status(int status)
{
	switch (status) {
	case 400: case 405: case 411: case 413: case 414: case 422: case 426:
		return CLI_ERR_INVALID;
	case 401: case 403:
		return CLI_ERR_UNAUTHORIZED;
	case 404:
		return CLI_ERR_NOT_FOUND;
	case 409: case 410:
		return CLI_ERR_CONFLICT;
	case 429:
		return CLI_ERR_RATE_LIMITED;
	case 503:
		return CLI_ERR_UNAVAILABLE;
	case 507:
		return CLI_ERR_CAPACITY;
	default:
		return CLI_ERR_OTHER;
	}
}

enum cli_err_class cli_err_class_of(int status, const char *code)
{
	for (size_t i = 0; code && i < sizeof(codes) / sizeof(codes[0]); i++)
		if (!strcmp(codes[i].code, code))
			return codes[i].cls;
	return class_of_status(status);
}

int cli_exit_for_error(int status, const char *code)
{
	return classes[cli_err_class_of(status, code)].exit;
}

/* sbx errors: the table, one "code class exit" line a code (--json: an
 * array of objects). A gateway that cannot be reached is sbx's own 122
 * (connection_failed's class is still UnavailableError). */
int cli_cmd_errors(const struct cli_cfg *c, int argc, char **argv)
{
	(void)argv;
	if (argc != 1) {
		cli_errf("usage: sbx errors");
		return CLI_EXIT_USAGE;
	}
	if (c->json)
		fputc('[', stdout);
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		const struct err_class *k = &classes[codes[i].cls];
		int status = strcmp(codes[i].code, "connection_failed") ? k->exit : CLI_EXIT_UNREACHABLE;

		if (c->json)
			printf("%s{\"code\":\"%s\",\"class\":\"%s\",\"exit\":%d}", i ? "," : "",
			       codes[i].code, k->name, status);
		else
			printf("%-22s %-18s %d\n", codes[i].code, k->name, status);
	}
	if (c->json)
		fputs("]\n", stdout);
	return fflush(stdout) ? CLI_EXIT_LOCAL : CLI_OK;
}
