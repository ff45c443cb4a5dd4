/* Which Origins POST and DELETE /mcp accept (gw_mcp_origin.c): the
 * gateway's own URL, --public-url and --mcp-allowed-origins, never one
 * made from the request's Host header. No lws here: tested alone
 * (tests/unit/test_gw_mcp_origin.c). */
#ifndef GW_MCP_ORIGIN_H
#define GW_MCP_ORIGIN_H
#include <stddef.h>
#include "sbx_err.h"

#define GW_MCP_MAX_ORIGINS 32   /* --public-url and --mcp-allowed-origins together */

/* Set the accepted origins, once at start: listen_addr is --listen-address
 * (its host names, with the port and scheme the gateway serves, are its
 * own URL); public_url and allowed (comma-separated) may be NULL. 0, or -1
 * with err naming the flag and the value that is not an origin. */
int gw_mcp_origins_configure(const char *listen_addr, const char *public_url,
			     const char *allowed, struct sbx_err *err);

/* 1 when the Origin header's value (n bytes) is one of them. tls and port
 * are what the listener serves now (port 0 at start means the bound one). */
int gw_mcp_origin_ok(const char *origin, size_t n, int tls, int port);
#endif
