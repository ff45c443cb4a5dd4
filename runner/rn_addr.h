/* The address of --listen-tls: a numeric IPv4 address or a bracketed IPv6
 * address, then ':' and a port (0.0.0.0:7443, 10.1.2.3:7443, [::]:7443,
 * [fd00::1]:7443). Numeric only: the runner binds what it is told and
 * resolves no names at start. */
#ifndef RN_ADDR_H
#define RN_ADDR_H

#include <sys/socket.h>

#include "sbx_err.h"

/* Parse s into *ss (*len its size). 0, or -1 with err (EINVAL) saying what
 * is wrong with s. */
int rn_addr_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len,
		  struct sbx_err *err);

#endif
