#include "rn_egress_trust.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rn_egress_ca.h"

static const char *ca_pem;

void rn_egress_trust_set(const char *pem)
{
	ca_pem = pem;
}

const char *rn_egress_trust_pem(void)
{
	return ca_pem;
}

int rn_egress_trust_env(const struct rn_spec *spec, const char **out)
{
	static const char *const env[RN_TRUST_ENV_MAX] = {
		"SSL_CERT_FILE=" RN_EGRESS_BUNDLE_IN_SANDBOX,
		"REQUESTS_CA_BUNDLE=" RN_EGRESS_BUNDLE_IN_SANDBOX,
		"NODE_EXTRA_CA_CERTS=" RN_EGRESS_CA_IN_SANDBOX,
	};
	int n = 0;

	if (!ca_pem)
		return 0;
	for (int i = 0; i < RN_TRUST_ENV_MAX; i++) {
		size_t nl = (size_t)(strchr(env[i], '=') - env[i]);
		int set = 0;
		for (int k = 0; k < spec->n_env && !set; k++)
			set = strlen(spec->env_names[k]) == nl &&
			      strncmp(spec->env_names[k], env[i], nl) == 0;
		if (!set)
			out[n++] = env[i];
	}
	return n;
}

char *rn_egress_trust_bundle(const char *base, size_t base_len)
{
	size_t cn = ca_pem ? strlen(ca_pem) : 0;
	char *out = malloc(base_len + cn + 2), *had;
	size_t n = 0;

	if (!out)
		return NULL;
	if (base_len) {
		memcpy(out, base, base_len);
		n = base_len;
		/* a root from a snapshot already has the CA: once is enough */
		out[n] = '\0';
		while (cn && (had = strstr(out, ca_pem))) {
			memmove(had, had + cn, n - (size_t)(had - out) - cn + 1);
			n -= cn;
		}
		if (n && out[n - 1] != '\n')
			out[n++] = '\n';
	}
	memcpy(out + n, ca_pem ? ca_pem : "", cn);
	out[n + cn] = '\0';
	return out;
}

/* The directory name under dir, made when missing; never a symlink. */
static int sub_dir(int dir, const char *name)
{
	int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT) {
		if (mkdirat(dir, name, 0755) < 0 && errno != EEXIST)
			return -1;
		fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	return fd;
}

int rn_egress_trust_install(int root)
{
	static const char *const dirs[] = { "etc", "ssl", "certs" };
	int d = root, fd, rc = -1, saved;
	char *base = NULL, *bundle = NULL;
	size_t len = 0, cap = 0;
	struct stat st;

	if (!ca_pem)
		return 0;
	for (int i = 0; i < 3; i++) {
		int nd = sub_dir(d, dirs[i]);
		if (d != root)
			close(d);
		if (nd < 0)
			return -1;
		d = nd;
	}
	/* the image's bundle, if a regular file: a symlink is not followed */
	fd = openat(d, "ca-certificates.crt", O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < (32 << 20)) {
		cap = (size_t)st.st_size + 1;
		base = malloc(cap);
		while (base && len < cap - 1) {
			ssize_t r = read(fd, base + len, cap - 1 - len);
			if (r <= 0)
				break;
			len += (size_t)r;
		}
	}
	if (fd >= 0)
		close(fd);
	bundle = rn_egress_trust_bundle(base, base ? len : 0);
	if (!bundle)
		goto out;
	if (unlinkat(d, "ca-certificates.crt", 0) < 0 && errno != ENOENT)
		goto out;
	fd = openat(d, "ca-certificates.crt", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0644);
	if (fd < 0)
		goto out;
	len = strlen(bundle);
	rc = write(fd, bundle, len) == (ssize_t)len ? 0 : -1;
	if (rc < 0 && errno == 0)
		errno = EIO;
	close(fd);
out:
	saved = errno;
	free(base);
	free(bundle);
	close(d);
	errno = saved;
	return rc;
}
