/* sandbox-agent's flags: each is one row (name, argument, kind, where its
 * value goes), from which the parser and the usage synopsis come. The
 * runner and runsc's config.json are its only callers: a flag is matched
 * whole (no abbreviation, no --flag=value), its value is the next word, the
 * last of a repeated flag wins, and anything else is the usage (exit 2). */
#include "agent_flags.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "sbx_usage.h"

enum kind {
	K_TEXT,         /* a string */
	K_ON,           /* no value: an int set to 1 */
	K_BYTES,        /* a whole number in [lo, hi] (a size_t) */
	K_LEVEL,        /* error|warn|info|debug; anything else is info */
	K_UNSETENV,     /* a name taken out of the environment now */
};

#define AT(field) offsetof(struct ag_flags, field)

struct flag {
	const char *name;
	const char *arg;                /* its value's name; NULL: takes none */
	enum kind kind;
	size_t at;
	unsigned long long lo, hi;      /* K_BYTES */
	int required, repeats;          /* the synopsis: no [brackets]; "..." */
};

static const struct flag flags[] = {
	{ "listen", "unix:PATH|vsock:PORT", K_TEXT, AT(listen), 0, 0, 1, 0 },
	{ "retention", "BYTES", K_BYTES, AT(retention),
	  2 * (AG_CHUNK + AG_RING_REC_HDR), 1ull << 34, 0, 0 },
	{ "log-level", "error|warn|info|debug", K_LEVEL, AT(log_level), 0, 0, 0, 0 },
	{ "hangup-on-eof", NULL, K_ON, AT(hangup_on_eof), 0, 0, 0, 0 },
	/* an OCI runtime (runsc) sets HOME for PID 1 when the sandbox's env
	 * has none; commands must get their own user's default instead */
	{ "unsetenv", "NAME", K_UNSETENV, 0, 0, 0, 0, 1 },
	/* an OCI image's WorkingDir: commands' default directory */
	{ "workdir", "DIR", K_TEXT, AT(workdir), 0, 0, 0, 0 },
	/* a descriptor the agent closes once it listens: the runner's pipe,
	 * whose end tells it to dial now instead of on its next timer tick */
	{ "ready-fd", "FD", K_BYTES, AT(ready_fd), 3, 1023, 0, 0 },
};
#define N_FLAGS (sizeof(flags) / sizeof(flags[0]))

void ag_usage(void)
{
	char text[N_FLAGS][64];
	const char *groups[N_FLAGS];

	for (size_t i = 0; i < N_FLAGS; i++) {
		const struct flag *fl = &flags[i];

		snprintf(text[i], sizeof(text[i]), "%s--%s%s%s%s%s", fl->required ? "" : "[",
			 fl->name, fl->arg ? " " : "", fl->arg ? fl->arg : "",
			 fl->required ? "" : "]", fl->repeats ? "..." : "");
		groups[i] = text[i];
	}
	sbx_usage_synopsis(stderr, "usage: sandbox-agent ", groups, N_FLAGS, 80);
	exit(2);
}

static const struct flag *find(const char *word)
{
	if (strncmp(word, "--", 2) != 0)
		return NULL;
	for (size_t i = 0; i < N_FLAGS; i++)
		if (!strcmp(word + 2, flags[i].name))
			return &flags[i];
	return NULL;
}

static enum sbx_log_level level(const char *l)
{
	return !strcmp(l, "error") ? SBX_LOG_ERR : !strcmp(l, "warn") ? SBX_LOG_WARN :
	       !strcmp(l, "debug") ? SBX_LOG_DEBUG : SBX_LOG_INFO;
}

/* Row fl's value v (NULL when it takes none) into f. */
static void take(struct ag_flags *f, const struct flag *fl, const char *v)
{
	char *at = (char *)f + fl->at, *end;
	unsigned long long n;

	switch (fl->kind) {
	case K_TEXT:
		*(const char **)(void *)at = v;
		break;
	case K_ON:
		*(int *)(void *)at = 1;
		break;
	case K_BYTES:
		n = strtoull(v, &end, 10);
		if (*end || n < fl->lo || n > fl->hi)
			ag_usage();
		*(size_t *)(void *)at = (size_t)n;
		break;
	case K_LEVEL:
		*(enum sbx_log_level *)(void *)at = level(v);
		break;
	case K_UNSETENV:
		unsetenv(v);
		break;
	}
}

void ag_flags_parse(struct ag_flags *f, int argc, char **argv)
{
	memset(f, 0, sizeof(*f));
	f->retention = 16u << 20;
	f->log_level = SBX_LOG_INFO;
	for (int i = 1; i < argc; i++) {
		const struct flag *fl = find(argv[i]);

		if (!fl || (fl->arg && i + 1 >= argc))
			ag_usage();
		take(f, fl, fl->arg ? argv[++i] : NULL);
	}
	for (size_t i = 0; i < N_FLAGS; i++)
		if (flags[i].required && !*(const char **)(void *)((char *)f + flags[i].at))
			ag_usage();
}
