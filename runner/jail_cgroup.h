/* cgroup operations for the jail driver behind a small table: v2 (unified)
 * where the host has it, v1 (memory, pids, cpu hierarchies) otherwise.
 * Every sandbox gets <hierarchy>/sandbox/<id>. */
#ifndef JAIL_CGROUP_H
#define JAIL_CGROUP_H

#include <sys/types.h>

#include "rn_spec.h"
#include "sbx_err.h"

struct jail_cg_ops {
	const char *name;
	/* Make the cgroup(s) of id with the limits of spec. 0 or -1 + err. */
	int (*create)(const char *id, const struct rn_spec *spec, struct sbx_err *err);
	/* Move pid into the cgroup(s) of id. */
	int (*attach)(const char *id, pid_t pid, struct sbx_err *err);
	/* SIGKILL every task in the cgroup(s) of id (best effort). */
	void (*kill_all)(const char *id);
	/* Remove the cgroup(s) of id: 0 done (or absent), 1 still busy. */
	int (*destroy)(const char *id);
	/* Number of OOM kills in the cgroup so far, -1 if unknown. */
	long (*oom_kills)(const char *id);
	/* Times a fork was refused at the pids limit, -1 if unknown. */
	long (*pids_hits)(const char *id);
	/* Call fn for each sandbox cgroup that exists (for reconciliation). */
	void (*each)(void (*fn)(const char *id, void *arg), void *arg);
};

/* Socket buffers a sandbox may hold: memory_mb / JAIL_TCP_SHARE. On v2 they
 * are part of memory.max; v1 counts them apart (memory.kmem.tcp), so there
 * the sandbox can pin memory_mb plus this much. */
#define JAIL_TCP_SHARE 4
long long jail_cgroup_tcp_bytes(const struct rn_spec *spec);

/* The table for this host, or NULL with err when neither layout is usable. */
const struct jail_cg_ops *jail_cgroup_detect(struct sbx_err *err);

#endif
