/* sbx create, ls, images, stop, rm, url: the sandbox lifecycle over REST. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


int cli_print_json(const cJSON *j)
{
	char *s = cJSON_PrintUnformatted(j);

	if (!s)
		return CLI_EXIT_LOCAL;
	puts(s);
	cJSON_free(s);
	return 0;
}

/* Whether id looks like a sandbox id (it goes into a URL path). */
static int id_ok(const char *id)
{
	size_t n = strlen(id);

	if (!n || n > 100 || strspn(id, "abcdefghijklmnopqrstuvwxyz0123456789_-") != n) {
		cli_errf("'%s' is not a sandbox id", id);
		return 0;
	}
	return 1;
}

/* Whether name looks like an image name (it goes into a URL path; the
 * runner's rule, runner/rn_spec.c). */
static int image_ok(const char *name)
{
	size_t n = strlen(name);

	if (!n || n > 32 || name[0] == '.' || name[0] == '-' ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789._-") != n) {
		cli_errf("'%s' is not an image name (sbx images lists them)", name);
		return 0;
	}
	return 1;
}

int cli_create_sandbox(const struct cli_cfg *c, const struct cli_create_opts *o, char *id,
		       size_t idlen, cJSON **obj)
{
	cJSON *req = cJSON_CreateObject(), *pa = NULL, *res = NULL, *jid;
	char *body;
	int i, rc;

	if (o->timeout_ms >= 0)
		cJSON_AddNumberToObject(req, "timeout_ms", (double)o->timeout_ms);
	if (o->nports) {
		pa = cJSON_AddArrayToObject(req, "ports");
		for (i = 0; i < o->nports; i++)
			cJSON_AddItemToArray(pa, cJSON_CreateNumber(o->ports[i]));
	}
	if (o->image)
		cJSON_AddStringToObject(req, "image", o->image);
	if (o->snapshot)
		cJSON_AddStringToObject(cJSON_AddObjectToObject(req, "source"), "snapshot", o->snapshot);
	if (o->persistent)
		cJSON_AddTrueToObject(req, "persistent");
	body = cJSON_PrintUnformatted(req);
	cJSON_Delete(req);
	if (!body)
		return CLI_EXIT_LOCAL;
	rc = cli_api_json(c, "POST", "/v1/sandboxes", body, &res);
	cJSON_free(body);
	if (rc)
		return rc;
	jid = cJSON_GetObjectItemCaseSensitive(res, "id");
	if (!cJSON_IsString(jid) || strlen(jid->valuestring) >= idlen) {
		cli_errf("the gateway's answer has no sandbox id");
		cJSON_Delete(res);
		return CLI_EXIT_CONN;
	}
	strcpy(id, jid->valuestring);
	if (obj)
		*obj = res;
	else
		cJSON_Delete(res);
	return 0;
}

/* Parse create's options from argv[1..]; stops at "--" (returned in *rest).
 * 0, or CLI_EXIT_USAGE after saying why. */
int cli_parse_create_opts(int argc, char **argv, struct cli_create_opts *o, int *rest)
{
	int i;

	memset(o, 0, sizeof *o);
	o->timeout_ms = -1;
	*rest = argc;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			*rest = i + 1;
			return 0;
		}
		if (!strcmp(a, "--timeout") && i + 1 < argc) {
			o->timeout_ms = cli_parse_duration(argv[++i]);
			if (o->timeout_ms < 0) {
				cli_errf("--timeout %s: give a duration like 90s, 10m or 2h", argv[i]);
				return CLI_EXIT_USAGE;
			}
		} else if (!strcmp(a, "--port") && i + 1 < argc) {
			char *end;
			long p = strtol(argv[++i], &end, 10);

			if (*end || p < 1 || p > 65535 || o->nports == MAX_PORTS) {
				cli_errf("--port %s: a port 1..65535 (at most %d)", argv[i], MAX_PORTS);
				return CLI_EXIT_USAGE;
			}
			o->ports[o->nports++] = (int)p;
		} else if (!strcmp(a, "--image") && i + 1 < argc) {
			if (!image_ok(argv[++i]))
				return CLI_EXIT_USAGE;
			o->image = argv[i];
		} else if (!strcmp(a, "--snapshot") && i + 1 < argc) {
			/* the same characters as a sandbox id: it goes into JSON only */
			if (!id_ok(argv[++i]))
				return CLI_EXIT_USAGE;
			o->snapshot = argv[i];
		} else if (!strcmp(a, "--persistent")) {
			o->persistent = 1;
		} else {
			cli_errf("%s: unexpected argument '%s' (sbx %s --help)", argv[0], a, argv[0]);
			return CLI_EXIT_USAGE;
		}
	}
	return 0;
}

int cli_cmd_create(const struct cli_cfg *c, int argc, char **argv)
{
	struct cli_create_opts o;
	int rest, rc;
	char id[128];
	cJSON *obj = NULL;

	rc = cli_parse_create_opts(argc, argv, &o, &rest);
	if (rc)
		return rc;
	if (rest != argc) {
		cli_errf("create takes no command");
		return CLI_EXIT_USAGE;
	}
	rc = cli_create_sandbox(c, &o, id, sizeof(id), &obj);
	if (rc)
		return rc;
	if (c->json)
		rc = cli_print_json(obj);
	else
		puts(id);
	cJSON_Delete(obj);
	return rc;
}

/* GET path for a listing command that takes no arguments (name): *res to
 * print as a table, or NULL and the exit status (the gateway's JSON was
 * printed for --json, or an error said). */
static int listing(const struct cli_cfg *c, int argc, const char *name, const char *path,
		   cJSON **res)
{
	int rc;

	*res = NULL;
	if (argc != 1) {
		cli_errf("%s takes no arguments", name);
		return CLI_EXIT_USAGE;
	}
	rc = cli_api_json(c, "GET", path, NULL, res);
	if (rc || !c->json)
		return rc;
	rc = cli_print_json(*res);
	cJSON_Delete(*res);
	*res = NULL;
	return rc;
}

int cli_cmd_ls(const struct cli_cfg *c, int argc, char **argv)
{
	cJSON *res, *list, *sb;
	int rc = listing(c, argc, "ls", "/v1/sandboxes", &res);

	(void)argv;
	if (!res)
		return rc;
	list = cJSON_GetObjectItemCaseSensitive(res, "sandboxes");
	printf("%-40s %-9s %8s  %s\n", "ID", "STATUS", "LEFT_S", "PORTS");
	cJSON_ArrayForEach(sb, list) {
		cJSON *id = cJSON_GetObjectItemCaseSensitive(sb, "id");
		cJSON *st = cJSON_GetObjectItemCaseSensitive(sb, "status");
		cJSON *ex = cJSON_GetObjectItemCaseSensitive(sb, "expires_at");
		cJSON *ports = cJSON_GetObjectItemCaseSensitive(sb, "ports"), *p;
		struct timespec now;
		long long left = 0;
		int first = 1;

		clock_gettime(CLOCK_REALTIME, &now);
		if (cJSON_IsNumber(ex))
			left = ((long long)ex->valuedouble - (now.tv_sec * 1000LL + now.tv_nsec / 1000000)) / 1000;
		printf("%-40s %-9s %8lld  ", cJSON_IsString(id) ? id->valuestring : "?",
		       cJSON_IsString(st) ? st->valuestring : "?", left > 0 ? left : 0);
		cJSON_ArrayForEach(p, ports) {
			printf("%s%d", first ? "" : ",", p->valueint);
			first = 0;
		}
		putchar('\n');
	}
	cJSON_Delete(res);
	return 0;
}

/* sbx images rm NAME...: DELETE /v1/images/NAME for each. */
static int images_rm(const struct cli_cfg *c, int argc, char **argv)
{
	char path[128];
	int rc = 0;

	if (argc < 3) {
		cli_errf("usage: sbx images rm NAME...");
		return CLI_EXIT_USAGE;
	}
	for (int i = 2; i < argc; i++) {
		int r;
		if (!image_ok(argv[i]))
			return CLI_EXIT_USAGE;
		snprintf(path, sizeof(path), "/v1/images/%s", argv[i]);
		r = cli_api_json(c, "DELETE", path, NULL, NULL);
		if (r && !rc)
			rc = r;
	}
	return rc;
}

int cli_cmd_images(const struct cli_cfg *c, int argc, char **argv)
{
	cJSON *res, *img;
	int rc;

	if (argc >= 2 && !strcmp(argv[1], "rm"))
		return images_rm(c, argc, argv);
	rc = listing(c, argc, "images", "/v1/images", &res);
	if (!res)
		return rc;
	printf("%-20s %-12s %-10s %s\n", "NAME", "NODE", "PYTHON", "OS");
	cJSON_ArrayForEach(img, cJSON_GetObjectItemCaseSensitive(res, "images")) {
		const cJSON *rt = cJSON_GetObjectItemCaseSensitive(img, "runtimes");
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(img, "name"));
		const char *os = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(img, "os"));
		const char *node = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rt, "node"));
		const char *py = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rt, "python"));
		printf("%-20s %-12s %-10s %s\n", name ? name : "?", node ? node : "-", py ? py : "-",
		       os ? os : "");
	}
	cJSON_Delete(res);
	return 0;
}

/* Each sandbox of argv[1..] by method on /v1/sandboxes/ID<suffix>; --json
 * prints each answer. The first failure's exit status, after trying all. */
static int each_sandbox(const struct cli_cfg *c, int argc, char **argv, const char *usage,
			const char *method, const char *suffix)
{
	char path[256];
	int i, rc = 0;

	if (argc < 2) {
		cli_errf("usage: %s", usage);
		return CLI_EXIT_USAGE;
	}
	for (i = 1; i < argc; i++) {
		cJSON *res = NULL;
		int r;

		if (!id_ok(argv[i]))
			return CLI_EXIT_USAGE;
		snprintf(path, sizeof(path), "/v1/sandboxes/%s%s", argv[i], suffix);
		r = cli_api_json(c, method, path, NULL, c->json ? &res : NULL);
		if (!r && res)
			r = cli_print_json(res);
		cJSON_Delete(res);
		if (r && !rc)
			rc = r;
	}
	return rc;
}

/* POST .../stop: a persistent sandbox is kept (docs/api.md), any other ends */
int cli_cmd_stop(const struct cli_cfg *c, int argc, char **argv)
{
	return each_sandbox(c, argc, argv, "sbx stop ID...", "POST", "/stop");
}

/* DELETE: ended for good, a persistent one's kept files too */
int cli_cmd_rm(const struct cli_cfg *c, int argc, char **argv)
{
	return each_sandbox(c, argc, argv, "sbx rm ID...", "DELETE", "");
}

int cli_cmd_url(const struct cli_cfg *c, int argc, char **argv)
{
	char path[256], *end;
	cJSON *res = NULL, *routes, *r;
	long port;
	int rc;

	if (argc != 3) {
		cli_errf("usage: sbx url ID PORT");
		return CLI_EXIT_USAGE;
	}
	port = strtol(argv[2], &end, 10);
	if (!id_ok(argv[1]) || *end || port < 1 || port > 65535) {
		if (*end || port < 1 || port > 65535)
			cli_errf("'%s' is not a port", argv[2]);
		return CLI_EXIT_USAGE;
	}
	snprintf(path, sizeof(path), "/v1/sandboxes/%s", argv[1]);
	rc = cli_api_json(c, "GET", path, NULL, &res);
	if (rc)
		return rc;
	routes = cJSON_GetObjectItemCaseSensitive(res, "routes");
	cJSON_ArrayForEach(r, routes) {
		cJSON *p = cJSON_GetObjectItemCaseSensitive(r, "port");
		cJSON *u = cJSON_GetObjectItemCaseSensitive(r, "url");

		if (cJSON_IsNumber(p) && p->valueint == port && cJSON_IsString(u)) {
			if (c->json)
				cli_print_json(r);
			else
				puts(u->valuestring);
			cJSON_Delete(res);
			return 0;
		}
	}
	cJSON_Delete(res);
	cli_errf("sandbox %s has no preview for port %ld (declare it: sbx create --port %ld)",
		 argv[1], port, port);
	return cli_exit_for_error(0, "no_route");
}
