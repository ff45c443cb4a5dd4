/* A decrypted connection's two streams relayed as they are, after an
 * HTTP 101 (rn_egress_relay.c). */
#ifndef RN_EGRESS_RELAY_H
#define RN_EGRESS_RELAY_H

#include <stddef.h>

#include <openssl/ssl.h>

struct eg_relay_end {
	int fd;
	SSL *ssl;                       /* NULL: plain TCP */
	const char *pre;                /* bytes read from this end already, for the other */
	size_t pre_len;
	unsigned long long *read;       /* bytes read from this end, or NULL */
	unsigned long long *written;    /* bytes written to it, or NULL */
};

/* Both ways until both ends closed: 0, or -1 on an error, a side gone or
 * both silent for idle_s seconds. The sockets are left non-blocking. */
int eg_relay_upgraded(struct eg_relay_end *a, struct eg_relay_end *b, int idle_s);

#endif
