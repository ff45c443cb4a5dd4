/* What every sandbox runs from, whatever its driver: the image's rootfs,
 * and the runtime directory (the agent, the shared objects it links and
 * the host's ld.so) bound read-only at RN_RUNTIME_MOUNT, so the agent runs
 * on any image (the image need not ship libcjson). */
#ifndef RN_RUNTIME_H
#define RN_RUNTIME_H

#include <stddef.h>

#include "runner.h"

#define RN_RUNTIME_MOUNT "/.sandbox"
/* In the runtime dir: the agent's shared objects as ld.so's --preload
 * list (paths inside, space-separated). */
#define RN_RUNTIME_PRELOAD "preload"
#define RN_RUNTIME_PRELOAD_MAX 512

/* Copy the agent and the shared objects ldd lists (and ld.so) to dir.
 * loader receives the basename of the dynamic loader. 0, or -1 with err
 * saying "agent runtime: ... (is --agent right?)". */
int rn_runtime_prepare(const char *agent, const char *dir, char *loader,
		       size_t loader_len, struct sbx_err *err);

/* The basename of the ld.so a prepared runtime dir holds (a runtime
 * another driver prepared) into loader. 0, or -1 when there is none. */
int rn_runtime_find_loader(const char *dir, char *loader, size_t loader_len);

/* The preload list a prepared runtime dir holds into list (len bytes);
 * 0, or -1 with list "" when there is none (its libraries are then
 * searched for along the library path). */
int rn_runtime_preload(const char *dir, char *list, size_t len);
/* The image's rootfs (<image_dir>/<image>/rootfs) into rootfs; -1 with
 * err (EINVAL) when this runner has no such image. */
int rn_runtime_image(const struct runner *r, const char *image, char *rootfs,
		     size_t rootfs_len, struct sbx_err *err);

/* 0 when the runtime dir is there and its loader known (loader not ""),
 * else -1 with err (ENOENT). */
int rn_runtime_ready(const struct runner *r, const char *loader, struct sbx_err *err);

#endif
