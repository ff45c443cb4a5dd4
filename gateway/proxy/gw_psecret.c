/* The key that signs preview tokens (gw_ptoken.c), kept in a file the
 * operator names with --preview-secret-file, so that the links an owner
 * handed out keep working across a gateway restart. The file holds 64 hex
 * digits (and an optional newline); a missing file is made once, mode
 * 0600. A file others may read is refused: anyone who reads it can mint
 * a token for every private preview. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/rand.h>
#include "../core/gw.h"

#define HEX_LEN (2 * sizeof ((struct gw_vh *)0)->preview_secret)

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int read_secret(int fd, const char *path, unsigned char *key, size_t keylen,
		       struct sbx_err *err)
{
	char buf[HEX_LEN + 3];
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st) < 0)
		return sbx_err_sys(err, "%s", path);
	if (!S_ISREG(st.st_mode))
		return sbx_err_set(err, EINVAL, "%s: not a regular file", path);
	if (st.st_mode & 077)
		return sbx_err_set(err, EPERM, "%s: readable or writable by others "
				   "(mode %03o): chmod 600 it", path, (unsigned)(st.st_mode & 0777));
	n = read(fd, buf, sizeof buf);
	if (n < 0)
		return sbx_err_sys(err, "%s", path);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	if ((size_t)n != HEX_LEN)
		return sbx_err_set(err, EINVAL, "%s: expected %zu hex digits", path, HEX_LEN);
	for (size_t i = 0; i < keylen; i++) {
		int hi = hexval((unsigned char)buf[2 * i]), lo = hexval((unsigned char)buf[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return sbx_err_set(err, EINVAL, "%s: expected %zu hex digits", path, HEX_LEN);
		key[i] = (unsigned char)(hi << 4 | lo);
	}
	explicit_bzero(buf, sizeof buf);
	return 0;
}

static int write_secret(int fd, const char *path, const unsigned char *key, size_t keylen,
			struct sbx_err *err)
{
	char buf[HEX_LEN + 1];
	for (size_t i = 0; i < keylen; i++) {
		buf[2 * i] = "0123456789abcdef"[key[i] >> 4];
		buf[2 * i + 1] = "0123456789abcdef"[key[i] & 15];
	}
	buf[HEX_LEN] = '\n';
	int rc = write(fd, buf, sizeof buf) == (ssize_t)sizeof buf && fsync(fd) == 0 ? 0 : -1;
	explicit_bzero(buf, sizeof buf);
	return rc ? sbx_err_sys(err, "%s: write", path) : 0;
}

int gw_psecret_load(struct gw_vh *vh, const char *path, struct sbx_err *err)
{
	unsigned char *key = vh->preview_secret;
	size_t keylen = sizeof vh->preview_secret;
	int fd, rc;

	if (!path)   /* per process: a restart invalidates every token */
		return RAND_bytes(key, (int)keylen) == 1 ? 0 :
			sbx_err_set(err, EIO, "no random bytes for the preview secret");
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		rc = read_secret(fd, path, key, keylen, err);
		close(fd);
		return rc;
	}
	if (errno != ENOENT)
		return sbx_err_sys(err, "%s", path);
	if (RAND_bytes(key, (int)keylen) != 1)
		return sbx_err_set(err, EIO, "no random bytes for the preview secret");
	/* O_EXCL: two gateways starting at once must not both write one */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return sbx_err_sys(err, "%s: create", path);
	rc = write_secret(fd, path, key, keylen, err);
	close(fd);
	if (rc)
		unlink(path);   /* a short file would stop the next start */
	return rc;
}
