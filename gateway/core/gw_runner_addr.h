/* A runner's address as an operator writes it (gw_runner_addr.c):
 * `unix:/path` or `/path` (a runner on this host), `host:port` or
 * `[v6]:port` with a numeric address (a runner on another host, reached
 * over TCP + mutual TLS). Used for --runner-socket, the --runners list and
 * the addresses discovery resolves. */
#ifndef GW_RUNNER_ADDR_H
#define GW_RUNNER_ADDR_H
#include "gw_runner.h"
#include "sbx_err.h"

/* Fill rn's kind, path or sa/salen, and addr (the form logs show:
 * "unix:/path", "10.0.0.2:7443", "[fd00::1]:7443"); name, state and since
 * are left alone. 0, or -1 with err saying what is wrong with text. */
int gw_runner_parse(struct gw_runner *rn, const char *text, struct sbx_err *err);
/* Whether a --runner-socket value names a TCP (TLS) runner rather than a
 * socket path: HOST:PORT or [V6]:PORT, not starting with '/' or unix:. */
int gw_runner_socket_is_tcp(const char *text);
#endif
