/* A pulling tar reader for image layers and image archives: gzip or plain
 * (zlib's gzread passes a stream that is not gzip through as it is), ustar
 * with pax (path, linkpath, size, uid, gid, mtime) and GNU long names. Every
 * uncompressed byte is counted against a cap, so a decompression bomb stops
 * at the cap, and may be hashed (sha256: a layer's diff_id). It writes
 * nothing: what an entry means is the caller's (rn_oci_layer.c). */
#ifndef RN_OCI_TAR_H
#define RN_OCI_TAR_H
#include <stdint.h>
#include <sys/types.h>
#include <zlib.h>

#define OCI_TAR_NAME_MAX 4096

struct oci_tar {
	gzFile gz;
	void *sha;                      /* EVP_MD_CTX, NULL: no hash */
	uint64_t read, cap;             /* uncompressed bytes so far; the cap */
	uint64_t left, pad;             /* of the current entry's data */
	int ended;
	int over;                       /* failed for the cap */
	/* the current entry */
	char name[OCI_TAR_NAME_MAX], link[OCI_TAR_NAME_MAX];
	char type;                      /* '0' file ('7', '\0' too), '1' hardlink, '2'
					   symlink, '3' '4' devices, '5' dir, '6' fifo */
	unsigned mode;
	uint64_t size;
	int64_t uid, gid, mtime;
	char err[200];
};

/* Start reading fd (not taken: the caller closes it after oci_tar_close).
 * want_sha: hash the uncompressed stream. 0, or -1 (err). */
int oci_tar_open(struct oci_tar *t, int fd, uint64_t cap, int want_sha);
/* The next entry's header into t: 1, 0 at the end of the archive, -1 on a
 * bad archive or past the cap (t->err says which). The rest of the
 * previous entry's data is skipped. */
int oci_tar_next(struct oci_tar *t);
/* Up to n bytes of the current entry's data: the count, 0 at its end, -1. */
ssize_t oci_tar_read(struct oci_tar *t, void *buf, size_t n);
/* Read the stream to its end (the hash covers all of it), then the sha256
 * into sha (when hashed). 0, or -1 when the stream is bad or over the cap.
 * Frees everything either way. */
int oci_tar_finish(struct oci_tar *t, unsigned char sha[32]);
void oci_tar_close(struct oci_tar *t);
#endif
