/* Server name from a TLS ClientHello, read before the handshake (the front
 * door peeks at it to choose between the API and the preview proxy). */
#ifndef GW_SNI_H
#define GW_SNI_H
#include <stddef.h>

/* Look for the SNI host_name in the first TLS record at [p, p+n).
 * Returns 1 and a NUL-terminated lower-case name in out, 0 when the record
 * is incomplete, -1 when it is not a ClientHello, is malformed, or has no
 * (usable) server name. Reads only inside [p, p+n). */
int gw_sni_parse(const unsigned char *p, size_t n, char *out, size_t outsz);

#endif
