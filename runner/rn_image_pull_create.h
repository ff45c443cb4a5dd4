/* A create that names an image by registry reference ("image":
 * "registry:5000/app:1.2") which this runner lacks: the runner pulls it
 * (rn_oci_pull.c, in a child process of its own: the event loop and every
 * other request go on) and the create waits, parked, for the pull's end.
 * Creates of the same reference share one pull. The image is kept under a
 * name made from the reference (rn_image_pull_name) with the reference
 * beside it, so the next create finds it (rn_images_by_ref). */
#ifndef RN_IMAGE_PULL_CREATE_H
#define RN_IMAGE_PULL_CREATE_H
#include <sys/types.h>

#include <cJSON.h>

#include "rn_conn.h"

/* The local name of a pulled reference: its last path component made a
 * name (at most 14 of a-z 0-9 . _ -), a '-' and 12 hex of a hash of the
 * whole reference: "app-1.2-3f09a1c4b2d7". Fits 33 bytes. */
void rn_image_pull_name(const char *ref, char *name, size_t n);
/* Park c's create (req, copied) on the pull of ref, started here unless
 * one is in flight. On its end resume(r, c, req, NULL) is called for each
 * waiting create when it succeeded; each gets the pull's error otherwise. */
void rn_image_pull_for_create(struct runner *r, struct rn_conn *c, const cJSON *req,
			      const char *ref, rn_conn_resume_fn resume);
/* pid was reaped with wait status st: 1 when it was a create's pull (its
 * creates resumed or answered), 0 otherwise. */
int rn_image_pull_reaped(struct runner *r, pid_t pid, int st);
#endif
