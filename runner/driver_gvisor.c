/* The gvisor driver: each sandbox is one `runsc run` (our child, in the
 * foreground: its exit is the sandbox's end, and it removes runsc's own
 * state and cgroups when the sandbox ends normally). The runner makes the
 * sandbox's memory/pids/cpu cgroups with their limits first (runsc joins
 * them and leaves them alone), so the counters survive until cleanup reads
 * them. The agent's socket dir is a tiny per-sandbox tmpfs bound rw into
 * the sandbox; with --host-uds=create the socket the agent binds there is
 * a real host socket, so the transport is the jail's, unchanged. */
#include "driver_gvisor.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cJSON.h>

#include "jail.h"
#include "jail_cgroup.h"
#include "sbx_log.h"

#define CG_ROOT "/sys/fs/cgroup"
/* Host tasks of a sandbox: sentry and gofer threads plus about 2 per guest
 * process under systrap (GVISOR.md §5); the host pids.max is only the
 * backstop behind RLIMIT_NPROC, sized so the guest limit is met first. */
#define GV_PIDS_BASE 64
#define GV_PIDS_PER_PROC 4
#define GV_PIDS_MAX 32768

static struct {
	const struct jail_cg_ops *cg;
	char runsc[PATH_MAX];
	char root[PATH_MAX];        /* runsc --root: <state>/gvisor */
	char loader[64];
	int agent_stderr;
	long version;
} gd;

static void sub(char *out, const struct rn_sandbox *sb, const char *name)
{
	if (snprintf(out, PATH_MAX, "%s/%s", sb->dir, name) >= PATH_MAX)
		out[0] = 0;
}

static unsigned long long proc_starttime(pid_t pid)
{
	char path[64], buf[1024], *p;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	if (!p || p[2] == 'Z' || p[2] == 'X')
		return 0;
	p += 2;
	for (int field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	return p ? strtoull(p, NULL, 10) : 0;
}

/* state.json: the driver's name (reconcile of each driver takes only its
 * own) and the pid of `runsc run` with its start time. */
static int save_state(const struct rn_sandbox *sb, struct sbx_err *err)
{
	char tmp[PATH_MAX + 16], dst[PATH_MAX + 16], *txt;
	cJSON *o = cJSON_CreateObject();
	int fd, rc = 0;

	cJSON_AddStringToObject(o, "id", sb->id);
	cJSON_AddNumberToObject(o, "pid", sb->pid);
	cJSON_AddNumberToObject(o, "starttime",
				(double)(sb->pid > 0 ? proc_starttime(sb->pid) : 0));
	cJSON_AddStringToObject(o, "driver", "gvisor");
	txt = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!txt)
		return sbx_err_set(err, ENOMEM, "state.json: out of memory");
	snprintf(tmp, sizeof(tmp), "%s/state.json.tmp", sb->dir);
	snprintf(dst, sizeof(dst), "%s/state.json", sb->dir);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, txt, strlen(txt)) != (ssize_t)strlen(txt) ||
	    rename(tmp, dst) < 0)
		rc = sbx_err_sys(err, "write %s", dst);
	if (fd >= 0)
		close(fd);
	cJSON_free(txt);
	return rc;
}

/* ---- what a sandbox leaves on the host, and its removal ---- */

/* runsc makes the hierarchies we did not (cpuset, freezer, devices, ...)
 * at the same path and removes them when `runsc run` ends normally; after
 * a kill of runsc they stay. Kill what is left in every hierarchy's copy
 * and remove them all: 0 done, 1 still busy. */
static int sweep_cgroups(const char *id)
{
	DIR *d = opendir(CG_ROOT);
	struct dirent *e;
	char p[PATH_MAX];
	int busy = 0;

	gd.cg->kill_all(id);
	if (gd.cg->destroy(id) == 1)
		busy = 1;
	if (!d)
		return busy;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), CG_ROOT "/%s/sandbox/%s/cgroup.procs", e->d_name, id);
		if (access(p, F_OK) < 0)
			continue;
		{
			int fd = open(p, O_RDONLY | O_CLOEXEC);
			char buf[4096];
			ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

			if (fd >= 0)
				close(fd);
			if (n > 0) {
				buf[n] = 0;
				for (char *s = buf; *s; ) {
					long pid = strtol(s, &s, 10);
					if (pid > 1)
						kill((pid_t)pid, SIGKILL);
					while (*s == '\n')
						s++;
				}
			}
		}
		snprintf(p, sizeof(p), CG_ROOT "/%s/sandbox/%s", e->d_name, id);
		if (rmdir(p) < 0 && errno != ENOENT)
			busy = 1;
	}
	closedir(d);
	return busy;
}

/* runsc's state files of one container in our --root: "<id>_sandbox:<id>.*"
 * and "runsc-<id>.sock". `runsc delete --force` would remove them too, but
 * it polls for a second even when the sandbox is long dead; once every
 * task of the sandbox is gone (the cgroups are empty) nothing holds them,
 * so they are removed directly and the loop never waits. */
static void remove_runsc_state(const char *id)
{
	DIR *d = opendir(gd.root);
	struct dirent *e;
	char sock[RN_ID_MAX + 16];
	size_t l = strlen(id);

	if (!d)
		return;
	snprintf(sock, sizeof(sock), "runsc-%s.sock", id);
	while ((e = readdir(d)))
		if ((!strncmp(e->d_name, id, l) && e->d_name[l] == '_') ||
		    !strcmp(e->d_name, sock))
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
}

static void unmount_all(const struct rn_sandbox *sb)
{
	static const char *const mnts[] = { "sock", "upper", NULL };
	char p[PATH_MAX];

	for (int i = 0; mnts[i]; i++) {
		sub(p, sb, mnts[i]);
		for (int k = 0; k < 8 && umount2(p, MNT_DETACH) == 0; k++)
			;
	}
}

static int find_loader(const char *runtime_dir);

/* ---- start ---- */

static int make_dirs(const struct rn_sandbox *sb, struct sbx_err *err)
{
	char p[PATH_MAX], opts[96];
	long long inodes = sb->spec.disk_mb * 256;

	if (mkdir(sb->dir, 0700) < 0)
		return sbx_err_sys(err, "mkdir %s", sb->dir);
	if (save_state(sb, err) < 0)
		return -1;
	sub(p, sb, "etc");
	if (mkdir(p, 0755) < 0)
		return sbx_err_sys(err, "mkdir %s", p);
	/* The agent's socket dir is writable by root inside and visible on
	 * the host: a tiny tmpfs of its own (GVISOR.md §3: the guest got
	 * ENOSPC after 64 KiB). */
	sub(p, sb, "sock");
	if (mkdir(p, 0700) < 0)
		return sbx_err_sys(err, "mkdir %s", p);
	if (mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "size=64k,nr_inodes=16,mode=0700") < 0)
		return sbx_err_sys(err, "mount tmpfs on %s", p);
	/* The overlay's upper layer (runsc's file store) on a tmpfs of
	 * disk_mb: writes to / cannot fill the host's disk. */
	sub(p, sb, "upper");
	if (mkdir(p, 0700) < 0)
		return sbx_err_sys(err, "mkdir %s", p);
	snprintf(opts, sizeof(opts), "size=%lldm,nr_inodes=%lld,mode=0700",
		 (long long)sb->spec.disk_mb, inodes < 1024 ? 1024 : inodes);
	if (mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0)
		return sbx_err_sys(err, "mount tmpfs on %s", p);
	return 0;
}

/* The child between fork and exec of runsc: default signals, fresh stdio
 * (never a regular file without O_APPEND: runsc writes the sandbox's
 * output at its own offset), its own process group. */
static void __attribute__((noreturn)) exec_runsc(char *const argv[])
{
	sigset_t none;
	int nul;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	umask(022);
	setsid();
	nul = open("/dev/null", O_RDWR);
	if (nul < 0)
		_exit(126);
	dup2(nul, 0);
	dup2(nul, 1);
	if (!gd.agent_stderr) {
		dup2(nul, 2);
	} else {
		struct stat st;
		int fl = fcntl(2, F_GETFL);

		if (fstat(2, &st) == 0 && S_ISREG(st.st_mode) && fl >= 0)
			fcntl(2, F_SETFL, fl | O_APPEND);
	}
	syscall(SYS_close_range, 3, ~0u, 0);
	execv(argv[0], argv);
	_exit(127);
}

static int gv_start(struct runner *r, struct rn_sandbox *sb, struct sbx_err *err)
{
	char rootfs[PATH_MAX + 64], sockdir[PATH_MAX], etcdir[PATH_MAX], upper[PATH_MAX];
	char cgpath[RN_ID_MAX + 16], rootflag[PATH_MAX + 16], overlay[PATH_MAX + 32];
	char logflag[PATH_MAX + 16], bundle[PATH_MAX + 16];
	struct rn_spec cgspec;
	struct gv_bundle b;
	pid_t pid;

	snprintf(rootfs, sizeof(rootfs), "%s/%s/rootfs", r->image_dir, sb->spec.image);
	if (access(rootfs, X_OK) < 0)
		return sbx_err_set(err, EINVAL, "image: no image \"%s\" on this runner "
				   "(%s missing)", sb->spec.image, rootfs);
	if (!gd.loader[0])
		find_loader(r->runtime_dir);
	if (!gd.loader[0] || access(r->runtime_dir, X_OK) < 0)
		return sbx_err_set(err, ENOENT, "the agent runtime is not prepared "
				   "(is --agent right?)");
	if (sb->spec.network != RN_NET_DENY_ALL)
		return sbx_err_set(err, EINVAL, "network: \"%s\" is not available with "
				   "isolation gvisor on this runner (only deny-all)",
				   rn_network_name(sb->spec.network));

	sb->pid = 0;
	sub(sockdir, sb, "sock");
	sub(etcdir, sb, "etc");
	sub(upper, sb, "upper");
	snprintf(cgpath, sizeof(cgpath), "/sandbox/%s", sb->id);
	if (make_dirs(sb, err) < 0)
		goto fail;

	cgspec = sb->spec;
	cgspec.pids = GV_PIDS_BASE + GV_PIDS_PER_PROC * sb->spec.pids;
	if (cgspec.pids > GV_PIDS_MAX)
		cgspec.pids = GV_PIDS_MAX;
	if (gd.cg->create(sb->id, &cgspec, err) < 0)
		goto fail;

	memset(&b, 0, sizeof(b));
	b.spec = &sb->spec;
	b.rootfs = rootfs;
	b.runtime_dir = r->runtime_dir;
	b.loader = gd.loader;
	b.sockdir = sockdir;
	b.etcdir = etcdir;
	b.cgroup_path = cgpath;
	b.netns_path = "";
	b.host_pids = cgspec.pids;
	if (gv_spec_write(&b, sb->dir, err) < 0)
		goto fail;

	snprintf(rootflag, sizeof(rootflag), "--root=%s", gd.root);
	snprintf(overlay, sizeof(overlay), "--overlay2=root:dir=%s", upper);
	snprintf(logflag, sizeof(logflag), "--log=%s/runsc.log", sb->dir);
	snprintf(bundle, sizeof(bundle), "%s", sb->dir);
	{
		char *const argv[] = {
			gd.runsc, rootflag, logflag, "--network=none", "--host-uds=create",
			"--platform=systrap", overlay, "run", "--bundle", bundle, sb->id, NULL
		};

		pid = fork();
		if (pid < 0) {
			sbx_err_sys(err, "fork for runsc");
			goto fail;
		}
		if (pid == 0)
			exec_runsc(argv);
	}
	sb->pid = pid;
	if (save_state(sb, err) < 0)
		goto fail;
	sub(sb->agent_socket, sb, "sock/agent.sock");
	return 0;
fail:
	if (sb->pid > 0) {
		int st;

		kill(sb->pid, SIGKILL);
		while (waitpid(sb->pid, &st, 0) < 0 && errno == EINTR)
			;
		sb->pid = 0;
	}
	for (int i = 0; i < 100 && sweep_cgroups(sb->id) == 1; i++)
		usleep(5000);
	remove_runsc_state(sb->id);
	unmount_all(sb);
	jail_rmtree(sb->dir);
	return -1;
}

static void gv_kill(struct rn_sandbox *sb)
{
	/* The sandbox's tasks (sentry, gofer, stubs) are all in its cgroup;
	 * `runsc run` itself is not, and is killed by pid (then nothing waits
	 * a second in `delete`: cleanup removes runsc's state). */
	if (sb->pid > 0 && !sb->reaped)
		kill(sb->pid, SIGKILL);
	gd.cg->kill_all(sb->id);
}

/* The last lines of runsc's own log, for a sandbox that never came up. */
static void runsc_error(struct rn_sandbox *sb)
{
	char p[PATH_MAX + 16], buf[2048], *m, *e;
	int fd;
	ssize_t n;
	off_t size;

	if (sb->error[0] && strncmp(sb->error, "the agent exited", 16) != 0)
		return;
	snprintf(p, sizeof(p), "%s/runsc.log", sb->dir);
	fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	size = lseek(fd, 0, SEEK_END);
	lseek(fd, size > (off_t)sizeof(buf) - 1 ? size - (off_t)sizeof(buf) + 1 : 0, SEEK_SET);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	/* runsc logs JSON lines: {"msg":"...","level":"error",...} */
	m = strstr(buf, "\"level\":\"error\"") ? strstr(buf, "\"msg\":\"") : NULL;
	if (!m)
		return;
	m += 7;
	e = strstr(m, "\",\"");
	if (e)
		*e = 0;
	snprintf(sb->error, sizeof(sb->error), "runsc: %.200s", m);
}

static int gv_cleanup(struct runner *r, struct rn_sandbox *sb, struct sbx_err *err)
{
	(void)r;
	if (sweep_cgroups(sb->id) == 1)
		return 1;
	/* A memory overrun is met by the host's OOM killer, which kills the
	 * sentry: the whole sandbox ends and runsc exits 1, not by SIGKILL. */
	if (sb->reason == RN_REASON_ERROR && sb->oom_kills > 0) {
		sb->reason = RN_REASON_OOM;
		snprintf(sb->error, sizeof(sb->error), "the sandbox went over its memory "
			 "limit (%lld MiB) and was killed", (long long)sb->spec.memory_mb);
	} else if (sb->reason == RN_REASON_ERROR) {
		runsc_error(sb);
	}
	remove_runsc_state(sb->id);
	unmount_all(sb);
	if (jail_rmtree(sb->dir) < 0)
		return sbx_err_sys(err, "remove %s", sb->dir);
	return 0;
}

static long gv_oom_kills(struct rn_sandbox *sb)
{
	return gd.cg->oom_kills(sb->id);
}

static long gv_pids_hits(struct rn_sandbox *sb)
{
	return gd.cg->pids_hits(sb->id);
}

/* ---- reconciliation after a crash ---- */

/* 1 if dir holds a state.json of this driver; kills its `runsc run`. */
static int leftover_of_ours(const char *dir)
{
	char path[PATH_MAX + 16], buf[1024];
	cJSON *o = NULL, *v, *s;
	int fd, ours = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/state.json", dir);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0)
		o = cJSON_ParseWithLength(buf, (size_t)n);
	v = o ? cJSON_GetObjectItemCaseSensitive(o, "driver") : NULL;
	ours = v && cJSON_IsString(v) && !strcmp(v->valuestring, "gvisor");
	v = o ? cJSON_GetObjectItemCaseSensitive(o, "pid") : NULL;
	s = o ? cJSON_GetObjectItemCaseSensitive(o, "starttime") : NULL;
	if (ours && v && cJSON_IsNumber(v) && v->valueint > 1 && s && cJSON_IsNumber(s)) {
		pid_t pid = (pid_t)v->valueint;
		unsigned long long st = proc_starttime(pid);

		/* only the process we started, not a reused pid */
		if (st && (unsigned long long)s->valuedouble == st) {
			kill(pid, SIGKILL);
			for (int i = 0; i < 400 && proc_starttime(pid) == st; i++)
				usleep(5000);
		}
	}
	cJSON_Delete(o);
	return ours;
}

static void reap_one(const char *id)
{
	for (int i = 0; i < 400 && sweep_cgroups(id) == 1; i++)
		usleep(5000);
	if (sweep_cgroups(id) == 1)
		sbx_warn("cgroup of %s is still busy after cleanup", id);
	remove_runsc_state(id);
}

static void gv_reconcile(struct runner *r)
{
	char prefix[40];
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(prefix, sizeof(prefix), "sbx_%s_", r->name);
	d = opendir(r->sbx_root);
	if (d) {
		while ((e = readdir(d))) {
			struct rn_sandbox tmp;

			if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
				continue;
			memset(&tmp, 0, sizeof(tmp));
			if (strlen(e->d_name) >= sizeof(tmp.id) ||
			    snprintf(tmp.dir, sizeof(tmp.dir), "%s/%s", r->sbx_root,
				     e->d_name) >= (int)sizeof(tmp.dir))
				continue;
			strcpy(tmp.id, e->d_name);
			if (!leftover_of_ours(tmp.dir))
				continue;
			reap_one(tmp.id);
			unmount_all(&tmp);
			if (jail_rmtree(tmp.dir) < 0)
				sbx_warn("cannot remove %s: %s", tmp.dir, strerror(errno));
			n++;
		}
		closedir(d);
	}
	/* runsc state whose sandbox dir is gone (a crash between the two):
	 * its id names the container and the cgroups */
	d = opendir(gd.root);
	if (d) {
		while ((e = readdir(d))) {
			char id[RN_ID_MAX], *u;

			if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 ||
			    strlen(e->d_name) >= sizeof(id))
				continue;
			strcpy(id, e->d_name);
			u = strchr(id + strlen(prefix), '_');
			if (!u)
				continue;
			*u = 0;
			reap_one(id);
			n++;
		}
		closedir(d);
	}
	if (n)
		sbx_info("gvisor: reconciled %d sandbox(es) left by a previous run", n);
}

/* ---- probe ---- */

long gv_parse_version(const char *text)
{
	/* "runsc version release-20240729.0" upstream; Debian's build says
	 * "runsc version 0.0~20240729.0" */
	for (const char *p = text; p && *p; p++) {
		if (p[0] == '2' && p[1] == '0') {
			long v = 0;
			int k;

			for (k = 0; k < 8 && p[k] >= '0' && p[k] <= '9'; k++)
				v = v * 10 + (p[k] - '0');
			if (k == 8 && (p[8] < '0' || p[8] > '9') &&
			    (p == text || p[-1] < '0' || p[-1] > '9'))
				return v;
		}
	}
	return -1;
}

static int run_capture(const char *cmd, char *out, size_t n)
{
	FILE *f = popen(cmd, "re");
	size_t got = 0;

	if (!f)
		return -1;
	while (got + 1 < n) {
		size_t k = fread(out + got, 1, n - 1 - got, f);
		if (k == 0)
			break;
		got += k;
	}
	out[got] = 0;
	return pclose(f);
}

static int find_runsc(struct sbx_err *err)
{
	static const char *const dirs[] = { "/usr/bin", "/usr/sbin", "/usr/local/bin",
					    "/usr/local/sbin", NULL };
	const char *env = getenv("SANDBOX_RUNSC");

	if (env && *env) {
		if (env[0] != '/' || access(env, X_OK) < 0)
			return sbx_err_set(err, ENOENT, "SANDBOX_RUNSC=%s is not an executable "
					   "absolute path", env);
		snprintf(gd.runsc, sizeof(gd.runsc), "%s", env);
		return 0;
	}
	for (int i = 0; dirs[i]; i++) {
		snprintf(gd.runsc, sizeof(gd.runsc), "%s/runsc", dirs[i]);
		if (access(gd.runsc, X_OK) == 0)
			return 0;
	}
	return sbx_err_set(err, ENOENT, "runsc is not installed (mk/deps.sh installs it "
			   "from bookworm-backports)");
}

static int find_loader(const char *runtime_dir)
{
	char lib[PATH_MAX + 8];
	DIR *d;
	struct dirent *e;

	snprintf(lib, sizeof(lib), "%s/lib", runtime_dir);
	d = opendir(lib);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "ld-", 3) && strlen(e->d_name) < sizeof(gd.loader)) {
			memcpy(gd.loader, e->d_name, strlen(e->d_name) + 1);
			break;
		}
	closedir(d);
	return gd.loader[0] ? 0 : -1;
}

static const struct rn_driver gvisor_driver = {
	"gvisor", gv_start, gv_kill, gv_cleanup, gv_oom_kills, gv_pids_hits,
	gv_reconcile, NULL
};

const struct rn_driver *gvisor_driver_init(struct runner *r, int agent_stderr,
					   struct sbx_err *err)
{
	char cmd[PATH_MAX + 64], out[4096];

	memset(&gd, 0, sizeof(gd));
	gd.agent_stderr = agent_stderr;
	if (geteuid() != 0)
		return sbx_err_set(err, EPERM, "gvisor needs root (runsc places each sandbox "
				   "in its cgroups)"), NULL;
	if (find_runsc(err) < 0)
		return NULL;
	snprintf(cmd, sizeof(cmd), "'%s' --version 2>&1", gd.runsc);
	if (strchr(gd.runsc, '\'') || run_capture(cmd, out, sizeof(out)) != 0)
		return sbx_err_set(err, ENOEXEC, "%s --version failed", gd.runsc), NULL;
	gd.version = gv_parse_version(out);
	if (gd.version < GV_MIN_VERSION)
		return sbx_err_set(err, ENOTSUP, "runsc %ld is older than %ld (Debian 12's "
				   "own build breaks ls -l and has no systrap; install "
				   "bookworm-backports' build)", gd.version, GV_MIN_VERSION), NULL;
	snprintf(cmd, sizeof(cmd), "'%s' help platforms 2>&1", gd.runsc);
	if (run_capture(cmd, out, sizeof(out)) != 0 || !strstr(out, "systrap"))
		return sbx_err_set(err, ENOTSUP, "runsc %ld offers no systrap platform",
				   gd.version), NULL;
	gd.cg = jail_cgroup_detect(err);
	if (!gd.cg)
		return NULL;
	if (snprintf(gd.root, sizeof(gd.root), "%s/gvisor", r->state_dir) >=
	    (int)sizeof(gd.root))
		return sbx_err_set(err, ENAMETOOLONG, "state dir too long"), NULL;
	if (mkdir(gd.root, 0700) < 0 && errno != EEXIST)
		return sbx_err_sys(err, "mkdir %s", gd.root), NULL;
	if (find_loader(r->runtime_dir) < 0)
		sbx_warn("gvisor: the agent runtime %s is not prepared yet", r->runtime_dir);
	sbx_info("gvisor driver: %s (version %ld, systrap), state %s", gd.runsc,
		 gd.version, gd.root);
	return &gvisor_driver;
}
