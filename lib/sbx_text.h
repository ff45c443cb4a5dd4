/* Bytes as text: the inside of a JSON string, valid UTF-8, base64. Output
 * of commands and files is any bytes; these keep it whole (base64) or say
 * where it was not text (U+FFFD), never cut it at a NUL. */
#ifndef SBX_TEXT_H
#define SBX_TEXT_H

#include <stddef.h>
#include "sbx_buf.h"

/* Append p[0..n) as the inside of a JSON string: UTF-8 kept, invalid
 * bytes U+FFFD, control bytes escaped (NUL as \u0000). 0, or -1 when b is
 * full or out of memory. */
int sbx_text_json(struct sbx_buf *b, const void *p, size_t n);

/* p[0..n) as a malloc'd valid UTF-8 C string (U+FFFD for invalid bytes
 * and NUL), or NULL out of memory. */
char *sbx_text_utf8(const void *p, size_t n);

/* Append p[0..n) as base64 (RFC 4648, padded). 0, or -1 as above. */
int sbx_text_base64(struct sbx_buf *b, const void *p, size_t n);

/* The same as a malloc'd C string, or NULL out of memory. */
char *sbx_text_base64_str(const void *p, size_t n);

#endif
