/* The OCI bundle config (config.json) of one gVisor sandbox, built with
 * cJSON: the sandbox's overlay root (image and snapshot layers, its writes
 * in a host upper dir: driver_gvisor_root.c),
 * the agent runtime read-only at /.sandbox, the agent's socket dir (a tiny
 * host tmpfs) at /run/sbx, the sandbox's cgroup, and the agent as PID 1
 * with the sandbox's env, rlimits and capabilities. The generated /etc
 * files are written into the root, as the jail writes them, not bound
 * over it: every bind mount is a gofer connection and host mounts of its
 * own, about 0.1 MiB of host memory each for as long as the sandbox runs
 * (docs/runner.md). */
#include "driver_gvisor.h"
#include "rn_egress_trust.h"
#include "rn_net.h"
#include "rn_runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

/* The jail's set (jail_child.c): Docker's default minus MKNOD and NET_RAW.
 * The agent (root inside) needs them to switch users and own files;
 * commands run as uid 1000 lose them on setuid. */
static const char *const caps[] = {
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
	"CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE",
	"CAP_SYS_CHROOT", "CAP_AUDIT_WRITE", "CAP_SETFCAP", NULL
};

static cJSON *str_array(const char *const *v)
{
	cJSON *a = cJSON_CreateArray();

	for (int i = 0; v[i]; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
	return a;
}

static void add_mount(cJSON *mounts, const char *dst, const char *type, const char *src,
		      const char *const *opts)
{
	cJSON *m = cJSON_CreateObject();

	cJSON_AddStringToObject(m, "destination", dst);
	cJSON_AddStringToObject(m, "type", type);
	cJSON_AddStringToObject(m, "source", src);
	if (opts)
		cJSON_AddItemToObject(m, "options", str_array(opts));
	cJSON_AddItemToArray(mounts, m);
}

static void add_rlimit(cJSON *a, const char *type, long long v)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "type", type);
	cJSON_AddNumberToObject(o, "hard", (double)v);
	cJSON_AddNumberToObject(o, "soft", (double)v);
	cJSON_AddItemToArray(a, o);
}

static int has_env(const struct rn_spec *s, const char *name)
{
	for (int i = 0; i < s->n_env; i++)
		if (!strcmp(s->env_names[i], name))
			return 1;
	return 0;
}

static cJSON *process(const struct gv_bundle *b)
{
	cJSON *p = cJSON_CreateObject(), *user, *args, *env, *rl, *cap;
	char loader[PATH_MAX + 32], buf[RN_ENV_BYTES + 64];
	const struct rn_spec *s = b->spec;

	cJSON_AddBoolToObject(p, "terminal", 0);
	user = cJSON_AddObjectToObject(p, "user");
	cJSON_AddNumberToObject(user, "uid", 0);
	cJSON_AddNumberToObject(user, "gid", 0);
	snprintf(loader, sizeof(loader), RN_RUNTIME_MOUNT "/lib/%s", b->loader);
	args = cJSON_AddArrayToObject(p, "args");
	cJSON_AddItemToArray(args, cJSON_CreateString(loader));
	cJSON_AddItemToArray(args, cJSON_CreateString("--library-path"));
	cJSON_AddItemToArray(args, cJSON_CreateString(RN_RUNTIME_MOUNT "/lib"));
	cJSON_AddItemToArray(args, cJSON_CreateString(RN_RUNTIME_MOUNT "/sandbox-agent"));
	cJSON_AddItemToArray(args, cJSON_CreateString("--listen"));
	cJSON_AddItemToArray(args, cJSON_CreateString("unix:" GV_AGENT_SOCK));
	/* gVisor's host sockets report no HUP when the runner closes its end:
	 * a terminal's EOF is its hang-up (docs/protocol.md) */
	cJSON_AddItemToArray(args, cJSON_CreateString("--hangup-on-eof"));
	/* runsc gives PID 1 HOME=/root when the env has no HOME; the jail's
	 * agent has none, and commands get their user's home */
	if (!has_env(s, "HOME")) {
		cJSON_AddItemToArray(args, cJSON_CreateString("--unsetenv"));
		cJSON_AddItemToArray(args, cJSON_CreateString("HOME"));
	}
	if (s->workdir[0]) {   /* the image's WorkingDir */
		cJSON_AddItemToArray(args, cJSON_CreateString("--workdir"));
		cJSON_AddItemToArray(args, cJSON_CreateString(s->workdir));
	}
	/* The agent's environment is the sandbox's env and nothing else, as
	 * in the jail; the agent hands it to every command. */
	env = cJSON_AddArrayToObject(p, "env");
	for (int i = 0; i < s->n_env; i++) {
		snprintf(buf, sizeof(buf), "%s=%s", s->env_names[i], s->env_values[i]);
		cJSON_AddItemToArray(env, cJSON_CreateString(buf));
	}
	if (s->network != RN_NET_DENY_ALL) {
		const char *trust[RN_TRUST_ENV_MAX];
		int n = rn_egress_trust_env(s, trust);
		for (int i = 0; i < n; i++)
			cJSON_AddItemToArray(env, cJSON_CreateString(trust[i]));
	}
	cJSON_AddStringToObject(p, "cwd", "/");
	/* RLIMIT_NPROC is the graceful process limit: gVisor enforces it for
	 * tasks without CAP_SYS_ADMIN/CAP_SYS_RESOURCE (commands as uid 1000),
	 * while the host pids cgroup is only a backstop (reaching it crashes
	 * the sentry, which ends the whole sandbox). */
	rl = cJSON_AddArrayToObject(p, "rlimits");
	add_rlimit(rl, "RLIMIT_NOFILE", s->nofile);
	add_rlimit(rl, "RLIMIT_NPROC", s->pids);
	add_rlimit(rl, "RLIMIT_CORE", 0);
	cap = cJSON_AddObjectToObject(p, "capabilities");
	cJSON_AddItemToObject(cap, "bounding", str_array(caps));
	cJSON_AddItemToObject(cap, "effective", str_array(caps));
	cJSON_AddItemToObject(cap, "permitted", str_array(caps));
	cJSON_AddBoolToObject(p, "noNewPrivileges", 1);
	return p;
}

static cJSON *mounts(const struct gv_bundle *b)
{
	static const char *const ro[] = { "rbind", "ro", "nosuid", "nodev", NULL };
	static const char *const rw[] = { "rbind", "rw", "nosuid", "nodev", "noexec", NULL };
	cJSON *m = cJSON_CreateArray();
	char src[PATH_MAX + 32];

	add_mount(m, "/proc", "proc", "proc", NULL);
	add_mount(m, "/dev", "tmpfs", "tmpfs", NULL);
	add_mount(m, "/dev/pts", "devpts", "devpts", NULL);
	add_mount(m, "/dev/shm", "tmpfs", "shm", NULL);
	{
		/* /tmp is the root's own /tmp, as in the jail: its files are in
		 * the writable layer (and a snapshot) within the same disk_mb.
		 * Named here, else runsc mounts an unbounded tmpfs on it. */
		static const char *const tmp_rw[] = { "bind", "rw", "nosuid", "nodev", NULL };

		snprintf(src, sizeof(src), "%s/tmp", b->rootfs);
		add_mount(m, "/tmp", "bind", src, tmp_rw);
	}
	add_mount(m, "/sys", "sysfs", "sysfs", NULL);
	add_mount(m, RN_RUNTIME_MOUNT, "bind", b->runtime_dir, ro);
	add_mount(m, GV_AGENT_SOCK_DIR, "bind", b->sockdir, rw);
	return m;
}

static cJSON *linux_section(const struct gv_bundle *b)
{
	static const char *const ns[] = { "pid", "network", "ipc", "uts", "mount", NULL };
	cJSON *l = cJSON_CreateObject(), *a, *res, *o;

	cJSON_AddStringToObject(l, "cgroupsPath", b->cgroup_path);
	/* The runner made the memory, pids and cpu cgroups with their limits
	 * before runsc runs; runsc joins cgroups that exist and leaves their
	 * limits alone. The same values are stated here for runsc's own view
	 * (the guest sees the memory limit as its RAM). */
	res = cJSON_AddObjectToObject(l, "resources");
	o = cJSON_AddObjectToObject(res, "memory");
	cJSON_AddNumberToObject(o, "limit", (double)(b->spec->memory_mb << 20));
	o = cJSON_AddObjectToObject(res, "cpu");
	cJSON_AddNumberToObject(o, "quota", (double)(b->spec->vcpus * 100000));
	cJSON_AddNumberToObject(o, "period", 100000);
	o = cJSON_AddObjectToObject(res, "pids");
	cJSON_AddNumberToObject(o, "limit", (double)b->host_pids);
	a = cJSON_AddArrayToObject(l, "namespaces");
	for (int i = 0; ns[i]; i++) {
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "type", ns[i]);
		if (!strcmp(ns[i], "network") && b->netns_path[0])
			cJSON_AddStringToObject(o, "path", b->netns_path);
		cJSON_AddItemToArray(a, o);
	}
	return l;
}

char *gv_spec_json(const struct gv_bundle *b)
{
	cJSON *c = cJSON_CreateObject(), *root;
	char *txt;

	cJSON_AddStringToObject(c, "ociVersion", "1.0.0");
	cJSON_AddItemToObject(c, "process", process(b));
	root = cJSON_AddObjectToObject(c, "root");
	cJSON_AddStringToObject(root, "path", b->rootfs);
	/* writable: the host overlay's upper dir takes the writes (the
	 * image is a lower layer, shared, never written) */
	cJSON_AddBoolToObject(root, "readonly", 0);
	cJSON_AddStringToObject(c, "hostname", "sandbox");
	cJSON_AddItemToObject(c, "mounts", mounts(b));
	cJSON_AddItemToObject(c, "linux", linux_section(b));
	txt = cJSON_PrintUnformatted(c);
	cJSON_Delete(c);
	return txt;
}

static int write_text(const char *dir, const char *name, const char *text,
		      struct sbx_err *err)
{
	char p[PATH_MAX + 32];
	int fd;
	size_t n = strlen(text);

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return sbx_err_sys(err, "create %s", p);
	if (write(fd, text, n) != (ssize_t)n) {
		close(fd);
		return sbx_err_sys(err, "write %s", p);
	}
	close(fd);
	return 0;
}

/* name in the root's /etc (etc, a dir fd): the image's file, or a symlink
 * in its place, gives way to ours. The runner is the host's root here, so
 * nothing of the path is followed: a layer's symlink never leads out. */
static int write_etc_file(int etc, const char *name, const char *text, struct sbx_err *err)
{
	size_t n = strlen(text);
	int fd;

	if (unlinkat(etc, name, 0) < 0 && errno != ENOENT)
		return sbx_err_sys(err, "remove the image's /etc/%s", name);
	fd = openat(etc, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return sbx_err_sys(err, "create /etc/%s in the sandbox's root", name);
	if (write(fd, text, n) != (ssize_t)n) {
		close(fd);
		return sbx_err_sys(err, "write /etc/%s in the sandbox's root", name);
	}
	close(fd);
	return 0;
}

/* The root's /etc, made when missing; never a symlink. */
static int open_etc(const char *rootfs, struct sbx_err *err)
{
	int root = open(rootfs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), etc;

	if (root < 0)
		return sbx_err_sys(err, "open %s", rootfs);
	etc = openat(root, "etc", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (etc < 0 && errno == ENOENT && mkdirat(root, "etc", 0755) == 0)
		etc = openat(root, "etc", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(root);
	if (etc < 0)
		return sbx_err_sys(err, "the image's /etc is not a directory");
	return etc;
}

/* The jail's files (jail_child.c): the image's own passwd may list system
 * users the sandbox does not need; a sandbox with a network trusts the
 * runner's egress CA. They land in the root's writable layer (a snapshot
 * keeps them, a sandbox made from one gets its own again). */
static int write_etc(const struct gv_bundle *b, struct sbx_err *err)
{
	char resolv[96];
	int etc = open_etc(b->rootfs, err), rc;

	if (etc < 0)
		return -1;
	rn_net_resolv_conf(b->spec->network, b->slot, resolv, sizeof(resolv));
	rc = write_etc_file(etc, "passwd", "root:x:0:0:root:/root:/bin/bash\n"
			    "sandbox:x:1000:1000:sandbox:/home/sandbox:/bin/bash\n"
			    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n", err) < 0 ||
	     write_etc_file(etc, "group", "root:x:0:\ntty:x:5:\nsandbox:x:1000:\n"
			    "nogroup:x:65534:\n", err) < 0 ||
	     write_etc_file(etc, "hosts", "127.0.0.1\tlocalhost sandbox\n"
			    "::1\tlocalhost ip6-localhost ip6-loopback\n", err) < 0 ||
	     write_etc_file(etc, "hostname", "sandbox\n", err) < 0 ||
	     write_etc_file(etc, "resolv.conf", resolv, err) < 0 ? -1 : 0;
	close(etc);
	if (rc == 0 && b->spec->network != RN_NET_DENY_ALL) {
		/* an image whose /etc/ssl/certs is a symlink is left as it is
		 * (its clients then refuse the decrypted names), as in the jail */
		int root = open(b->rootfs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (root >= 0) {
			(void)rn_egress_trust_install(root);
			close(root);
		}
	}
	return rc;
}

int gv_spec_write(const struct gv_bundle *b, const char *bundle_dir, struct sbx_err *err)
{
	char *txt;
	int rc;

	if (write_etc(b, err) < 0)
		return -1;
	txt = gv_spec_json(b);
	if (!txt)
		return sbx_err_set(err, ENOMEM, "config.json: out of memory");
	rc = write_text(bundle_dir, "config.json", txt, err);
	cJSON_free(txt);
	return rc;
}
