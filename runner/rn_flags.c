/* sandbox-runner's flags: each is one row (name, argument, kind, where its
 * value goes), from which getopt_long's table, the checks and the --help
 * synopsis all come. getopt_long reports unknown flags and missing values
 * itself; a bad number or --name says what it must be. Every error is
 * followed by the synopsis on stderr, except a bad number's. */
#include "rn_flags.h"

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rn_spec.h"
#include "rn_warm.h"
#include "sbx_usage.h"

enum {
	F_SOCKET, F_STATE_DIR, F_IMAGE_DIR, F_NAME, F_AGENT, F_AGENT_STDERR, F_VERBOSE,
	F_MEMORY_SHARE, F_MEMORY_MB, F_OVERCOMMIT, F_RESERVE_MB, F_SNAPSHOT_MB, F_DRIVERS, F_ISOLATION,
	F_LISTEN_TLS, F_CERT, F_KEY, F_CLIENT_CA, F_IMAGE_STORE_MB, F_IMAGE_MAX_MB, F_WARM_POOL,
	F_HELP, F_COUNT
};

enum kind {
	K_TEXT,         /* a string */
	K_ON,           /* no argument: an int set to 1 */
	K_FRACTION,     /* a double in (0, 1] */
	K_FACTOR,       /* a double in [1, 1000] */
	K_MIB,          /* a long long of at least 1 */
	K_COUNT,        /* an int in [0, RN_WARM_MAX] */
	K_HELP,
};

#define AT(field) offsetof(struct rn_flags, field)

struct flag {
	const char *name;
	const char *arg;            /* the synopsis's name for its value; NULL: none */
	enum kind kind;
	size_t at;
	/* the synopsis: NULL, a [group] of its own; else what joins it to
	 * the previous row inside that row's group */
	const char *join;
	const char *must;           /* a number's error: "--NAME must be ..." */
};

static const struct flag flags[F_COUNT] = {
	[F_SOCKET] = { "socket", "PATH", K_TEXT, AT(socket), NULL, NULL },
	[F_STATE_DIR] = { "state-dir", "DIR", K_TEXT, AT(state_dir), NULL, NULL },
	[F_IMAGE_DIR] = { "image-dir", "DIR", K_TEXT, AT(image_dir), NULL, NULL },
	[F_NAME] = { "name", "NAME", K_TEXT, AT(name), NULL, NULL },
	[F_AGENT] = { "agent", "PATH", K_TEXT, AT(agent), NULL, NULL },
	[F_AGENT_STDERR] = { "agent-stderr", NULL, K_ON, AT(agent_stderr), NULL, NULL },
	[F_VERBOSE] = { "verbose", NULL, K_ON, AT(verbose), NULL, NULL },
	[F_MEMORY_SHARE] = { "max-memory-share", "F", K_FRACTION, AT(max_memory_share), NULL,
			     "a number in (0, 1]" },
	[F_MEMORY_MB] = { "max-memory-mb", "N", K_MIB, AT(max_memory_mb), " | ",
			  "a positive number of MiB" },
	[F_OVERCOMMIT] = { "memory-overcommit", "F", K_FACTOR, AT(memory_overcommit), NULL,
			   "a number in [1, 1000]" },
	[F_RESERVE_MB] = { "memory-reserve-mb", "N", K_MIB, AT(memory_reserve_mb), " ",
			   "a positive number of MiB" },
	[F_SNAPSHOT_MB] = { "max-snapshot-mb", "N", K_MIB, AT(max_snapshot_mb), NULL,
			    "a positive number of MiB" },
	[F_DRIVERS] = { "drivers", "NAME,...", K_TEXT, AT(drivers), NULL, NULL },
	[F_ISOLATION] = { "default-isolation", "NAME", K_TEXT, AT(default_isolation), NULL, NULL },
	[F_LISTEN_TLS] = { "listen-tls", "ADDR:PORT", K_TEXT, AT(listen_tls), NULL, NULL },
	[F_CERT] = { "cert", "PEM", K_TEXT, AT(cert), " ", NULL },
	[F_KEY] = { "key", "PEM", K_TEXT, AT(key), " ", NULL },
	[F_CLIENT_CA] = { "client-ca", "PEM", K_TEXT, AT(client_ca), " ", NULL },
	[F_IMAGE_STORE_MB] = { "image-store-mb", "N", K_MIB, AT(image_store_mb), NULL,
			       "a positive number of MiB" },
	[F_IMAGE_MAX_MB] = { "image-max-mb", "N", K_MIB, AT(image_max_mb), NULL,
			     "a positive number of MiB" },
	[F_WARM_POOL] = { "warm-pool", "N", K_COUNT, AT(warm_pool), NULL,
			  "a number in [0, " RN_WARM_MAX_TEXT "]" },
	[F_HELP] = { "help", NULL, K_HELP, 0, NULL, NULL },
};

/* "--NAME ARG" of row i after sep, appended at out + n. */
static size_t put_flag(char *out, size_t size, size_t n, const char *sep, int i)
{
	int k = snprintf(out + n, size - n, "%s--%s%s%s", sep, flags[i].name,
			 flags[i].arg ? " " : "", flags[i].arg ? flags[i].arg : "");

	return k < 0 || (size_t)k >= size - n ? size - 1 : n + (size_t)k;
}

/* The synopsis: a [group] per row and the rows joined to it (--help has
 * none), then ctl's. */
static void usage(FILE *out)
{
	char text[F_COUNT][128];
	const char *groups[F_COUNT];
	size_t ng = 0;

	for (int i = 0; i < F_COUNT;) {
		size_t n;

		if (flags[i].kind == K_HELP) {
			i++;
			continue;
		}
		n = put_flag(text[ng], sizeof(text[ng]), 0, "[", i);
		for (i++; i < F_COUNT && flags[i].join; i++)
			n = put_flag(text[ng], sizeof(text[ng]), n, flags[i].join, i);
		snprintf(text[ng] + n, sizeof(text[ng]) - n, "]");
		groups[ng] = text[ng];
		ng++;
	}
	sbx_usage_synopsis(out, "usage: sandbox-runner ", groups, ng, 80);
	fputs("       sandbox-runner ctl status|drain|undrain [--socket PATH]\n", out);
}

static int number(int i, const char *v, char *at)
{
	char *end;
	int bad;

	errno = 0;
	if (flags[i].kind == K_FRACTION || flags[i].kind == K_FACTOR) {
		double d = strtod(v, &end);

		bad = *v == 0 || *end || (flags[i].kind == K_FRACTION ? !(d > 0 && d <= 1) :
					  !(d >= 1 && d <= 1000));
		*(double *)(void *)at = d;
	} else if (flags[i].kind == K_COUNT) {
		long long n = strtoll(v, &end, 10);

		bad = *v == 0 || *end || errno || n < 0 || n > RN_WARM_MAX;
		*(int *)(void *)at = (int)n;
	} else {
		long long n = strtoll(v, &end, 10);

		bad = *v == 0 || *end || errno || n < 1;
		*(long long *)(void *)at = n;
	}
	if (bad)
		fprintf(stderr, "sandbox-runner: --%s must be %s\n", flags[i].name, flags[i].must);
	return bad ? -1 : 0;
}

static int name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 16)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9')))
			return 0;
	return 1;
}

static void defaults(struct rn_flags *f)
{
	memset(f, 0, sizeof(*f));
	f->socket = "/run/sandbox/runner.sock";
	f->state_dir = "/var/lib/sandbox";
	f->image_dir = "/var/cache/sandbox/images";
	f->name = "local";
	f->default_isolation = "jail";
	f->max_memory_share = RN_MEMORY_SHARE_DEFAULT;
	f->image_max_mb = 4096;
	f->memory_reserve_mb = RN_MEMORY_RESERVE_DEFAULT;
	f->warm_pool = RN_WARM_DEFAULT;
}

int rn_flags_parse(struct rn_flags *f, int argc, char **argv)
{
	struct option longopts[F_COUNT + 1];

	defaults(f);
	for (int i = 0; i < F_COUNT; i++)
		longopts[i] = (struct option){ flags[i].name, flags[i].arg ? required_argument :
					       no_argument, NULL, 256 + i };
	longopts[F_COUNT] = (struct option){ NULL, 0, NULL, 0 };
	for (;;) {
		int c = getopt_long(argc, argv, "", longopts, NULL), i = c - 256;
		char *at;

		if (c == -1)
			break;
		if (c < 256 || i >= F_COUNT) {   /* getopt_long said what */
			usage(stderr);
			return 2;
		}
		at = (char *)f + flags[i].at;
		switch (flags[i].kind) {
		case K_HELP:
			usage(stdout);
			return 1;
		case K_TEXT:
			*(const char **)(void *)at = optarg;
			break;
		case K_ON:
			*(int *)(void *)at = 1;
			break;
		case K_FRACTION:
		case K_FACTOR:
		case K_MIB:
		case K_COUNT:
			if (number(i, optarg, at) < 0)
				return 2;
			break;
		}
	}
	if (optind != argc || !name_ok(f->name)) {
		if (!name_ok(f->name))
			fprintf(stderr, "sandbox-runner: --name must be 1..16 of [a-z0-9]\n");
		usage(stderr);
		return 2;
	}
	return 0;
}
