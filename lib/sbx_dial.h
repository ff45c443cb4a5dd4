/* The host side of the hybrid-vsock handshake (docs/protocol.md), the one
 * way the runner and the gateway reach a sandbox's agent socket: write
 * "CONNECT <port>\n", and the guest is reached once it answered exactly
 * "OK <port>\n" with the same port. A socket that accepted is not yet a
 * guest that answers (a microVM's host socket accepts before the guest is
 * up), so readiness is the answer, never the connect. */
#ifndef SBX_DIAL_H
#define SBX_DIAL_H

#include <stddef.h>

#define SBX_AGENT_PORT 1024     /* the agent's framed protocol */
#define SBX_DIAL_LINE_MAX 16    /* "OK 65535\n" and room for a \r */
/* What an agent started with --ready-fd writes there once it listens,
 * before it closes it: the jail's runner takes the byte for the
 * handshake's answer (the pipe is the agent's own, end to end). */
#define SBX_AGENT_READY_BYTE "l"

/* Connect to the guest socket at path (non-blocking, close-on-exec,
 * symlink-safe for its last component: sbx_unix_connect_last) and write
 * "CONNECT <port>\n". Returns the fd, or -1 with errno (ENOENT,
 * ECONNREFUSED: nothing listens yet; EINVAL: port out of 1..65535). */
int sbx_dial_start(const char *path, int port);

/* The guest's answer at the start of [p, p+n). Returns the length of the
 * line "OK <port>\n" (> 0; a \r before the \n is allowed) when it names
 * exactly port; 0 when more bytes are needed; -1 when the bytes can never
 * be that line (another word, another port, a malformed or long line). */
long sbx_dial_parse_ok(const void *p, size_t n, int port);

/* Read the answer on fd without blocking and without taking a byte past
 * the line (what follows is the stream). Returns 1 when answered, 0 when
 * not yet, -1 with errno: ECONNREFUSED (the guest said something else:
 * nothing listens on port), ECONNRESET (it closed before answering), or
 * recv's. */
int sbx_dial_finish(int fd, int port);

#endif
