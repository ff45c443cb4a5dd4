/* One layer (a tar, gzip or plain) unpacked into a directory of its own:
 * the only place image bytes become files (docs/security.md, "Image
 * layers"). Whiteouts stay in the layer as empty marker files (.wh.NAME,
 * .wh..wh..opq); rn_oci_compose.c applies them. */
#ifndef RN_OCI_LAYER_H
#define RN_OCI_LAYER_H
#include <stddef.h>
#include <stdint.h>

#include "sbx_err.h"

struct oci_layer_stats {
	uint64_t bytes;                 /* file data written */
	uint64_t entries;
	uint64_t stripped;              /* setuid/setgid bits taken off */
};

/* Unpack the tar read from src into the empty directory dir (a descriptor
 * the caller keeps). cap bounds the uncompressed stream; *budget (NULL: none)
 * is what the image store may still take, lowered by what is written.
 * diff_id receives the sha256 of the uncompressed stream. 0, or -1 with err:
 * EINVAL for a hostile or broken layer (the message names the entry),
 * EFBIG past cap, ENOSPC past the budget, else the errno of the failed
 * step. What was written stays in dir for the caller to remove. */
int oci_layer_unpack(int src, int dir, uint64_t cap, uint64_t *budget,
		     unsigned char diff_id[32], struct oci_layer_stats *st,
		     struct sbx_err *err);
/* The parent directory of rel (a cleaned relative path) under root,
 * opened without following anything (created 0755 as needed when create);
 * its last component into last. A descriptor, or -1 with errno
 * (ELOOP/ENOTDIR when a component is a symlink or a file). */
int oci_open_parent(int root, const char *rel, char *last, size_t lastsz, int create);
#endif
