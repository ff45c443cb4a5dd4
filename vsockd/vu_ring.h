/* A split virtqueue (virtio 1.2, 2.7) in guest memory, walked as the device.
 * The guest writes the descriptor table and the available ring while we
 * read them, so each descriptor is copied once before it is checked and
 * used, and every index and length is checked against the ring size and
 * the memory map: a head or next past the table, a chain longer than the
 * table (a loop), a buffer outside guest memory, an indirect descriptor
 * (not offered), a readable buffer after a writable one, or an available
 * index more than a ring ahead all mark the ring broken, and a broken ring
 * is never walked again (until the front end sets it up anew). */
#ifndef VU_RING_H
#define VU_RING_H

#include <stdint.h>
#include <sys/uio.h>

#include "vu_mem.h"

#define VU_RING_MAX_NUM 32768
#define VU_CHAIN_MAX 64       /* descriptors we take in one chain */

struct vu_chain {
	uint16_t head;
	unsigned n_out, n_in;             /* out: guest -> device; in: device -> guest */
	struct iovec out[VU_CHAIN_MAX];
	struct iovec in[VU_CHAIN_MAX];
	uint64_t out_len, in_len;
};

struct vu_ring {
	unsigned num;                     /* 0 until SET_VRING_NUM */
	uint64_t desc_qva, avail_qva, used_qva;
	void *desc, *avail, *used;        /* NULL until mapped */
	uint16_t last_avail;              /* next available entry to take */
	uint16_t used_idx;                /* next used entry to fill */
	int broken;
	const char *why;                  /* why broken, for the log */
};

/* Size check of SET_VRING_NUM: a power of two, 1..VU_RING_MAX_NUM. */
int vu_ring_num_ok(unsigned num);

/* Translate the three addresses (front-end virtual, SET_VRING_ADDR) through
 * mem, checking sizes and alignment. Returns 0, or -1 (and the ring stays
 * unmapped) when num is unset or an area is not whole inside one region. */
int vu_ring_map(struct vu_ring *r, const struct vu_mem *mem);

/* Take the next available chain into *c. Returns 1 when taken, 0 when the
 * ring has none, -1 when broken (r->why says why). */
int vu_ring_pop(struct vu_ring *r, const struct vu_mem *mem, struct vu_chain *c);

/* Give back the last chain taken, unused (it stays available). */
void vu_ring_unpop(struct vu_ring *r);

/* Return a chain to the guest with the bytes written into its buffers. */
void vu_ring_push(struct vu_ring *r, uint16_t head, uint32_t written);

/* Whether the guest wants an interrupt now (VRING_AVAIL_F_NO_INTERRUPT). */
int vu_ring_wants_call(const struct vu_ring *r);

/* Copy n bytes from a chain's readable buffers starting at offset off into
 * dst; returns the bytes copied (less when the chain is shorter). */
size_t vu_chain_read(const struct vu_chain *c, uint64_t off, void *dst, size_t n);

/* Copy n bytes into a chain's writable buffers starting at offset off;
 * returns the bytes copied (less when the buffers are shorter). */
size_t vu_chain_write(const struct vu_chain *c, uint64_t off, const void *src, size_t n);

#endif
