/* Sockets inside a jail's network namespace: a TCP connection to a guest
 * port (the driver's open_port), the rtnetlink socket that brings its
 * loopback up. */
#ifndef JAIL_PORT_H
#define JAIL_PORT_H

#include "runner.h"

/* Create a socket in the network namespace of sb->pid and start connecting
 * it to 127.0.0.1:port there. Returns the fd (non-blocking, close-on-exec),
 * or -1 with err (code ECONNREFUSED when nothing listens). */
int jail_open_port(struct rn_sandbox *sb, int port, struct sbx_err *err);
/* socket(domain, type, protocol) made in the network namespace of sb->pid
 * (the runner enters it for the call alone). The fd, or -1 with err. */
int jail_netns_socket(const struct rn_sandbox *sb, int domain, int type, int protocol,
		      struct sbx_err *err);

#endif
