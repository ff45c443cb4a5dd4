/* The images this runner starts sandboxes from (rn_images.c). */
#ifndef RN_IMAGES_H
#define RN_IMAGES_H
#include <stddef.h>
#include <cJSON.h>

struct runner;

/* [{"name","created_at","os","runtimes":{"node","python"}}...] of every
 * <image_dir>/<name>/rootfs, by name; read from the image's files. */
cJSON *rn_images_json(const struct runner *r);
/* The names of the images, comma-separated, into out ("" when none). */
void rn_images_names(const struct runner *r, char *out, size_t n);
/* The upstream version of package pkg in a dpkg status file's text
 * (p[0..n)): "18.20.4" of "18.20.4+dfsg-1~deb12u1"; 0, or -1 when absent. */
int rn_images_dpkg_version(const char *p, size_t n, const char *pkg, char *out, size_t outlen);
#endif
