/* Tar headers read one way (their number fields, their checksum) and the
 * one check of a path named inside an archive (a tar entry, a link
 * target, a file an image manifest names), shared by the gateway's
 * @vercel/sandbox writeFiles reader and the runner's image unpacker. */
#ifndef SBX_TARPATH_H
#define SBX_TARPATH_H
#include <stddef.h>
#include <stdint.h>

/* 0 when name is a relative path with no ".." component and at least one
 * name; writes it normalised (no "./", no doubled or trailing '/') to out.
 * -1 for an absolute path, "..", an empty name or one that does not fit. */
int sbx_tar_path_clean(const char *name, char *out, size_t n);

/* A ustar header's number field of n bytes: octal digits (leading spaces,
 * ended by a space or NUL) or GNU base-256 for big values. 0, or -1 when
 * it is neither or does not fit 64 bits. */
int sbx_tar_number(const unsigned char *p, size_t n, uint64_t *out);
/* Whether the 512-byte header h carries the checksum it says. */
int sbx_tar_checksum_ok(const unsigned char *h);
/* The entry name of header h: ustar's prefix and name joined by '/', or
 * the name alone; cut to fit n bytes (a cut name fails the caller's
 * path check, never a buffer). */
void sbx_tar_header_name(const unsigned char *h, char *out, size_t n);
#endif
