#include "rn_cgroup.h"
#include "sbx_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH 8     /* cgroups below a sandbox's: runtimes nest a few */

/* The v1 hierarchies a sandbox's limits live in. */
static const char *const v1_ctrls[] = { "memory", "pids", "cpu", NULL };

/* One value into a control file (it exists: the kernel made it). */
static int write_file(const char *path, const char *val, struct sbx_err *err)
{
	if (sbx_write_file(path, val, 0, 0) < 0)
		return sbx_err_sys(err, "write %s to %s", val, path);
	return 0;
}

static long read_key(const char *path, const char *key)
{
	char buf[4096], *p;
	size_t kl = strlen(key);

	if (sbx_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, key, kl) == 0 && p[kl] == ' ')
			return strtol(p + kl + 1, NULL, 10);
	return 0;
}

/* Kill every pid listed in a cgroup.procs file; a few rounds because a
 * fork bomb may add tasks while we read. */
static void kill_procs(const char *procs)
{
	for (int round = 0; round < 8; round++) {
		char buf[65536];
		int any = 0;

		if (sbx_read_file(procs, buf, sizeof(buf)) <= 0)
			return;
		for (char *p = buf; *p;) {
			long pid = strtol(p, &p, 10);
			if (pid > 1) {
				kill((pid_t)pid, SIGKILL);
				any = 1;
			}
			while (*p == '\n')
				p++;
		}
		if (!any)
			return;
	}
}

long long rn_cgroup_tcp_bytes(const struct rn_spec *spec)
{
	return ((long long)spec->memory_mb << 20) / RN_CG_TCP_SHARE;
}

/* A driver's path: relative, no "." or ".." component, no empty one. */
static int path_ok(const char *path)
{
	const char *p = path;

	if (!path || !*path || *path == '/' || strlen(path) > 256)
		return 0;
	while (*p) {
		size_t n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		p += n;
		if (*p == '/')
			p++;
		if (!*p && p[-1] == '/')
			return 0;
	}
	return 1;
}

/* <root>[/<hier>]/<path>[/<file>] */
static void cg_path(char *out, size_t n, const char *hier, const char *path,
		    const char *file)
{
	snprintf(out, n, RN_CG_ROOT "%s%s/%s%s%s", hier ? "/" : "", hier ? hier : "",
		 path, file ? "/" : "", file ? file : "");
}

/* Call fn(hier) for each hierarchy mounted under RN_CG_ROOT on v1 (every
 * one: a runtime that made the cgroup itself may have used controllers
 * beyond ours), or once with NULL on v2. */
static void each_hier(const struct rn_cgroup *cg, void (*fn)(const char *hier, void *arg),
		      void *arg)
{
	DIR *d;
	struct dirent *e;

	if (cg->v2) {
		fn(NULL, arg);
		return;
	}
	d = opendir(RN_CG_ROOT);
	if (!d)
		return;
	/* "cpu,cpuacct"-style aliases are symlinks: real dirs only */
	while ((e = readdir(d)))
		if (e->d_type == DT_DIR && e->d_name[0] != '.')
			fn(e->d_name, arg);
	closedir(d);
}

/* Call fn on dir and every directory below it, children before parents. */
static void walk_post(const char *dir, int depth, void (*fn)(const char *dir, void *arg),
		      void *arg)
{
	DIR *d;
	struct dirent *e;

	if (depth < MAX_DEPTH && (d = opendir(dir))) {
		while ((e = readdir(d))) {
			char sub[PATH_MAX];
			if (e->d_type != DT_DIR || e->d_name[0] == '.')
				continue;
			if (snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name) >= (int)sizeof(sub))
				continue;
			walk_post(sub, depth + 1, fn, arg);
		}
		closedir(d);
	}
	fn(dir, arg);
}

/* mkdir -p of path below base; on v2 each level gets our controllers
 * enabled for its children (the leaf itself takes processes, so not it). */
static int make_path(const char *base, const char *path, int v2, struct sbx_err *err)
{
	char p[PATH_MAX], ctl[PATH_MAX + 32];
	size_t blen = strlen(base);

	if (snprintf(p, sizeof(p), "%s/%s", base, path) >= (int)sizeof(p))
		return sbx_err_set(err, ENAMETOOLONG, "cgroup path too long");
	if (v2) /* the root's: best effort, the host may have done it */
		write_file(RN_CG_ROOT "/cgroup.subtree_control", "+memory +pids +cpu", NULL);
	for (char *s = p + blen + 1;; s++) {
		int last = (*s == 0);
		if (*s != '/' && !last)
			continue;
		*s = 0;
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return sbx_err_sys(err, "mkdir %s", p);
		if (last)
			return 0;
		if (v2) {
			snprintf(ctl, sizeof(ctl), "%s/cgroup.subtree_control", p);
			if (write_file(ctl, "+memory +pids +cpu", err) < 0)
				return -1;
		}
		*s = '/';
	}
}

static int set_limits_v1(const char *path, const struct rn_spec *spec, struct sbx_err *err)
{
	char p[PATH_MAX], sw[PATH_MAX], v[64];
	int has_sw;
	long long mem = (long long)spec->memory_mb << 20;

	snprintf(v, sizeof(v), "%lld", mem);
	/* memory+swap = memory: no swapping around the limit. Absent when the
	 * kernel has no swap accounting; the plain limit still holds. The
	 * kernel keeps memsw >= memory at every step: a limit raised again
	 * (rn_cgroup_set_limits) needs memsw raised first. */
	cg_path(sw, sizeof(sw), "memory", path, "memory.memsw.limit_in_bytes");
	has_sw = access(sw, F_OK) == 0;
	if (has_sw)
		write_file(sw, v, NULL);
	cg_path(p, sizeof(p), "memory", path, "memory.limit_in_bytes");
	if (write_file(p, v, err) < 0)
		return -1;
	if (has_sw && write_file(sw, v, err) < 0)
		return -1;
	cg_path(p, sizeof(p), "memory", path, "memory.swappiness");
	write_file(p, "0", NULL);
	/* v1 charges TCP socket buffers to a counter of their own, outside
	 * memory.limit_in_bytes, and only for sockets created after this
	 * limit was first written: without it a sandbox's sockets draw on
	 * the host-wide tcp_mem that every socket (the gateway's too)
	 * shares. So it is set here, before any process joins the cgroup. */
	snprintf(v, sizeof(v), "%lld", rn_cgroup_tcp_bytes(spec));
	cg_path(p, sizeof(p), "memory", path, "memory.kmem.tcp.limit_in_bytes");
	if (write_file(p, v, err) < 0)
		return -1;
	snprintf(v, sizeof(v), "%lld", (long long)spec->pids);
	cg_path(p, sizeof(p), "pids", path, "pids.max");
	if (write_file(p, v, err) < 0)
		return -1;
	cg_path(p, sizeof(p), "cpu", path, "cpu.cfs_period_us");
	if (write_file(p, "100000", err) < 0)
		return -1;
	snprintf(v, sizeof(v), "%lld", (long long)spec->vcpus * 100000);
	cg_path(p, sizeof(p), "cpu", path, "cpu.cfs_quota_us");
	return write_file(p, v, err);
}

static int set_limits_v2(const char *path, const struct rn_spec *spec, struct sbx_err *err)
{
	char p[PATH_MAX], v[64];

	/* On v2 socket buffers are charged to the cgroup's memory and so
	 * held within memory.max (memory.stat "sock"); nothing here may turn
	 * that off (rn_cgroup_detect refuses cgroup.memory=nosocket). */
	snprintf(v, sizeof(v), "%lld", (long long)spec->memory_mb << 20);
	cg_path(p, sizeof(p), NULL, path, "memory.max");
	if (write_file(p, v, err) < 0)
		return -1;
	cg_path(p, sizeof(p), NULL, path, "memory.swap.max");
	if (access(p, F_OK) == 0 && write_file(p, "0", err) < 0)
		return -1;
	snprintf(v, sizeof(v), "%lld", (long long)spec->pids);
	cg_path(p, sizeof(p), NULL, path, "pids.max");
	if (write_file(p, v, err) < 0)
		return -1;
	snprintf(v, sizeof(v), "%lld 100000", (long long)spec->vcpus * 100000);
	cg_path(p, sizeof(p), NULL, path, "cpu.max");
	return write_file(p, v, err);
}

int rn_cgroup_set_limits(const struct rn_cgroup *cg, const char *path,
			 const struct rn_spec *spec, struct sbx_err *err)
{
	if (!path_ok(path))
		return sbx_err_set(err, EINVAL, "cgroup path \"%s\" is not a relative path",
				   path ? path : "");
	return cg->v2 ? set_limits_v2(path, spec, err) : set_limits_v1(path, spec, err);
}

int rn_cgroup_create(const struct rn_cgroup *cg, const char *path,
		     const struct rn_spec *spec, struct sbx_err *err)
{
	char base[PATH_MAX];

	if (!path_ok(path))
		return sbx_err_set(err, EINVAL, "cgroup path \"%s\" is not a relative path",
				   path ? path : "");
	if (cg->v2) {
		if (make_path(RN_CG_ROOT, path, 1, err) < 0)
			goto fail;
		if (set_limits_v2(path, spec, err) < 0)
			goto fail;
		return 0;
	}
	for (int i = 0; v1_ctrls[i]; i++) {
		snprintf(base, sizeof(base), RN_CG_ROOT "/%s", v1_ctrls[i]);
		if (make_path(base, path, 0, err) < 0)
			goto fail;
	}
	if (set_limits_v1(path, spec, err) < 0)
		goto fail;
	/* the freezer (pause, snapshots) where the host mounts it */
	if (access(RN_CG_ROOT "/" RN_CG_FREEZER, F_OK) == 0 &&
	    make_path(RN_CG_ROOT "/" RN_CG_FREEZER, path, 0, err) < 0)
		goto fail;
	return 0;
fail:
	rn_cgroup_remove(cg, path, NULL);
	return -1;
}

int rn_cgroup_attach(const struct rn_cgroup *cg, const char *path, pid_t pid,
		     struct sbx_err *err)
{
	char p[PATH_MAX], v[32];

	snprintf(v, sizeof(v), "%d", (int)pid);
	if (cg->v2) {
		cg_path(p, sizeof(p), NULL, path, "cgroup.procs");
		return write_file(p, v, err);
	}
	for (int i = 0; v1_ctrls[i]; i++) {
		cg_path(p, sizeof(p), v1_ctrls[i], path, "cgroup.procs");
		if (write_file(p, v, err) < 0)
			return -1;
	}
	cg_path(p, sizeof(p), RN_CG_FREEZER, path, "cgroup.procs");
	if (access(p, F_OK) == 0 && write_file(p, v, err) < 0)
		return -1;
	return 0;
}

static void kill_dir(const char *dir, void *arg)
{
	char p[PATH_MAX + 16];

	(void)arg;
	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	kill_procs(p);
}

struct cg_op { const char *path; const char *top; int busy; };

static void kill_hier(const char *hier, void *arg)
{
	struct cg_op *op = arg;
	char p[PATH_MAX];

	cg_path(p, sizeof(p), hier, op->path, NULL);
	if (access(p, F_OK) == 0)
		walk_post(p, 0, kill_dir, NULL);
}

void rn_cgroup_kill(const struct rn_cgroup *cg, const char *path)
{
	struct cg_op op = { path, NULL, 0 };
	char p[PATH_MAX];

	if (!path_ok(path))
		return;
	if (cg->v2) {
		cg_path(p, sizeof(p), NULL, path, NULL);
		if (access(p, F_OK) < 0)
			return;
		cg_path(p, sizeof(p), NULL, path, "cgroup.kill");
		if (write_file(p, "1", NULL) == 0)
			return;     /* the kernel kills the whole subtree, frozen or not */
	}
	each_hier(cg, kill_hier, &op);
	/* a frozen task takes its SIGKILL only once thawed */
	rn_cgroup_freeze(cg, path, 0, NULL);
}

static void rmdir_one(const char *dir, void *arg)
{
	struct cg_op *op = arg;

	if (rmdir(dir) < 0 && errno != ENOENT)
		op->busy = 1;
}

static void remove_hier(const char *hier, void *arg)
{
	struct cg_op *op = arg;
	char p[PATH_MAX];

	cg_path(p, sizeof(p), hier, op->path, NULL);
	if (access(p, F_OK) == 0)
		walk_post(p, 0, rmdir_one, op);
}

/* Parents of path up to top, deepest first, removed when empty (a busy or
 * non-empty one is another sandbox's: left as it is). */
static void remove_parents_hier(const char *hier, void *arg)
{
	struct cg_op *op = arg;
	char rel[264], p[PATH_MAX];  /* path_ok: at most 256 */
	size_t tlen = strlen(op->top);
	char *slash;

	snprintf(rel, sizeof(rel), "%s", op->path);
	while ((slash = strrchr(rel, '/')) && (size_t)(slash - rel) > tlen) {
		*slash = 0;
		cg_path(p, sizeof(p), hier, rel, NULL);
		if (rmdir(p) < 0 && errno != ENOENT)
			break;
	}
}

int rn_cgroup_remove(const struct rn_cgroup *cg, const char *path, const char *top)
{
	struct cg_op op = { path, top, 0 };
	size_t tlen = top ? strlen(top) : 0;

	if (!path_ok(path))
		return 0;
	each_hier(cg, remove_hier, &op);
	if (op.busy)
		return 1;
	/* top must be a whole leading part of path */
	if (top && tlen && strncmp(path, top, tlen) == 0 && path[tlen] == '/')
		each_hier(cg, remove_parents_hier, &op);
	return 0;
}

long rn_cgroup_oom_kills(const struct rn_cgroup *cg, const char *path)
{
	char p[PATH_MAX];

	if (!path_ok(path))
		return -1;
	if (cg->v2) {
		cg_path(p, sizeof(p), NULL, path, "memory.events");
		return read_key(p, "oom_kill");
	}
	cg_path(p, sizeof(p), "memory", path, "memory.oom_control");
	return read_key(p, "oom_kill");
}

/* The number a one-value control file holds, -1 if unreadable. */
static long long read_number(const char *path)
{
	char buf[64], *end;
	long long v;

	if (sbx_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	v = strtoll(buf, &end, 10);
	return end == buf ? -1 : v;
}

long long rn_cgroup_memory_bytes(const struct rn_cgroup *cg, const char *path)
{
	char p[PATH_MAX];
	long long mem, tcp;

	if (!path_ok(path))
		return -1;
	if (cg->v2) {
		cg_path(p, sizeof(p), NULL, path, "memory.current");
		return read_number(p);
	}
	cg_path(p, sizeof(p), "memory", path, "memory.usage_in_bytes");
	mem = read_number(p);
	tcp = rn_cgroup_sock_bytes(cg, path);
	return mem < 0 ? -1 : mem + (tcp > 0 ? tcp : 0);
}

long long rn_cgroup_sock_bytes(const struct rn_cgroup *cg, const char *path)
{
	char p[PATH_MAX];

	if (!path_ok(path))
		return -1;
	if (cg->v2) {
		cg_path(p, sizeof(p), NULL, path, "memory.stat");
		return read_key(p, "sock");
	}
	cg_path(p, sizeof(p), "memory", path, "memory.kmem.tcp.usage_in_bytes");
	return read_number(p);
}

long rn_cgroup_pids_hits(const struct rn_cgroup *cg, const char *path)
{
	char p[PATH_MAX];

	if (!path_ok(path))
		return -1;
	cg_path(p, sizeof(p), cg->v2 ? NULL : "pids", path, "pids.events");
	return read_key(p, "max");
}

void rn_cgroup_each(const struct rn_cgroup *cg, const char *parent, const char *prefix,
		    void (*fn)(const char *name, void *arg), void *arg)
{
	char p[PATH_MAX];

	if (!path_ok(parent))
		return;
	/* on v1 a sandbox may be left in any of our hierarchies; remove is
	 * idempotent, so reporting a name more than once is harmless */
	for (int i = 0; cg->v2 ? i < 1 : v1_ctrls[i] != NULL; i++) {
		DIR *d;
		struct dirent *e;

		cg_path(p, sizeof(p), cg->v2 ? NULL : v1_ctrls[i], parent, NULL);
		d = opendir(p);
		if (!d)
			continue;
		while ((e = readdir(d)))
			if (e->d_type == DT_DIR && e->d_name[0] != '.' &&
			    (!prefix || strncmp(e->d_name, prefix, strlen(prefix)) == 0))
				fn(e->d_name, arg);
		closedir(d);
	}
}

/* cgroup.memory=nosocket on the kernel command line stops charging socket
 * buffers to any cgroup: memory_mb would then not cover them. */
static int sockets_uncharged(void)
{
	char buf[4096], *p;

	if (sbx_read_file("/proc/cmdline", buf, sizeof(buf)) <= 0)
		return 0;
	for (p = strstr(buf, "cgroup.memory="); p; p = strstr(p + 1, "cgroup.memory=")) {
		const char *v = p + strlen("cgroup.memory=");
		size_t len = strcspn(v, " \n");
		for (const char *w = v; w < v + len; w += strcspn(w, ",") + 1)
			if (strncmp(w, "nosocket", 8) == 0 && (w[8] == ',' || w + 8 == v + len))
				return 1;
	}
	return 0;
}

int rn_cgroup_detect(struct rn_cgroup *cg, struct sbx_err *err)
{
	if (sockets_uncharged())
		return sbx_err_set(err, ENOTSUP, "the kernel runs with cgroup.memory=nosocket: "
				   "sandboxes' socket buffers would escape their memory limit");
	if (access(RN_CG_ROOT "/cgroup.controllers", F_OK) == 0) {
		cg->v2 = 1;
		cg->name = "v2";
		return 0;
	}
	if (access(RN_CG_ROOT "/memory/memory.limit_in_bytes", F_OK) == 0 &&
	    access(RN_CG_ROOT "/memory/memory.kmem.tcp.limit_in_bytes", F_OK) == 0 &&
	    access(RN_CG_ROOT "/pids/cgroup.procs", F_OK) == 0 &&
	    access(RN_CG_ROOT "/cpu/cpu.cfs_quota_us", F_OK) == 0) {
		cg->v2 = 0;
		cg->name = "v1";
		return 0;
	}
	return sbx_err_set(err, ENOTSUP, "no usable cgroup layout under " RN_CG_ROOT
			   " (need v2, or v1 memory (with kmem.tcp accounting)+pids+cpu)");
}
