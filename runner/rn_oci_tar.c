/* The tar reader of image layers (rn_oci_tar.h). Headers are checked
 * (checksum, octal or base-256 numbers); pax and GNU long-name records are
 * bounded; data is skipped, never buffered. */
#include "sbx_tarpath.h"
#include "rn_oci_tar.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/evp.h>

#define META_MAX (64 * 1024)

static int fail(struct oci_tar *t, const char *why)
{
	if (!t->err[0])
		snprintf(t->err, sizeof t->err, "%s", why);
	return -1;
}

/* Exactly n uncompressed bytes into buf (NULL: skip them): 0, 1 at a clean
 * end of the stream before any byte, -1. */
static int take(struct oci_tar *t, void *buf, size_t n)
{
	unsigned char skip[16384];
	size_t got = 0;

	while (got < n) {
		size_t want = n - got;
		unsigned char *p = buf ? (unsigned char *)buf + got : skip;
		int k;

		if (!buf && want > sizeof skip)
			want = sizeof skip;
		if (want > (1u << 30))
			want = 1u << 30;
		k = gzread(t->gz, p, (unsigned)want);
		if (k < 0) {
			int e;
			const char *m = gzerror(t->gz, &e);
			snprintf(t->err, sizeof t->err, "bad compressed data: %s", m ? m : "?");
			return -1;
		}
		if (k == 0)
			return got == 0 ? 1 : fail(t, "bad tar archive: cut short");
		t->read += (uint64_t)k;
		if (t->read > t->cap) {
			t->over = 1;
			return fail(t, "layer over the size cap (uncompressed bytes)");
		}
		if (t->sha)
			EVP_DigestUpdate(t->sha, p, (size_t)k);
		got += (size_t)k;
	}
	return 0;
}

int oci_tar_open(struct oci_tar *t, int fd, uint64_t cap, int want_sha)
{
	int dfd;

	memset(t, 0, sizeof *t);
	t->cap = cap;
	dfd = dup(fd);
	if (dfd < 0 || !(t->gz = gzdopen(dfd, "rb"))) {
		if (dfd >= 0)
			close(dfd);
		return fail(t, "cannot read the stream");
	}
	gzbuffer(t->gz, 128 * 1024);
	if (want_sha) {
		t->sha = EVP_MD_CTX_new();
		if (!t->sha || EVP_DigestInit_ex(t->sha, EVP_sha256(), NULL) != 1)
			return fail(t, "sha256 unavailable");
	}
	return 0;
}

/* A string value of a pax record into out; -1 when it holds a NUL or does
 * not fit. */
static int pax_str(const char *v, size_t n, char *out, size_t size)
{
	if (n >= size || memchr(v, '\0', n))
		return -1;
	memcpy(out, v, n);
	out[n] = '\0';
	return 0;
}

static int pax_num(const char *v, size_t n, int64_t *out)
{
	int64_t x = 0;
	size_t i = 0;

	if (!n)
		return -1;
	for (; i < n && v[i] != '.'; i++) {   /* mtime may have a fraction */
		if (v[i] < '0' || v[i] > '9' || x > (INT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (v[i] - '0');
	}
	*out = x;
	return 0;
}

struct pax {
	char path[OCI_TAR_NAME_MAX], link[OCI_TAR_NAME_MAX];
	int64_t size, uid, gid, mtime;   /* -1: not given */
};

/* "len key=value\n" records of a pax extended header. */
static int pax_parse(struct oci_tar *t, const char *m, size_t len, struct pax *px)
{
	size_t i = 0;

	while (i < len) {
		char *end;
		unsigned long rl = strtoul(m + i, &end, 10);
		const char *kv, *stop, *eq;
		size_t kn, vn;

		if (end == m + i || *end != ' ' || rl < 5 || rl > len - i)
			return fail(t, "bad tar archive: bad pax record");
		kv = end + 1;
		stop = m + i + rl - 1;
		if (*stop != '\n' || kv >= stop || !(eq = memchr(kv, '=', (size_t)(stop - kv))))
			return fail(t, "bad tar archive: bad pax record");
		kn = (size_t)(eq - kv);
		vn = (size_t)(stop - eq - 1);
		if (kn == 4 && !memcmp(kv, "path", 4) && pax_str(eq + 1, vn, px->path, sizeof px->path))
			return fail(t, "bad tar archive: pax path too long or with a NUL");
		if (kn == 8 && !memcmp(kv, "linkpath", 8) &&
		    pax_str(eq + 1, vn, px->link, sizeof px->link))
			return fail(t, "bad tar archive: pax linkpath too long or with a NUL");
		if ((kn == 4 && !memcmp(kv, "size", 4) && pax_num(eq + 1, vn, &px->size)) ||
		    (kn == 3 && !memcmp(kv, "uid", 3) && pax_num(eq + 1, vn, &px->uid)) ||
		    (kn == 3 && !memcmp(kv, "gid", 3) && pax_num(eq + 1, vn, &px->gid)) ||
		    (kn == 5 && !memcmp(kv, "mtime", 5) && pax_num(eq + 1, vn, &px->mtime)))
			return fail(t, "bad tar archive: bad pax number");
		i += rl;
	}
	return 0;
}

/* A metadata record's data (pax, GNU L/K) of size bytes, NUL-terminated. */
static char *meta(struct oci_tar *t, uint64_t size)
{
	char *m;

	if (size > META_MAX) {
		fail(t, "bad tar archive: a pax or long-name record over 64 KiB");
		return NULL;
	}
	m = malloc(size + 1);
	if (!m) {
		fail(t, "out of memory");
		return NULL;
	}
	if (take(t, m, size) != 0 || take(t, NULL, (512 - size % 512) % 512) != 0) {
		fail(t, "bad tar archive: cut short");
		free(m);
		return NULL;
	}
	m[size] = '\0';
	return m;
}

int oci_tar_next(struct oci_tar *t)
{
	struct pax px = { "", "", -1, -1, -1, -1 };
	unsigned char h[512];
	int zeros = 0;

	if (t->ended)
		return 0;
	if (t->left + t->pad && take(t, NULL, t->left + t->pad) != 0)
		return fail(t, "bad tar archive: cut short");
	t->left = t->pad = 0;
	for (;;) {
		uint64_t size, mode, uid, gid, mtime;
		size_t i;
		int rc = take(t, h, 512);
		char type;

		if (rc < 0)
			return -1;
		if (rc == 1) {   /* the stream ended: after one zero block is fine */
			if (!zeros)
				return fail(t, "bad tar archive: no end blocks");
			t->ended = 1;
			return 0;
		}
		for (i = 0; i < 512 && !h[i]; i++)
			;
		if (i == 512) {
			if (++zeros == 2) {
				t->ended = 1;
				return 0;
			}
			continue;
		}
		if (zeros)
			return fail(t, "bad tar archive: a header after an end block");
		if (!sbx_tar_checksum_ok(h))
			return fail(t, "bad tar archive: header checksum mismatch");
		if (sbx_tar_number(h + 124, 12, &size) || sbx_tar_number(h + 100, 8, &mode) ||
		    sbx_tar_number(h + 108, 8, &uid) || sbx_tar_number(h + 116, 8, &gid) ||
		    sbx_tar_number(h + 136, 12, &mtime))
			return fail(t, "bad tar archive: bad number field");
		type = h[156] ? (char)h[156] : '0';
		if (type == 'x' || type == 'g' || type == 'L' || type == 'K') {
			char *m = meta(t, size);
			int bad = 0;

			if (!m)
				return -1;
			if (type == 'x')
				bad = pax_parse(t, m, size, &px);
			else if (type == 'L' || type == 'K') {
				char *dst = type == 'L' ? px.path : px.link;
				if (strlen(m) >= OCI_TAR_NAME_MAX)
					bad = fail(t, "bad tar archive: long name too long");
				else
					strcpy(dst, m);
			}
			free(m);
			if (bad)
				return -1;
			continue;
		}
		if (px.path[0]) {
			strcpy(t->name, px.path);
		} else {
			sbx_tar_header_name(h, t->name, sizeof t->name);
		}
		if (px.link[0]) {
			strcpy(t->link, px.link);
		} else {
			memcpy(t->link, h + 157, 100);
			t->link[100] = '\0';
		}
		if (px.size >= 0)
			size = (uint64_t)px.size;
		t->type = type == '7' ? '0' : type;
		t->mode = (unsigned)(mode & 07777);
		t->uid = px.uid >= 0 ? px.uid : (int64_t)(uid & 0xffffffffu);
		t->gid = px.gid >= 0 ? px.gid : (int64_t)(gid & 0xffffffffu);
		t->mtime = px.mtime >= 0 ? px.mtime : (int64_t)(mtime & 0x7fffffffffffll);
		/* links, directories and devices carry no data whatever size says */
		if (t->type == '1' || t->type == '2' || t->type == '3' || t->type == '4' ||
		    t->type == '5' || t->type == '6')
			size = 0;
		if (size > t->cap) {
			t->over = 1;
			return fail(t, "layer over the size cap (an entry's size)");
		}
		t->size = t->left = size;
		t->pad = (512 - size % 512) % 512;
		return 1;
	}
}

ssize_t oci_tar_read(struct oci_tar *t, void *buf, size_t n)
{
	if (n > t->left)
		n = (size_t)t->left;
	if (!n)
		return 0;
	if (take(t, buf, n) != 0)
		return fail(t, "bad tar archive: cut short");
	t->left -= n;
	return (ssize_t)n;
}

int oci_tar_finish(struct oci_tar *t, unsigned char sha[32])
{
	int rc = 0;
	unsigned char buf[16384];

	/* the rest (the end blocks' record padding) belongs to the diff_id */
	for (;;) {
		int k = gzread(t->gz, buf, sizeof buf);
		if (k < 0) {
			rc = fail(t, "bad compressed data");
			break;
		}
		if (k == 0)
			break;
		t->read += (uint64_t)k;
		if (t->read > t->cap) {
			t->over = 1;
			rc = fail(t, "layer over the size cap (uncompressed bytes)");
			break;
		}
		if (t->sha)
			EVP_DigestUpdate(t->sha, buf, (size_t)k);
	}
	if (!rc && t->sha && sha) {
		unsigned len = 32;
		EVP_DigestFinal_ex(t->sha, sha, &len);
	}
	oci_tar_close(t);
	return rc;
}

void oci_tar_close(struct oci_tar *t)
{
	if (t->gz)
		gzclose(t->gz);
	t->gz = NULL;
	if (t->sha)
		EVP_MD_CTX_free(t->sha);
	t->sha = NULL;
}
