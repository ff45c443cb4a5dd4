/* The back-end side of the vhost-user protocol (QEMU's
 * docs/interop/vhost-user.rst) for a vsock device: one front end on one
 * UNIX socket, features, the memory table (fds mapped here), the two
 * device rings (receive 0, transmit 1: the event ring stays in the front
 * end) with their kick and call eventfds, and the config space (the
 * guest's CID). The front end is QEMU, started by the runner, but its
 * messages are still checked for sizes and indexes. */
#ifndef VU_PROTO_H
#define VU_PROTO_H

#include <stdint.h>

#include "vu_mem.h"
#include "vu_ring.h"

#define VU_NQ 2
#define VU_RX 0
#define VU_TX 1

struct vu_dev {
	int sock;                   /* the front end's connection, -1 none */
	uint64_t features;          /* acked by SET_FEATURES */
	uint64_t proto;             /* acked by SET_PROTOCOL_FEATURES */
	uint64_t guest_cid;
	struct vu_mem mem;
	struct vu_ring ring[VU_NQ];
	int kick[VU_NQ], call[VU_NQ];
	int enabled[VU_NQ];
	/* the owner's hooks: a kick fd to watch (old one -1 or new one -1),
	 * and the rings stopping (every connection must go) */
	void (*watch_kick)(void *owner, int q, int old_fd, int new_fd);
	void (*rings_stopped)(void *owner);
	void *owner;
};

void vu_dev_init(struct vu_dev *d, uint64_t guest_cid);

/* Read and handle one message from d->sock. Returns 0, or -1 when the
 * front end closed or broke the protocol (logged; the caller ends). */
int vu_dev_handle(struct vu_dev *d);

/* Whether ring q is set up, started and usable. */
int vu_dev_ring_live(const struct vu_dev *d, int q);

/* Signal the guest that ring q has used entries (if it wants to know). */
void vu_dev_call(struct vu_dev *d, int q);

void vu_dev_free(struct vu_dev *d);

#endif
