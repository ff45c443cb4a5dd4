/* Pulling an image from a registry: Debian's skopeo copies it into an OCI
 * layout under the store's staging dir, and rn_oci_import.c imports that
 * (the one unpacker). Blocking: called in a child process or the CLI. */
#ifndef RN_OCI_PULL_H
#define RN_OCI_PULL_H
#include <cJSON.h>

#include "rn_oci_import.h"

/* Pull ref as image name. TLS is verified except for a loopback registry
 * (127.0.0.0/8, localhost, [::1]) or when insecure. 0, or -1 with err as
 * oci_import_archive, plus EIO when skopeo failed (its last words in the
 * message). */
int oci_pull(const struct oci_import_opts *o, const char *ref, const char *name, int insecure,
	     cJSON **out, struct sbx_err *err);
#endif
