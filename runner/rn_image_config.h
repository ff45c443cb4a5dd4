/* An imported image's command defaults (its config.json beside the
 * rootfs, written by rn_oci_import.c) applied to a sandbox at create: the
 * image's Env under the sandbox's own env (a name the create gives wins;
 * a command's own env wins over both in the agent), its WorkingDir as the
 * agent's default directory. An image without config.json (the default
 * image) changes nothing. */
#ifndef RN_IMAGE_CONFIG_H
#define RN_IMAGE_CONFIG_H
#include "runner.h"
#include "rn_spec.h"

/* 0, or -1 with err (EINVAL) when the image's config.json is unreadable or
 * the merged env passes RN_MAX_ENV / RN_ENV_BYTES. */
int rn_image_config_apply(const struct runner *r, struct rn_spec *spec, struct sbx_err *err);
#endif
