/* The control API's image_import and image_pull operations (docs/runner.md):
 * each runs in a child process of its own, so an import never holds up the
 * runner's event loop (creates of other images, every other request). The
 * child takes the connection: it reads the upload's DATA frames to EOF into
 * an unlinked spool file in the store, imports it (rn_oci_import.c), writes
 * the one reply frame and exits; the runner reaps it with its sandboxes'
 * children. */
#ifndef RN_IMAGE_IMPORT_H
#define RN_IMAGE_IMPORT_H
#include <cJSON.h>

#include "rn_conn.h"

/* The control API's error code of an import's or pull's errno
 * (rn_oci_import.h): invalid, conflict, insufficient_storage, too_large,
 * pull_failed, internal. */
const char *rn_image_err_code(int e);
void rn_image_import_op(struct runner *r, struct rn_conn *c, const cJSON *req, int pull);
#endif
