/* A TCP socket inside a jail's network namespace (the driver's open_port). */
#ifndef JAIL_PORT_H
#define JAIL_PORT_H

#include "runner.h"

/* Create a socket in the network namespace of sb->pid and start connecting
 * it to 127.0.0.1:port there. Returns the fd (non-blocking, close-on-exec),
 * or -1 with err (code ECONNREFUSED when nothing listens). */
int jail_open_port(struct rn_sandbox *sb, int port, struct sbx_err *err);

#endif
