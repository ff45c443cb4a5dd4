/* sandbox-runner's command line (rn_flags.c): one table gives the long
 * options, their checks and the --help synopsis. */
#ifndef RN_FLAGS_H
#define RN_FLAGS_H

#define RN_MEMORY_RESERVE_DEFAULT 8

struct rn_flags {
	const char *socket, *state_dir, *image_dir, *name;
	const char *agent;              /* NULL: sandbox-agent beside the runner */
	const char *drivers;            /* NULL: every driver of the registry */
	const char *default_isolation;
	const char *listen_tls, *cert, *key, *client_ca;
	double max_memory_share;
	long long max_memory_mb;        /* 0: from --max-memory-share */
	double memory_overcommit;       /* 0: off (rn_admit_rule.h) */
	long long memory_reserve_mb;    /* counted per sandbox above its use */
	long long image_store_mb;       /* 0: no cap on the image store */
	long long image_max_mb;         /* an image upload or pull, and each layer */
	long long max_snapshot_mb;      /* the snapshot store's cap (0: the default) */
	int warm_pool;                  /* --warm-pool: warm jail sandboxes kept (rn_warm.h) */
	int agent_stderr, verbose;
};

/* Fill f from argv (defaults first). 0 to run, 1 after printing --help
 * (exit 0), 2 after saying what is wrong (exit 2). */
int rn_flags_parse(struct rn_flags *f, int argc, char **argv);

#endif
