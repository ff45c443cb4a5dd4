/* An image's rootfs composed from its layers, lowest first: a hardlink
 * farm. Each layer's files are linked (never copied) into the rootfs, so
 * a layer two images share takes its disk once; directories are the
 * rootfs's own (their owner and mode from the topmost layer that has
 * them). Whiteouts remove what lower layers put there; an opaque marker
 * empties the directory first. The result is a plain directory tree that
 * both drivers take as the sandbox's read-only lower layer. */
#ifndef RN_OCI_COMPOSE_H
#define RN_OCI_COMPOSE_H
#include "sbx_err.h"

/* Lay layer (a directory descriptor of an unpacked layer) over rootfs. 0,
 * or -1 with err. */
int oci_compose_layer(int rootfs, int layer, struct sbx_err *err);
/* Remove name under dir, recursively, by descriptors, never following a
 * symlink. 0 (also when it is absent), or -1 with errno. */
int oci_remove_at(int dir, const char *name);
#endif
