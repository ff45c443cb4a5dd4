#include "jail_cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CG_ROOT "/sys/fs/cgroup"

static int write_file(const char *path, const char *val, struct sbx_err *err)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return sbx_err_sys(err, "open %s", path);
	n = write(fd, val, strlen(val));
	if (n < 0) {
		sbx_err_sys(err, "write %s to %s", val, path);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static long read_key(const char *path, const char *key)
{
	char buf[4096], *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	size_t kl = strlen(key);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
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
		int fd = open(procs, O_RDONLY | O_CLOEXEC), any = 0;
		ssize_t n;

		if (fd < 0)
			return;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			return;
		buf[n] = 0;
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

static void each_in(const char *dir, void (*fn)(const char *, void *), void *arg)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_type == DT_DIR && strncmp(e->d_name, "sbx_", 4) == 0)
			fn(e->d_name, arg);
	closedir(d);
}

long long jail_cgroup_tcp_bytes(const struct rn_spec *spec)
{
	return ((long long)spec->memory_mb << 20) / JAIL_TCP_SHARE;
}

/* ---- v1: one directory per controller ---- */

static const char *const v1_ctrls[] = { "memory", "pids", "cpu" };
#define V1_N 3

static void v1_path(char *out, size_t n, const char *ctrl, const char *id,
		    const char *file)
{
	snprintf(out, n, CG_ROOT "/%s/sandbox%s%s%s%s", ctrl, id ? "/" : "",
		 id ? id : "", file ? "/" : "", file ? file : "");
}

static int v1_destroy(const char *id);

static int v1_create(const char *id, const struct rn_spec *spec, struct sbx_err *err)
{
	char p[512], v[64];
	long long mem = (long long)spec->memory_mb << 20;

	for (int i = 0; i < V1_N; i++) {
		v1_path(p, sizeof(p), v1_ctrls[i], NULL, NULL);
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return sbx_err_sys(err, "mkdir %s", p);
		v1_path(p, sizeof(p), v1_ctrls[i], id, NULL);
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			sbx_err_sys(err, "mkdir %s", p);
			goto fail;
		}
	}
	snprintf(v, sizeof(v), "%lld", mem);
	v1_path(p, sizeof(p), "memory", id, "memory.limit_in_bytes");
	if (write_file(p, v, err) < 0)
		goto fail;
	/* memory+swap = memory: no swapping around the limit. Absent when the
	 * kernel has no swap accounting; the plain limit still holds. */
	v1_path(p, sizeof(p), "memory", id, "memory.memsw.limit_in_bytes");
	if (access(p, F_OK) == 0 && write_file(p, v, err) < 0)
		goto fail;
	v1_path(p, sizeof(p), "memory", id, "memory.swappiness");
	write_file(p, "0", NULL);
	/* v1 charges TCP socket buffers to a counter of their own, outside
	 * memory.limit_in_bytes, and only for sockets created after this
	 * limit was first written: without it a sandbox's sockets draw on
	 * the host-wide tcp_mem that every socket (the gateway's too)
	 * shares. So it is set here, before any process joins the cgroup. */
	snprintf(v, sizeof(v), "%lld", jail_cgroup_tcp_bytes(spec));
	v1_path(p, sizeof(p), "memory", id, "memory.kmem.tcp.limit_in_bytes");
	if (write_file(p, v, err) < 0)
		goto fail;
	snprintf(v, sizeof(v), "%lld", (long long)spec->pids);
	v1_path(p, sizeof(p), "pids", id, "pids.max");
	if (write_file(p, v, err) < 0)
		goto fail;
	v1_path(p, sizeof(p), "cpu", id, "cpu.cfs_period_us");
	if (write_file(p, "100000", err) < 0)
		goto fail;
	snprintf(v, sizeof(v), "%lld", (long long)spec->vcpus * 100000);
	v1_path(p, sizeof(p), "cpu", id, "cpu.cfs_quota_us");
	if (write_file(p, v, err) < 0)
		goto fail;
	return 0;
fail:
	v1_destroy(id);
	return -1;
}

static int v1_attach(const char *id, pid_t pid, struct sbx_err *err)
{
	char p[512], v[32];

	snprintf(v, sizeof(v), "%d", (int)pid);
	for (int i = 0; i < V1_N; i++) {
		v1_path(p, sizeof(p), v1_ctrls[i], id, "cgroup.procs");
		if (write_file(p, v, err) < 0)
			return -1;
	}
	return 0;
}

static void v1_kill_all(const char *id)
{
	char p[512];

	for (int i = 0; i < V1_N; i++) {
		v1_path(p, sizeof(p), v1_ctrls[i], id, "cgroup.procs");
		kill_procs(p);
	}
}

static int v1_destroy(const char *id)
{
	char p[512];
	int busy = 0;

	for (int i = 0; i < V1_N; i++) {
		v1_path(p, sizeof(p), v1_ctrls[i], id, NULL);
		if (rmdir(p) < 0 && errno != ENOENT)
			busy = 1;
	}
	return busy;
}

static long v1_oom_kills(const char *id)
{
	char p[512];

	v1_path(p, sizeof(p), "memory", id, "memory.oom_control");
	return read_key(p, "oom_kill");
}

static long v1_pids_hits(const char *id)
{
	char p[512];

	v1_path(p, sizeof(p), "pids", id, "pids.events");
	return read_key(p, "max");
}

struct each_v1 { void (*fn)(const char *, void *); void *arg; };

static void v1_each(void (*fn)(const char *, void *), void *arg)
{
	char p[512];

	/* A sandbox may be left in any of the hierarchies; destroy is
	 * idempotent, so reporting an id more than once is harmless. */
	for (int i = 0; i < V1_N; i++) {
		v1_path(p, sizeof(p), v1_ctrls[i], NULL, NULL);
		each_in(p, fn, arg);
	}
}

static const struct jail_cg_ops cg_v1 = {
	"v1", v1_create, v1_attach, v1_kill_all, v1_destroy, v1_oom_kills, v1_pids_hits,
	v1_each
};

/* ---- v2: one unified tree ---- */

static void v2_path(char *out, size_t n, const char *id, const char *file)
{
	snprintf(out, n, CG_ROOT "/sandbox%s%s%s%s", id ? "/" : "", id ? id : "",
		 file ? "/" : "", file ? file : "");
}

static int v2_create(const char *id, const struct rn_spec *spec, struct sbx_err *err)
{
	char p[512], v[64];

	v2_path(p, sizeof(p), NULL, NULL);
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		return sbx_err_sys(err, "mkdir %s", p);
	write_file(CG_ROOT "/cgroup.subtree_control", "+memory +pids +cpu", NULL);
	v2_path(p, sizeof(p), NULL, "cgroup.subtree_control");
	if (write_file(p, "+memory +pids +cpu", err) < 0)
		return -1;
	v2_path(p, sizeof(p), id, NULL);
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		return sbx_err_sys(err, "mkdir %s", p);
	/* On v2 socket buffers are charged to the cgroup's memory and so
	 * held within memory.max (memory.stat "sock"); nothing here may turn
	 * that off (jail_cgroup_detect refuses cgroup.memory=nosocket). */
	snprintf(v, sizeof(v), "%lld", (long long)spec->memory_mb << 20);
	v2_path(p, sizeof(p), id, "memory.max");
	if (write_file(p, v, err) < 0)
		goto fail;
	v2_path(p, sizeof(p), id, "memory.swap.max");
	if (access(p, F_OK) == 0 && write_file(p, "0", err) < 0)
		goto fail;
	snprintf(v, sizeof(v), "%lld", (long long)spec->pids);
	v2_path(p, sizeof(p), id, "pids.max");
	if (write_file(p, v, err) < 0)
		goto fail;
	snprintf(v, sizeof(v), "%lld 100000", (long long)spec->vcpus * 100000);
	v2_path(p, sizeof(p), id, "cpu.max");
	if (write_file(p, v, err) < 0)
		goto fail;
	return 0;
fail:
	v2_path(p, sizeof(p), id, NULL);
	rmdir(p);
	return -1;
}

static int v2_attach(const char *id, pid_t pid, struct sbx_err *err)
{
	char p[512], v[32];

	snprintf(v, sizeof(v), "%d", (int)pid);
	v2_path(p, sizeof(p), id, "cgroup.procs");
	return write_file(p, v, err);
}

static void v2_kill_all(const char *id)
{
	char p[512];

	v2_path(p, sizeof(p), id, "cgroup.kill");
	if (write_file(p, "1", NULL) < 0) {
		v2_path(p, sizeof(p), id, "cgroup.procs");
		kill_procs(p);
	}
}

static int v2_destroy(const char *id)
{
	char p[512];

	v2_path(p, sizeof(p), id, NULL);
	return rmdir(p) < 0 && errno != ENOENT;
}

static long v2_oom_kills(const char *id)
{
	char p[512];

	v2_path(p, sizeof(p), id, "memory.events");
	return read_key(p, "oom_kill");
}

static long v2_pids_hits(const char *id)
{
	char p[512];

	v2_path(p, sizeof(p), id, "pids.events");
	return read_key(p, "max");
}

static void v2_each(void (*fn)(const char *, void *), void *arg)
{
	char p[512];

	v2_path(p, sizeof(p), NULL, NULL);
	each_in(p, fn, arg);
}

static const struct jail_cg_ops cg_v2 = {
	"v2", v2_create, v2_attach, v2_kill_all, v2_destroy, v2_oom_kills, v2_pids_hits,
	v2_each
};

/* cgroup.memory=nosocket on the kernel command line stops charging socket
 * buffers to any cgroup: memory_mb would then not cover them. */
static int sockets_uncharged(void)
{
	char buf[4096], *p;
	int fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	for (p = strstr(buf, "cgroup.memory="); p; p = strstr(p + 1, "cgroup.memory=")) {
		const char *v = p + strlen("cgroup.memory=");
		size_t len = strcspn(v, " \n");
		for (const char *w = v; w < v + len; w += strcspn(w, ",") + 1)
			if (strncmp(w, "nosocket", 8) == 0 && (w[8] == ',' || w + 8 == v + len))
				return 1;
	}
	return 0;
}

const struct jail_cg_ops *jail_cgroup_detect(struct sbx_err *err)
{
	if (sockets_uncharged()) {
		sbx_err_set(err, ENOTSUP, "the kernel runs with cgroup.memory=nosocket: "
			    "sandboxes' socket buffers would escape their memory limit");
		return NULL;
	}
	if (access(CG_ROOT "/cgroup.controllers", F_OK) == 0)
		return &cg_v2;
	if (access(CG_ROOT "/memory/memory.limit_in_bytes", F_OK) == 0 &&
	    access(CG_ROOT "/memory/memory.kmem.tcp.limit_in_bytes", F_OK) == 0 &&
	    access(CG_ROOT "/pids/cgroup.procs", F_OK) == 0 &&
	    access(CG_ROOT "/cpu/cpu.cfs_quota_us", F_OK) == 0)
		return &cg_v1;
	sbx_err_set(err, ENOTSUP, "no usable cgroup layout under " CG_ROOT
		    " (need v2, or v1 memory (with kmem.tcp accounting)+pids+cpu)");
	return NULL;
}
