/* The images this runner starts sandboxes from (rn_images.c). */
#ifndef RN_IMAGES_H
#define RN_IMAGES_H
#include <stddef.h>
#include <cJSON.h>

struct runner;

/* [{"name","created_at","os","digest","size","runtimes":{"node","npm",
 * "corepack","python"}}...] of every <image_dir>/<name>/rootfs, by name;
 * read from the image's files (digest and size when its stamp has them). */
cJSON *rn_images_json(const struct runner *r);
/* The image a pull of registry reference ref made (its <name>/ref): 1
 * with its name in name, 0 when this runner has none. */
int rn_images_by_ref(const struct runner *r, const char *ref, char *name, size_t n);
/* The names of the images and the references of the pulled ones, at most
 * 64 strings: what a status tells a gateway's placement (a create naming
 * one of them goes where it is). */
cJSON *rn_images_held(const struct runner *r);
/* The names of the images, comma-separated, into out ("" when none). */
void rn_images_names(const struct runner *r, char *out, size_t n);
/* The upstream version of package pkg in a dpkg status file's text
 * (p[0..n)): "18.20.4" of "18.20.4+dfsg-1~deb12u1"; 0, or -1 when absent. */
int rn_images_dpkg_version(const char *p, size_t n, const char *pkg, char *out, size_t outlen);
/* The value of "key=value" in a stamp's text p (NUL-terminated) into out:
 * 0, or -1 when absent, empty, longer than outlen - 1 or not printable. */
int rn_images_stamp_value(const char *p, const char *key, char *out, size_t outlen);
/* op image_delete {"name"}: the image's directory goes (renamed aside at
 * once, removed by a child process); conflict while a sandbox of this
 * runner not yet stopped uses it, not_found when there is none, invalid
 * for a bad name and for "default" (creates without an image need it). */
struct rn_conn;
struct cJSON;
void rn_images_delete(struct runner *r, struct rn_conn *c, const struct cJSON *req);
#endif
