/* The runner's own A lookups through the host's resolver: the first IPv4
 * nameserver of /etc/resolv.conf, or SANDBOX_DNS_UPSTREAM ("IP" or
 * "IP:PORT") when set (the tests' fake internet). Used by the sandboxes'
 * resolver (rn_dns.c) and the egress proxy (rn_egress.c); never a
 * hard-coded public address. One UDP socket for the runner, on its loop. */
#ifndef RN_RESOLVE_H
#define RN_RESOLVE_H

#include <stdint.h>

#include "sbx_err.h"

/* rcode -1: no usable answer (timeout, upstream unreachable); else the
 * upstream's rcode with its A records (network byte order). */
typedef void (*rn_lookup_cb)(void *ctx, int rcode, const uint32_t *addrs, int n,
			     uint32_t ttl);

struct rn_lookup;

/* Start a lookup of name's A records; cb runs later from the loop, exactly
 * once unless cancelled. NULL with err when it cannot start. */
struct rn_lookup *rn_resolve_a(const char *name, rn_lookup_cb cb, void *ctx,
			       struct sbx_err *err);
void rn_resolve_cancel(struct rn_lookup *l);
/* Resend or give up on lookups past their time; ms until it wants to run
 * again (-1: nothing pending). */
int rn_resolve_sweep(void);

#endif
