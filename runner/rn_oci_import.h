/* Importing an image into the image store: an OCI image layout or a
 * `docker save` archive (a tar, plain or gzip) becomes <image_dir>/<name>/
 * {rootfs,config.json}. Layers are kept once, by diff_id, in
 * <image_dir>/.layers/sha256/<hex>/ and the rootfs is a hardlink farm of
 * them (rn_oci_compose.h). Everything is built under <image_dir>/.tmp and
 * renamed into place last: an image is whole or absent. Blocking: the
 * runner calls it in a child process (rn_image_import.c), never on its
 * event loop. */
#ifndef RN_OCI_IMPORT_H
#define RN_OCI_IMPORT_H
#include <stdint.h>

#include <cJSON.h>

#include "sbx_err.h"

struct oci_import_opts {
	const char *image_dir;
	uint64_t store_cap;             /* bytes the whole store may take; 0: no cap */
	uint64_t max_bytes;             /* the archive, and each layer uncompressed */
	const char *ref;                /* a pull's registry reference, kept in
					 * <name>/ref (NULL: an upload) */
};

/* Import the archive read from fd as image name. *out (caller frees): what
 * was imported. 0, or -1 with err: EINVAL (a bad or hostile archive, a bad
 * name), EEXIST (the name is taken), ENOSPC (the store's cap), EFBIG (over
 * max_bytes), else the failed step's errno. On failure the store is as it
 * was (a layer another image may use stays). */
int oci_import_archive(const struct oci_import_opts *o, int fd, const char *name,
		       cJSON **out, struct sbx_err *err);
/* The same from an OCI layout already in the directory layout (a pull's). */
int oci_import_layout(const struct oci_import_opts *o, const char *layout, const char *name,
		      cJSON **out, struct sbx_err *err);
/* The bytes the store takes on disk (hardlinks counted once). 0, or -1. */
int oci_store_usage(const char *image_dir, uint64_t *bytes);
#endif
