/* sbx net: a running sandbox's network policy (PATCH .../network). */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

/* POLICY as the API's "network": deny-all, allow-all, a JSON object, or
 * names separated by commas (an allow-list). NULL when out of memory. */
static cJSON *policy_of(const char *s)
{
	cJSON *o, *allow;
	char *copy, *save = NULL;

	if (!strcmp(s, "deny-all") || !strcmp(s, "allow-all"))
		return cJSON_CreateString(s);
	if (s[0] == '{')
		return cJSON_Parse(s);
	o = cJSON_CreateObject();
	allow = cJSON_AddArrayToObject(o, "allow");
	copy = strdup(s);
	if (!copy) {
		cJSON_Delete(o);
		return NULL;
	}
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
		cJSON_AddItemToArray(allow, cJSON_CreateString(t));
	free(copy);
	return o;
}

int cli_cmd_net(const struct cli_cfg *c, int argc, char **argv)
{
	char path[256];
	cJSON *body, *pol, *res = NULL;
	char *txt;
	int r;

	if (argc != 3) {
		cli_errf("usage: sbx net ID POLICY");
		return CLI_EXIT_USAGE;
	}
	if (strspn(argv[1], "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(argv[1]) ||
	    strlen(argv[1]) > 100) {
		cli_errf("'%s' is not a sandbox id", argv[1]);
		return CLI_EXIT_USAGE;
	}
	pol = policy_of(argv[2]);
	if (!pol) {
		cli_errf("POLICY: not JSON: %s", argv[2]);
		return CLI_EXIT_USAGE;
	}
	body = cJSON_CreateObject();
	cJSON_AddItemToObject(body, "network", pol);
	txt = cJSON_PrintUnformatted(body);
	cJSON_Delete(body);
	snprintf(path, sizeof(path), "/v1/sandboxes/%s/network", argv[1]);
	r = cli_api_json(c, "PATCH", path, txt, &res);
	cJSON_free(txt);
	if (!r && res) {
		const cJSON *net = cJSON_GetObjectItemCaseSensitive(res, "network");
		r = cli_print_json(c->json ? res : net);
	}
	cJSON_Delete(res);
	return r;
}
