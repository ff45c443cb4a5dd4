/* Request parsing and validation; see agent_req.h. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "agent_req.h"
#include "sbx_json.h"

static const struct { const char *name; enum ag_op op; } ops[] = {
	{"ping", AG_OP_PING}, {"exec", AG_OP_EXEC}, {"attach", AG_OP_ATTACH},
	{"stdin", AG_OP_STDIN}, {"stdin_eof", AG_OP_STDIN_EOF},
	{"signal", AG_OP_SIGNAL}, {"status", AG_OP_STATUS}, {"wait", AG_OP_WAIT},
	{"commands", AG_OP_COMMANDS}, {"resize", AG_OP_RESIZE},
	{"write_file", AG_OP_WRITE_FILE}, {"read_file", AG_OP_READ_FILE},
	{"mkdir", AG_OP_MKDIR}, {"list", AG_OP_LIST}, {"stat", AG_OP_STAT},
	{"forward", AG_OP_FORWARD}, {"idle", AG_OP_IDLE},
	{"quiesce", AG_OP_QUIESCE},
};

static const struct { const char *name; int sig; } sigs[] = {
	{"SIGHUP", SIGHUP}, {"SIGINT", SIGINT}, {"SIGQUIT", SIGQUIT},
	{"SIGILL", SIGILL}, {"SIGTRAP", SIGTRAP}, {"SIGABRT", SIGABRT},
	{"SIGBUS", SIGBUS}, {"SIGFPE", SIGFPE}, {"SIGKILL", SIGKILL},
	{"SIGUSR1", SIGUSR1}, {"SIGSEGV", SIGSEGV}, {"SIGUSR2", SIGUSR2},
	{"SIGPIPE", SIGPIPE}, {"SIGALRM", SIGALRM}, {"SIGTERM", SIGTERM},
	{"SIGCHLD", SIGCHLD}, {"SIGCONT", SIGCONT}, {"SIGSTOP", SIGSTOP},
	{"SIGTSTP", SIGTSTP}, {"SIGTTIN", SIGTTIN}, {"SIGTTOU", SIGTTOU},
	{"SIGURG", SIGURG}, {"SIGXCPU", SIGXCPU}, {"SIGXFSZ", SIGXFSZ},
	{"SIGVTALRM", SIGVTALRM}, {"SIGPROF", SIGPROF}, {"SIGWINCH", SIGWINCH},
	{"SIGIO", SIGIO}, {"SIGPWR", SIGPWR}, {"SIGSYS", SIGSYS},
};

int ag_signal_from_name(const char *s)
{
	size_t i;
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	if (s[0] >= '0' && s[0] <= '9') {
		errno = 0;
		v = strtol(s, &end, 10);
		if (errno || *end || v < 1 || v > 64)
			return -1;
		return (int)v;
	}
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (!strcmp(s, sigs[i].name) || !strcmp(s, sigs[i].name + 3))
			return sigs[i].sig;
	return -1;
}

const char *ag_signal_name(int sig)
{
	size_t i;

	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigs[i].sig == sig)
			return sigs[i].name;
	return NULL;
}

/* cJSON silently cuts strings at an escaped NUL, so a path "a\u0000b" would
 * become "a": refuse the request before parsing if any string holds one
 * (raw NUL bytes, or a \u0000 escape preceded by an even number of
 * backslashes, i.e. not itself escaped). */
static int has_nul(const unsigned char *p, size_t n)
{
	size_t i, bs = 0;

	for (i = 0; i < n; i++) {
		if (p[i] == 0)
			return 1;
		if (p[i] == '\\') {
			bs++;
			continue;
		}
		if (bs % 2 == 1 && p[i] == 'u' && i + 4 < n + 0 &&
		    !memcmp(p + i + 1, "0000", 4))
			return 1;
		bs = 0;
	}
	return 0;
}

static int get_path(const cJSON *o, const char *name, int required,
		    const char **out, struct sbx_err *err)
{
	int rc = sbx_json_get_str(o, name, out, err);

	if (rc < 0)
		return -1;
	if (rc == 0) {
		if (required)
			return sbx_err_set(err, EINVAL, "missing field \"%s\"", name);
		return 0;
	}
	if (!**out)
		return sbx_err_set(err, EINVAL, "field \"%s\" is empty", name);
	if (strlen(*out) >= PATH_MAX)
		return sbx_err_set(err, EINVAL, "field \"%s\" is longer than PATH_MAX", name);
	return 0;
}

static int get_id(const cJSON *o, int required, const char **out, struct sbx_err *err)
{
	int rc = sbx_json_get_str(o, "id", out, err);
	const char *c;

	if (rc < 0)
		return -1;
	if (rc == 0)
		return required ? sbx_err_set(err, EINVAL, "missing field \"id\"") : 0;
	if (!**out || strlen(*out) > 64)
		return sbx_err_set(err, EINVAL, "field \"id\" must be 1..64 characters");
	for (c = *out; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_' || *c == '-'))
			return sbx_err_set(err, EINVAL, "field \"id\" has a character outside [A-Za-z0-9_-]");
	return 0;
}

static int get_args(struct ag_req *r, struct sbx_err *err)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(r->root, "args");
	const cJSON *it;
	size_t n = 0, i = 1;

	if (a && !cJSON_IsArray(a))
		return sbx_err_set(err, EINVAL, "field \"args\" must be an array of strings");
	if (a)
		n = (size_t)cJSON_GetArraySize(a);
	if (n > AG_ARGS_MAX)
		return sbx_err_set(err, EINVAL, "field \"args\" has more than %d entries", AG_ARGS_MAX);
	r->argv = calloc(n + 2, sizeof(char *));
	if (!r->argv)
		return sbx_err_set(err, ENOMEM, "out of memory");
	r->argv[0] = (char *)r->cmd;
	cJSON_ArrayForEach(it, a) {
		if (!cJSON_IsString(it))
			return sbx_err_set(err, EINVAL, "field \"args\" must be an array of strings");
		r->argv[i++] = it->valuestring;
	}
	return 0;
}

static int get_env(struct ag_req *r, struct sbx_err *err)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(r->root, "env");
	const cJSON *it;
	size_t n, i = 0;

	if (!e)
		return 0;
	if (!cJSON_IsObject(e))
		return sbx_err_set(err, EINVAL, "field \"env\" must be an object of strings");
	n = (size_t)cJSON_GetArraySize(e);
	if (n > AG_ENV_MAX)
		return sbx_err_set(err, EINVAL, "field \"env\" has more than %d entries", AG_ENV_MAX);
	r->env = calloc(n + 1, sizeof(char *));
	if (!r->env)
		return sbx_err_set(err, ENOMEM, "out of memory");
	cJSON_ArrayForEach(it, e) {
		size_t kl = strlen(it->string), vl;

		if (!cJSON_IsString(it))
			return sbx_err_set(err, EINVAL, "env \"%.64s\" must be a string", it->string);
		if (!kl || strchr(it->string, '='))
			return sbx_err_set(err, EINVAL, "env name \"%.64s\" is empty or has '='", it->string);
		vl = strlen(it->valuestring);
		r->env[i] = malloc(kl + vl + 2);
		if (!r->env[i])
			return sbx_err_set(err, ENOMEM, "out of memory");
		memcpy(r->env[i], it->string, kl);
		r->env[i][kl] = '=';
		memcpy(r->env[i] + kl + 1, it->valuestring, vl + 1);
		i++;
	}
	return 0;
}

static int get_signal(struct ag_req *r, struct sbx_err *err)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(r->root, "signal");

	if (!s)
		return sbx_err_set(err, EINVAL, "missing field \"signal\"");
	if (cJSON_IsNumber(s)) {
		double d = cJSON_GetNumberValue(s);

		r->sig = (d >= 1 && d <= 64 && d == (int)d) ? (int)d : -1;
	} else if (cJSON_IsString(s)) {
		r->sig = ag_signal_from_name(s->valuestring);
	} else {
		r->sig = -1;
	}
	if (r->sig < 0)
		return sbx_err_set(err, EINVAL, "field \"signal\" is not a known signal");
	return 0;
}

#define I64(name, lo, hi, dst) \
	do { if (sbx_json_get_i64(o, name, lo, hi, dst, err) < 0) return -1; } while (0)
#define BOOL(name, dst) \
	do { if (sbx_json_get_bool(o, name, dst, err) < 0) return -1; } while (0)

static int parse_exec(struct ag_req *r, struct sbx_err *err)
{
	const cJSON *o = r->root;

	if (sbx_json_get_str(o, "cmd", &r->cmd, err) < 0)
		return -1;
	if (!r->cmd || !*r->cmd)
		return sbx_err_set(err, EINVAL, "missing field \"cmd\"");
	if (strlen(r->cmd) >= PATH_MAX)
		return sbx_err_set(err, EINVAL, "field \"cmd\" is longer than PATH_MAX");
	if (get_args(r, err) < 0 || get_env(r, err) < 0)
		return -1;
	if (get_path(o, "cwd", 0, &r->cwd, err) < 0 || get_id(o, 0, &r->id, err) < 0)
		return -1;
	I64("uid", 0, 0xfffffffe, &r->uid);
	I64("gid", 0, 0xfffffffe, &r->gid);
	BOOL("stdin", &r->want_stdin);
	BOOL("pty", &r->pty);
	BOOL("attach", &r->attach);
	BOOL("hangup_on_detach", &r->hangup);
	I64("cols", 1, 65535, &r->cols);
	I64("rows", 1, 65535, &r->rows);
	I64("timeout_ms", 0, 86400000, &r->timeout_ms);
	return 0;
}

static int parse_fields(struct ag_req *r, struct sbx_err *err)
{
	const cJSON *o = r->root;

	switch (r->op) {
	case AG_OP_PING:
	case AG_OP_COMMANDS:
	case AG_OP_IDLE:
	case AG_OP_QUIESCE:
		return 0;
	case AG_OP_EXEC:
		return parse_exec(r, err);
	case AG_OP_ATTACH:
		I64("offset", 0, INT64_MAX, &r->offset);
		BOOL("stdin", &r->want_stdin);
		r->follow = 1;
		BOOL("follow", &r->follow);
		return get_id(o, 1, &r->id, err);
	case AG_OP_STDIN:
	case AG_OP_STDIN_EOF:
	case AG_OP_STATUS:
	case AG_OP_WAIT:
		return get_id(o, 1, &r->id, err);
	case AG_OP_SIGNAL:
		return get_id(o, 1, &r->id, err) < 0 ? -1 : get_signal(r, err);
	case AG_OP_RESIZE:
		if (get_id(o, 1, &r->id, err) < 0)
			return -1;
		I64("cols", 1, 65535, &r->cols);
		I64("rows", 1, 65535, &r->rows);
		if (!r->cols || !r->rows)
			return sbx_err_set(err, EINVAL, "resize needs \"cols\" and \"rows\"");
		return 0;
	case AG_OP_WRITE_FILE:
	case AG_OP_MKDIR:
		I64("mode", 0, 07777, &r->mode);
		I64("uid", 0, 0xfffffffe, &r->uid);
		I64("gid", 0, 0xfffffffe, &r->gid);
		BOOL("parents", &r->parents);
		return get_path(o, "path", 1, &r->path, err);
	case AG_OP_READ_FILE:
	case AG_OP_LIST:
	case AG_OP_STAT:
		return get_path(o, "path", 1, &r->path, err);
	case AG_OP_FORWARD:
		I64("port", 1, 65535, &r->port);
		if (!r->port)
			return sbx_err_set(err, EINVAL, "missing field \"port\"");
		return 0;
	}
	return sbx_err_set(err, EINVAL, "unknown op");
}

int ag_req_parse(const void *p, size_t n, struct ag_req *r, struct sbx_err *err)
{
	const char *op = NULL;
	size_t i;

	memset(r, 0, sizeof(*r));
	r->uid = r->gid = r->mode = -1;
	if (has_nul(p, n))
		return sbx_err_set(err, EINVAL, "request contains a NUL character");
	r->root = sbx_json_parse_object(p, n, err);
	if (!r->root)
		return -1;
	if (sbx_json_get_str(r->root, "op", &op, err) < 0)
		goto fail;
	if (!op) {
		sbx_err_set(err, EINVAL, "missing field \"op\"");
		goto fail;
	}
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(op, ops[i].name))
			break;
	if (i == sizeof(ops) / sizeof(ops[0])) {
		sbx_err_set(err, EINVAL, "unknown op \"%.64s\"", op);
		goto fail;
	}
	r->op = ops[i].op;
	if (parse_fields(r, err) < 0)
		goto fail;
	return 0;
fail:
	ag_req_free(r);
	return -1;
}

void ag_req_free(struct ag_req *r)
{
	size_t i;

	if (r->env)
		for (i = 0; r->env[i]; i++)
			free(r->env[i]);
	free(r->env);
	free(r->argv);
	cJSON_Delete(r->root);
	memset(r, 0, sizeof(*r));
	r->uid = r->gid = r->mode = -1;
}
