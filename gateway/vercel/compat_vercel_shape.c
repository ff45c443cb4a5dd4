/* The SDK's JSON shapes (its validators.js, zod) from our objects. A
 * sandbox has exactly one session, so a session id is the sandbox id and
 * a sandbox's name is its id. Times are epoch milliseconds. What the SDK
 * wants of a command and our agent does not keep (its name, args, cwd) is
 * remembered here, for the last CV_CMD_TABLE commands started through
 * this surface; an older one shows an empty name and args. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compat_vercel.h"

static double num(const cJSON *o, const char *k, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static const char *str(const cJSON *o, const char *k, const char *dflt)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
	return s ? s : dflt;
}

/* Our sandbox status as the SDK's enum. */
static const char *status_of(const cJSON *s)
{
	const char *st = str(s, "status", "failed");
	if (!strcmp(st, "starting"))
		return "pending";
	if (!strcmp(st, "running") || !strcmp(st, "stopping") || !strcmp(st, "stopped"))
		return st;
	if (!strcmp(st, "paused"))   /* the SDK has no such state: alive, commands answer 409 */
		return "running";
	return "failed";
}

/* Our network as the API's policy: a mode, or "custom" with the names
 * and denied CIDRs of an allow-list (per-name rules have none to show). */
static void add_policy(cJSON *o, const cJSON *s)
{
	const cJSON *net = cJSON_GetObjectItemCaseSensitive(s, "network"), *n;
	cJSON *p = cJSON_AddObjectToObject(o, "networkPolicy"), *d;

	if (!cJSON_IsObject(net)) {
		const char *m = cJSON_GetStringValue(net);
		cJSON_AddStringToObject(p, "mode", m && !strcmp(m, "allow-all") ? "allow-all" : "deny-all");
		return;
	}
	cJSON_AddStringToObject(p, "mode", "custom");
	d = cJSON_AddArrayToObject(p, "allowedDomains");
	cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(net, "allow"))
		cJSON_AddItemToArray(d, cJSON_CreateString(cJSON_IsString(n) ? n->valuestring : n->string));
	n = cJSON_GetObjectItemCaseSensitive(net, "deny_cidrs");
	if (cJSON_GetArraySize(n))
		cJSON_AddItemToObject(p, "deniedCIDRs", cJSON_Duplicate(n, 1));
}

cJSON *cv_session(const struct gw_vh *vh, const cJSON *s)
{
	cJSON *o = cJSON_CreateObject();
	double created = num(s, "created_at", 0), expires = num(s, "expires_at", 0);
	const char *st = status_of(s);
	(void)vh;
	cJSON_AddStringToObject(o, "id", str(s, "id", ""));
	cJSON_AddNumberToObject(o, "memory", num(s, "memory_mb", 0));
	cJSON_AddNumberToObject(o, "vcpus", num(s, "vcpus", 1));
	cJSON_AddStringToObject(o, "region", "local");
	cJSON_AddNumberToObject(o, "timeout", expires > created ? expires - created :
				num(s, "timeout_ms", 0));
	cJSON_AddStringToObject(o, "status", st);
	cJSON_AddNumberToObject(o, "requestedAt", created);
	cJSON_AddNumberToObject(o, "startedAt", created);
	cJSON_AddNumberToObject(o, "createdAt", created);
	cJSON_AddNumberToObject(o, "updatedAt", (double)sbx_now_ms());
	if (!strcmp(st, "stopped") || !strcmp(st, "failed"))
		cJSON_AddNumberToObject(o, "stoppedAt", (double)sbx_now_ms());
	cJSON_AddStringToObject(o, "cwd", CV_CWD);
	add_policy(o, s);
	return o;
}

cJSON *cv_sandbox(const struct gw_vh *vh, const cJSON *s)
{
	cJSON *o = cJSON_CreateObject();
	double created = num(s, "created_at", 0), expires = num(s, "expires_at", 0);
	(void)vh;
	cJSON_AddStringToObject(o, "name", str(s, "id", ""));
	cJSON_AddBoolToObject(o, "persistent",
			      cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "persistent")));
	if (num(s, "snapshot_expires_in_ms", 0))
		cJSON_AddNumberToObject(o, "snapshotExpiration", num(s, "snapshot_expires_in_ms", 0));
	if (num(s, "snapshot_keep_last", 0))
		cJSON_AddNumberToObject(cJSON_AddObjectToObject(o, "keepLastSnapshots"), "count",
					num(s, "snapshot_keep_last", 0));
	cJSON_AddStringToObject(o, "region", "local");
	cJSON_AddNumberToObject(o, "vcpus", num(s, "vcpus", 1));
	cJSON_AddNumberToObject(o, "memory", num(s, "memory_mb", 0));
	cJSON_AddNumberToObject(o, "timeout", expires > created ? expires - created :
				num(s, "timeout_ms", 0));
	add_policy(o, s);
	cJSON_AddNumberToObject(o, "createdAt", created);
	cJSON_AddNumberToObject(o, "updatedAt", (double)sbx_now_ms());
	if (expires)
		cJSON_AddNumberToObject(o, "expiresAt", expires);
	cJSON_AddStringToObject(o, "currentSessionId", str(s, "id", ""));
	cJSON_AddStringToObject(o, "status", status_of(s));
	cJSON_AddStringToObject(o, "cwd", CV_CWD);
	return o;
}

/* routes[].url is our preview URL. The SDK's domain(port) is
 * "https://" + subdomain + ".vercel.run": subdomain is our preview host
 * followed by "/", so domain() names our host with the path /.vercel.run,
 * which the preview proxy drops (gw_proxy.c); paths appended to it work. */
cJSON *cv_routes(const struct gw_vh *vh, const cJSON *s)
{
	cJSON *a = cJSON_CreateArray(), *rt;
	(void)vh;
	cJSON_ArrayForEach(rt, cJSON_GetObjectItemCaseSensitive(s, "routes")) {
		const char *url = str(rt, "url", "");
		const char *host = strstr(url, "://");
		char sub[400];
		cJSON *o = cJSON_CreateObject();
		snprintf(sub, sizeof sub, "%s/", host ? host + 3 : url);
		cJSON_AddStringToObject(o, "url", url);
		cJSON_AddStringToObject(o, "subdomain", sub);
		cJSON_AddNumberToObject(o, "port", num(rt, "port", 0));
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* ---- what we keep of commands ---- */

struct kept {
	char sid[80], cid[80];
	char *name, *cwd;
	cJSON *args;
	double started;
};

static struct kept table[CV_CMD_TABLE];
static unsigned next_slot;

void cv_cmd_remember(const char *sid, const char *cid, const char *name,
		     const cJSON *args, const char *cwd, double started_at)
{
	struct kept *k = &table[next_slot++ % CV_CMD_TABLE];
	char *printed = args ? cJSON_PrintUnformatted(args) : NULL;

	free(k->name);
	free(k->cwd);
	cJSON_Delete(k->args);
	snprintf(k->sid, sizeof k->sid, "%s", sid);
	snprintf(k->cid, sizeof k->cid, "%s", cid);
	k->name = strndup(name, 4096);
	k->cwd = strndup(cwd, 4096);
	/* bounded: args longer than this show as [] */
	k->args = printed && strlen(printed) <= 8192 ? cJSON_Duplicate(args, 1) : cJSON_CreateArray();
	k->started = started_at;
	cJSON_free(printed);
}

static const struct kept *find(const char *sid, const char *cid)
{
	for (unsigned i = 0; i < CV_CMD_TABLE; i++)
		if (table[i].name && !strcmp(table[i].cid, cid) && !strcmp(table[i].sid, sid))
			return &table[i];
	return NULL;
}

double cv_exit_code(const cJSON *exit_code, const cJSON *sig)
{
	static const struct { const char *n; int v; } sigs[] = {
		{ "SIGHUP", SIGHUP }, { "SIGINT", SIGINT }, { "SIGQUIT", SIGQUIT },
		{ "SIGILL", SIGILL }, { "SIGABRT", SIGABRT }, { "SIGBUS", SIGBUS },
		{ "SIGFPE", SIGFPE }, { "SIGKILL", SIGKILL }, { "SIGUSR1", SIGUSR1 },
		{ "SIGSEGV", SIGSEGV }, { "SIGUSR2", SIGUSR2 }, { "SIGPIPE", SIGPIPE },
		{ "SIGALRM", SIGALRM }, { "SIGTERM", SIGTERM }, { "SIGXCPU", SIGXCPU },
	};
	if (cJSON_IsNumber(exit_code))
		return exit_code->valuedouble;
	if (cJSON_IsString(sig))
		for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
			if (!strcmp(sig->valuestring, sigs[i].n))
				return 128 + sigs[i].v;
	return cJSON_IsString(sig) ? 128 : 1;   /* an unknown signal / no status */
}

cJSON *cv_command(const char *sid, const cJSON *ac)
{
	cJSON *o = cJSON_CreateObject(), *cmd = cJSON_AddObjectToObject(o, "command");
	const char *cid = str(ac, "id", "");
	const struct kept *k = find(sid, cid);
	double started = num(ac, "started_at", k ? k->started : 0);
	const char *st = str(ac, "status", "running");

	cJSON_AddStringToObject(cmd, "id", cid);
	cJSON_AddStringToObject(cmd, "name", k ? k->name : "");
	cJSON_AddItemToObject(cmd, "args", k ? cJSON_Duplicate(k->args, 1) : cJSON_CreateArray());
	cJSON_AddStringToObject(cmd, "cwd", k ? k->cwd : "");
	cJSON_AddStringToObject(cmd, "sessionId", sid);
	if (!strcmp(st, "exited")) {
		cJSON_AddNumberToObject(cmd, "exitCode", cv_exit_code(
			cJSON_GetObjectItemCaseSensitive(ac, "exit_code"),
			cJSON_GetObjectItemCaseSensitive(ac, "signal")));
		double ended = num(ac, "ended_at", 0);
		if (ended >= started)
			cJSON_AddNumberToObject(cmd, "durationMs", ended - started);
	} else {
		cJSON_AddNullToObject(cmd, "exitCode");
	}
	cJSON_AddNumberToObject(cmd, "startedAt", started);
	return o;
}
