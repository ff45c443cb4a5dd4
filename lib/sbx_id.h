/* Unguessable, DNS-safe identifiers: prefix + lowercase base32 of CSPRNG
 * bytes (getrandom). */
#ifndef SBX_ID_H
#define SBX_ID_H

#include <stddef.h>

#define SBX_ID_RANDOM_CHARS 24   /* 24 base32 chars = 120 random bits */

/* Write prefix followed by SBX_ID_RANDOM_CHARS random [a-z2-7] characters
 * to out (NUL-terminated). Returns 0, or -1 if out is too small or the
 * kernel's random source fails. */
int sbx_id_new(const char *prefix, char *out, size_t outlen);

/* 1 if s is prefix followed by exactly SBX_ID_RANDOM_CHARS of [a-z2-7]. */
int sbx_id_valid(const char *prefix, const char *s);

#endif
