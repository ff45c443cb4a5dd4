/* The one check of a path named inside an archive (a tar entry, a link
 * target, a file an image manifest names), shared by the gateway's
 * @vercel/sandbox writeFiles reader and the runner's image unpacker. */
#ifndef SBX_TARPATH_H
#define SBX_TARPATH_H
#include <stddef.h>

/* 0 when name is a relative path with no ".." component and at least one
 * name; writes it normalised (no "./", no doubled or trailing '/') to out.
 * -1 for an absolute path, "..", an empty name or one that does not fit. */
int sbx_tar_path_clean(const char *name, char *out, size_t n);
#endif
