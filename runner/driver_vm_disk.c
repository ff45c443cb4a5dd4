/* The vm driver's disks: the image as a read-only erofs disk, built once
 * per image (and again when the image's stamp changes) and shared by every
 * VM of it; a sandbox's writable disk, empty ext4 of its disk limit, the
 * upper layer of the overlay the guest's init mounts; and this runner's
 * initramfs, the base one with the agent runtime appended (the kernel
 * takes concatenated cpio archives). */
#include "driver_vm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rn_egress_trust.h"
#include "sbx_fs.h"
#include "sbx_log.h"

int vm_run(char *const argv[], struct sbx_err *err)
{
	char out[] = "/tmp/sbx-vm-run.XXXXXX", last[160] = "";
	int fd = mkstemp(out), st;
	pid_t pid;

	if (fd < 0)
		return sbx_err_sys(err, "mkstemp");
	unlink(out);
	pid = fork();
	if (pid < 0) {
		close(fd);
		return sbx_err_sys(err, "fork for %s", argv[0]);
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);
		dup2(nul, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		close(fd);
		return 0;
	}
	/* the last line it printed says why */
	{
		off_t size = lseek(fd, 0, SEEK_END);
		char buf[512];
		ssize_t n;
		lseek(fd, size > (off_t)sizeof(buf) - 1 ? size - (off_t)sizeof(buf) + 1 : 0, SEEK_SET);
		n = read(fd, buf, sizeof(buf) - 1);
		if (n > 0) {
			char *e, *s;
			buf[n] = 0;
			while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
				buf[--n] = 0;
			s = strrchr(buf, '\n');
			s = s ? s + 1 : buf;
			for (e = s; *e; e++)
				if (*e == '\r')
					s = e + 1;
			snprintf(last, sizeof(last), ": %.150s", s);
		}
	}
	close(fd);
	return sbx_err_set(err, EIO, "%s failed (status %d)%s", argv[0],
			   WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), last);
}

static int read_small(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t got;

	if (fd < 0)
		return -1;
	got = read(fd, buf, n - 1);
	close(fd);
	if (got < 0)
		return -1;
	buf[got] = 0;
	return 0;
}

int vm_root_disk(const struct vm_state *vs, const char *image, const char *rootfs,
		 char *out, size_t n, struct sbx_err *err)
{
	char stamp_src[PATH_MAX + 32], stamp[PATH_MAX + 16], tmp[PATH_MAX + 16];
	char want[1024], have[1024], dir[PATH_MAX + 16];
	char *argv[] = { "mkfs.erofs", tmp, (char *)rootfs, NULL };
	int fd;

	snprintf(dir, sizeof(dir), "%s/images", vs->cache);
	if (sbx_mkdir_p(dir, 0755, 0755) < 0)
		return sbx_err_sys(err, "mkdir %s", dir);
	if ((size_t)snprintf(out, n, "%s/%s.erofs", dir, image) >= n)
		return sbx_err_set(err, ENAMETOOLONG, "image path too long");
	snprintf(stamp_src, sizeof(stamp_src), "%s/.sandbox-image", rootfs);
	snprintf(stamp, sizeof(stamp), "%s.stamp", out);
	if (read_small(stamp_src, want, sizeof(want)) < 0) {
		/* an imported image has no build stamp: its config.json beside
		 * the rootfs, rewritten by each import, says which it is */
		struct stat st;
		snprintf(stamp_src, sizeof(stamp_src), "%s/../config.json", rootfs);
		if (stat(stamp_src, &st) < 0)
			return sbx_err_set(err, EINVAL, "image %s has no stamp (%s/.sandbox-image) "
					   "and no config.json", image, rootfs);
		snprintf(want, sizeof(want), "imported %llu %lld %lld.%09ld\n",
			 (unsigned long long)st.st_ino, (long long)st.st_size,
			 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	}
	if (read_small(stamp, have, sizeof(have)) == 0 && !strcmp(want, have) &&
	    access(out, R_OK) == 0)
		return 0;
	sbx_info("vm: building the root disk of image %s (%s)", image, out);
	/* builders may race (a runner's background child, a create, another
	 * runner on the same cache): each writes its own file */
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", out, (int)getpid());
	unlink(tmp);
	if (vm_run(argv, err) < 0) {
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, out) < 0)
		return sbx_err_sys(err, "rename %s", tmp);
	fd = open(stamp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, want, strlen(want)) != (ssize_t)strlen(want)) {
		if (fd >= 0)
			close(fd);
		return sbx_err_sys(err, "write %s", stamp);
	}
	close(fd);
	return 0;
}

/* <seed>/meta/env: the sandbox's env, NAME=VALUE each ended by a NUL
 * (values hold no NUL: rn_spec refuses them), for vm-envexec in the guest */
static int write_env(const char *seed, const struct rn_spec *spec, struct sbx_err *err)
{
	char p[PATH_MAX + 16];
	FILE *f;

	snprintf(p, sizeof(p), "%s/meta", seed);
	if (sbx_mkdir_p(p, 0700, 0700) < 0)
		return sbx_err_sys(err, "mkdir %s", p);
	snprintf(p, sizeof(p), "%s/meta/env", seed);
	f = fopen(p, "wxe");
	if (!f)
		return sbx_err_sys(err, "create %s", p);
	fchmod(fileno(f), 0600);
	for (int i = 0; i < spec->n_env; i++)
		fprintf(f, "%s=%s%c", spec->env_names[i], spec->env_values[i], 0);
	/* the egress CA's bundle and CA for every command, as the jail's */
	if (spec->network != RN_NET_DENY_ALL) {
		const char *trust[RN_TRUST_ENV_MAX];
		int n = rn_egress_trust_env(spec, trust);
		for (int i = 0; i < n; i++)
			fprintf(f, "%s%c", trust[i], 0);
	}
	if (fclose(f) != 0)
		return sbx_err_sys(err, "write %s", p);
	/* the egress CA (public), /.sandbox/egress-ca.pem as in the jail's
	 * runtime: this runner's initramfs was packed before the CA was made */
	if (rn_egress_trust_pem()) {
		snprintf(p, sizeof(p), "%s/meta/egress-ca.pem", seed);
		if (!(f = fopen(p, "wxe")))
			return sbx_err_sys(err, "create %s", p);
		fchmod(fileno(f), 0644);
		fputs(rn_egress_trust_pem(), f);
		if (fclose(f) != 0)
			return sbx_err_sys(err, "write %s", p);
	}
	/* the image's WorkingDir, the agent's --workdir */
	if (spec->workdir[0]) {
		snprintf(p, sizeof(p), "%s/meta/workdir", seed);
		if (!(f = fopen(p, "wxe")))
			return sbx_err_sys(err, "create %s", p);
		fputs(spec->workdir, f);
		if (fclose(f) != 0)
			return sbx_err_sys(err, "write %s", p);
	}
	return 0;
}

/* The image's trust store, read without following a symlink anywhere on
 * the way (an imported image's root is anyone's): a new string (free it),
 * NULL when the image has none that is a regular file. */
static char *image_bundle(const char *rootfs, size_t *len)
{
	static const char *const path[] = { "etc", "ssl", "certs", "ca-certificates.crt" };
	int d = open(rootfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd = -1;
	struct stat st;
	char *buf = NULL;

	for (int i = 0; d >= 0 && i < 4; i++) {
		fd = openat(d, path[i], O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK |
			    (i < 3 ? O_DIRECTORY : 0));
		close(d);
		d = i < 3 ? fd : -1;
	}
	*len = 0;
	if (d >= 0)
		close(d);
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < (32 << 20) &&
	    (buf = malloc((size_t)st.st_size + 1))) {
		ssize_t r;
		while (*len < (size_t)st.st_size &&
		       (r = read(fd, buf + *len, (size_t)st.st_size - *len)) > 0)
			*len += (size_t)r;
	}
	if (fd >= 0)
		close(fd);
	return buf;
}

/* <seed>/upper/etc/ssl/certs/ca-certificates.crt: the image's bundle with
 * the runner's egress CA appended (rn_egress_trust.h), in the overlay's
 * upper layer, so the guest's root has it in place of the image's */
static int write_trust(const char *seed, const char *rootfs, struct sbx_err *err)
{
	char p[PATH_MAX + 64], *base, *bundle;
	size_t len;
	FILE *f;
	int rc;

	snprintf(p, sizeof(p), "%s/upper/etc/ssl/certs", seed);
	if (sbx_mkdir_p(p, 0755, 0755) < 0)
		return sbx_err_sys(err, "mkdir %s", p);
	/* the upper layer's directories are the guest's /, /etc, ...: their
	 * modes, whatever the runner's umask */
	for (char *s = p + strlen(seed); s; s = strchr(s + 1, '/')) {
		char c = *s;
		*s = 0;
		if (s > p + strlen(seed) && chmod(p, 0755) < 0)
			return sbx_err_sys(err, "chmod %s", p);
		*s = c;
	}
	if (chmod(p, 0755) < 0)
		return sbx_err_sys(err, "chmod %s", p);
	base = image_bundle(rootfs, &len);
	bundle = rn_egress_trust_bundle(base, len);
	free(base);
	if (!bundle)
		return sbx_err_set(err, ENOMEM, "out of memory");
	snprintf(p, sizeof(p), "%s/upper/" RN_TRUST_BUNDLE_PATH, seed);
	f = fopen(p, "wxe");
	rc = f && fchmod(fileno(f), 0644) == 0 && fputs(bundle, f) >= 0 ? 0 : -1;
	if (f && fclose(f) != 0)
		rc = -1;
	free(bundle);
	return rc < 0 ? sbx_err_sys(err, "write %s", p) : 0;
}

int vm_scratch_disk(const char *path, int64_t mb, const char *seed, const char *rootfs,
		    const struct rn_spec *spec, struct sbx_err *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600), rc;
	char *argv[] = { "mkfs.ext4", "-q", "-F", "-O", "^has_journal", "-d", (char *)seed,
			 (char *)path, NULL };

	if (fd < 0)
		return sbx_err_sys(err, "create %s", path);
	if (ftruncate(fd, (off_t)mb << 20) < 0) {
		close(fd);
		return sbx_err_sys(err, "size %s", path);
	}
	close(fd);
	if (write_env(seed, spec, err) < 0 ||
	    (spec->network != RN_NET_DENY_ALL && rn_egress_trust_pem() &&
	     write_trust(seed, rootfs, err) < 0)) {
		sbx_rmtree(seed);
		return -1;
	}
	rc = vm_run(argv, err);
	sbx_rmtree(seed);
	return rc;
}

int vm_runner_initrd(struct vm_state *vs, const char *state_dir, const char *runtime_dir,
		     struct sbx_err *err)
{
	char base[PATH_MAX + 16], dir[PATH_MAX + 8], cmd[3 * PATH_MAX + 256];
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	const char *slash = strrchr(runtime_dir, '/');

	snprintf(base, sizeof(base), "%s/initrd.cpio", vs->cache);
	if (access(base, R_OK) < 0)
		return sbx_err_set(err, ENOENT, "no initramfs at %s (mk/vm.sh builds it)", base);
	snprintf(dir, sizeof(dir), "%s/vm", state_dir);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return sbx_err_sys(err, "mkdir %s", dir);
	if (snprintf(vs->initrd, sizeof(vs->initrd), "%s/initrd.cpio", dir) >= (int)sizeof(vs->initrd))
		return sbx_err_set(err, ENAMETOOLONG, "state dir too long");
	if (!slash || strchr(runtime_dir, '\'') || strchr(base, '\'') || strchr(dir, '\''))
		return sbx_err_set(err, EINVAL, "paths with quotes are not supported");
	/* the runtime dir's contents as /runtime of the initramfs, not
	 * compressed (as the base: unpacking is the guest's, under TCG) */
	if (snprintf(cmd, sizeof(cmd),
		 "set -e; cd '%s'; { cat '%s'; ln -sfn '%s' '%s/runtime'; "
		 "cd '%s'; find -L runtime -print | cpio -o -H newc -R 0:0 -L --quiet; } "
		 ">'%s.tmp'; rm -f '%s/runtime'; mv '%s.tmp' '%s'",
		 dir, base, runtime_dir, dir, dir, vs->initrd, dir, vs->initrd, vs->initrd) >=
	    (int)sizeof(cmd))
		return sbx_err_set(err, ENAMETOOLONG, "paths too long");
	return vm_run(argv, err);
}
