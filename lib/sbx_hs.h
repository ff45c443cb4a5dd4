/* The hybrid-vsock handshake (docs/protocol.md): the host side writes
 * "CONNECT <port>\n", the guest answers "OK <port>\n". */
#ifndef SBX_HS_H
#define SBX_HS_H

#include <stddef.h>

#define SBX_HS_MAX 32   /* longest line accepted, newline included */

/* Parse a CONNECT line at the start of [p, p+n) (a trailing \r is
 * allowed). Returns the bytes it takes (> 0) with *port in 1..65535; 0 when
 * more bytes are needed; -1 when the input can never be a valid line. */
long sbx_hs_parse_connect(const void *p, size_t n, int *port);

#endif
