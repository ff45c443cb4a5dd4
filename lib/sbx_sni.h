/* The name a connection asks for, read from its first bytes before any of
 * them is relayed: the server_name of a TLS ClientHello, or the Host of an
 * HTTP/1 request head. The runner's egress proxy decides on it (runner/
 * rn_egress.c); these parsers see bytes a sandbox chose, so they read only
 * inside [p, p+n) and accept one clear reading or none. */
#ifndef SBX_SNI_H
#define SBX_SNI_H
#include <stddef.h>

enum {
	SBX_PEEK_ECH = -3,      /* a ClientHello offering Encrypted Client Hello */
	SBX_PEEK_NONAME = -2,   /* well formed, but no name (no SNI, no Host) */
	SBX_PEEK_BAD = -1,      /* not this protocol, malformed or ambiguous */
	SBX_PEEK_MORE = 0,      /* incomplete: read more */
	SBX_PEEK_NAME = 1,      /* out holds the name */
};

/* The longest name either parser gives (a DNS name's 253, plus the NUL). */
#define SBX_PEEK_NAME_MAX 254

/* The SNI host_name of the TLS ClientHello at [p, p+n), which must lie in
 * the first record. On SBX_PEEK_NAME out (at least SBX_PEEK_NAME_MAX
 * bytes) holds it lower-cased, without a trailing dot. Two server_name
 * extensions, two host_names, or a name of other characters than
 * letters, digits, '-', '_' and '.' are SBX_PEEK_BAD. */
int sbx_sni_peek(const unsigned char *p, size_t n, char *out);

/* The Host of the HTTP/1.x request head at [p, p+n) (its end, an empty
 * line, within SBX_HOST_HEAD_MAX bytes), lower-cased, without a port or a
 * trailing dot. Two Host headers, an absolute-form target naming another
 * authority, a head longer than SBX_HOST_HEAD_MAX, or a name as for
 * sbx_sni_peek's are SBX_PEEK_BAD. */
#define SBX_HOST_HEAD_MAX 16384
int sbx_host_peek(const unsigned char *p, size_t n, char *out);

/* 1 when s is a name both parsers could give: 1 to 253 of [a-z0-9._-],
 * no empty label. */
int sbx_peek_name_ok(const char *s);

#endif
