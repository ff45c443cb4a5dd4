/* cgroups for every driver: v2 (unified) where the host has it, v1 (one
 * hierarchy per controller) otherwise. A cgroup is named by a path relative
 * to the hierarchy root(s) that its driver picks, e.g. "sandbox/<id>" (the
 * jail); on v1 the same path is used in each controller's hierarchy. The
 * driver either makes the cgroup here (rn_cgroup_create) or has its runtime
 * make it (runsc with a cgroupsPath): the counters, kill and remove work on
 * any path, whoever created it. */
#ifndef RN_CGROUP_H
#define RN_CGROUP_H

#include <sys/types.h>

#include "rn_spec.h"
#include "sbx_err.h"

#define RN_CG_ROOT "/sys/fs/cgroup"
#define RN_CG_FREEZER "freezer"   /* the v1 hierarchy of the freezer */

/* The host's layout, found once at start-up by rn_cgroup_detect. */
struct rn_cgroup {
	int v2;                 /* 1: unified tree at RN_CG_ROOT */
	const char *name;       /* "v1" or "v2" */
};

/* Which layout this host has, or -1 with err when neither is usable (or
 * the kernel does not charge socket buffers to cgroups). */
int rn_cgroup_detect(struct rn_cgroup *cg, struct sbx_err *err);

/* Make path (and its missing parents; on v2 with the memory, pids and cpu
 * controllers enabled down to it) and set the limits of spec: memory
 * (no swap), TCP buffers (v1), pids, cpu quota of spec->vcpus. On failure
 * path is removed again (parents stay). 0 or -1 with err. */
int rn_cgroup_create(const struct rn_cgroup *cg, const char *path,
		     const struct rn_spec *spec, struct sbx_err *err);
/* Set the limits of spec on the existing path again (a warm sandbox
 * taken with other limits, rn_warm.h). 0 or -1 with err. */
int rn_cgroup_set_limits(const struct rn_cgroup *cg, const char *path,
			 const struct rn_spec *spec, struct sbx_err *err);
/* Move pid into path (every controller on v1). 0 or -1 with err. */
int rn_cgroup_attach(const struct rn_cgroup *cg, const char *path, pid_t pid,
		     struct sbx_err *err);
/* SIGKILL every process in path and the cgroups below it (cgroup.kill on
 * v2; a few rounds over cgroup.procs otherwise, for forks racing the
 * kill). Best effort, returns at once. */
void rn_cgroup_kill(const struct rn_cgroup *cg, const char *path);
/* Remove path, the cgroups below it, in every hierarchy that has it; then
 * each parent of path that is left empty, up to but not including top (a
 * leading part of path, e.g. "sandbox"; NULL: no parents). Returns 0 when
 * path is gone (or was never there), 1 while a cgroup is still busy
 * (processes exiting: call again later). */
int rn_cgroup_remove(const struct rn_cgroup *cg, const char *path, const char *top);
/* Freeze (on) or thaw (!on) every process in path: cgroup.freeze on v2,
 * the freezer hierarchy's freezer.state on v1 (made by rn_cgroup_create
 * where the host mounts it). A freeze waits until the kernel says every
 * task stopped (up to RN_CG_FREEZE_WAIT_MS; past it the cgroup is thawed
 * again and EBUSY returned). 0 or -1 with err (may be NULL); ENOTSUP on
 * a v1 host without the freezer. rn_cgroup_freeze.c. */
#define RN_CG_FREEZE_WAIT_MS 5000
int rn_cgroup_freeze(const struct rn_cgroup *cg, const char *path, int on, struct sbx_err *err);
/* OOM kills in path (and below) so far; -1 if unknown. */
long rn_cgroup_oom_kills(const struct rn_cgroup *cg, const char *path);
/* Forks refused at path's pids limit so far; -1 if unknown. */
long rn_cgroup_pids_hits(const struct rn_cgroup *cg, const char *path);
/* Bytes of memory path uses now, its TCP socket buffers included: v2
 * memory.current (sockets are charged to it); v1 memory.usage_in_bytes
 * plus memory.kmem.tcp.usage_in_bytes (counted apart). -1 if unknown. */
long long rn_cgroup_memory_bytes(const struct rn_cgroup *cg, const char *path);
/* Bytes of path's TCP socket buffers: v1 memory.kmem.tcp.usage_in_bytes,
 * v2 memory.stat "sock". -1 if unknown. */
long long rn_cgroup_sock_bytes(const struct rn_cgroup *cg, const char *path);
/* Call fn with the name of each cgroup directly below parent (in any
 * hierarchy on v1: a name may come more than once) whose name starts with
 * prefix (NULL: all). For reconciliation. */
void rn_cgroup_each(const struct rn_cgroup *cg, const char *parent, const char *prefix,
		    void (*fn)(const char *name, void *arg), void *arg);

/* Socket buffers a sandbox may hold: memory_mb / RN_CG_TCP_SHARE. On v2
 * they are part of memory.max; v1 counts them apart (memory.kmem.tcp), so
 * there the sandbox can pin memory_mb plus this much. */
#define RN_CG_TCP_SHARE 4
long long rn_cgroup_tcp_bytes(const struct rn_spec *spec);

#endif
