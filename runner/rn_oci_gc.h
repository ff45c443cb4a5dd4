/* Garbage collection of the layer store: after an image is deleted, the
 * layers in <image_dir>/.layers/sha256/ that no image's config.json names
 * go. Runs under an exclusive flock of <image_dir>/.layers, which every
 * import holds shared from its start to its end (rn_oci_import.c): a
 * layer an import in flight found stored is never taken from under it.
 * Blocking: the runner calls it in the child that removes a deleted
 * image's tree (rn_images_delete.c). */
#ifndef RN_OCI_GC_H
#define RN_OCI_GC_H
#include "sbx_err.h"

/* Remove the unused layers of image_dir's store; *removed: how many. An
 * image whose config.json cannot be read or parsed stops it before
 * anything is removed (its layers are not known). 0 (also when there is
 * no layer store), or -1 with err. */
int oci_gc_layers(const char *image_dir, int *removed, struct sbx_err *err);
#endif
