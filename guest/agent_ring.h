/* Per-command output retention: a fixed-capacity byte ring holding records
 * [len:4 BE][tag:1][bytes] in arrival order: each is the guest protocol
 * frame of its chunk (sbx_frame.h's header), so whole records go to a
 * connection from where they lie (ag_ring_span). Offsets count only output
 * bytes (both streams), so a reader can resume at any byte. When full,
 * whole oldest records are dropped; a reader whose cursor was dropped is
 * told how many bytes it missed. Pure: no I/O, unit-tested. */
#ifndef AGENT_RING_H
#define AGENT_RING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define AG_RING_REC_HDR 5u

struct ag_ring {
	unsigned char *buf;
	size_t cap;          /* bytes in buf */
	uint64_t head;       /* ring position one past the newest record */
	uint64_t tail;       /* ring position of the oldest record */
	uint64_t tail_off;   /* output offset of the oldest record's first byte */
	uint64_t total;      /* output bytes ever pushed (offset of next byte) */
};

/* A reader's position: the record at ring position pos, skip bytes into it,
 * which is output offset off. */
struct ag_cursor {
	uint64_t pos;
	uint64_t off;
	uint32_t skip;
};

/* cap must exceed the largest chunk pushed plus AG_RING_REC_HDR. Memory is
 * allocated once; untouched pages cost nothing. Returns 0 or -1 (ENOMEM). */
int ag_ring_init(struct ag_ring *r, size_t cap);
void ag_ring_free(struct ag_ring *r);

/* Give back unused capacity once no more output will come (the command
 * ended): the buffer becomes exactly as large as what is retained. Cursors
 * stay valid. Returns 0, or -1 (ENOMEM; the ring is unchanged). */
int ag_ring_shrink(struct ag_ring *r);

/* Append one chunk, dropping the oldest records to make room. Returns 0, or
 * -1 (EMSGSIZE) if the chunk can never fit. */
int ag_ring_push(struct ag_ring *r, unsigned tag, const void *p, size_t n);

/* Append a chunk read straight into the ring: make room for up to n bytes
 * (dropping the oldest records, as push does) and say where they go, in
 * iov[0] and, where the ring wraps, iov[1]; returns how many of the two,
 * or -1 (EMSGSIZE) if n can never fit. Then ag_ring_commit the k <= n
 * bytes written there (none: nothing is added). */
int ag_ring_reserve(struct ag_ring *r, size_t n, struct iovec iov[2]);
void ag_ring_commit(struct ag_ring *r, unsigned tag, size_t k);

/* Whole records from c on, as they lie: up to max bytes (the first record
 * whatever its size) in iov[0] and, where the ring wraps, iov[1] (*niov).
 * Returns their bytes; 0 when c is caught up, fell out of retention, or
 * is inside a record (skip: ag_ring_read that one). */
size_t ag_ring_span(const struct ag_ring *r, const struct ag_cursor *c, size_t max,
		    struct iovec iov[2], int *niov);

/* k bytes of what ag_ring_span gave went out: c moves past them. A
 * record cut by k is passed too, and the rest of its bytes (header
 * included) are copied to rest, which holds a record's worth; returns
 * their count (0 when k ended on a record's end). */
size_t ag_ring_sent(const struct ag_ring *r, struct ag_cursor *c, size_t k, unsigned char *rest);

/* Position c at output offset want (clamped to [tail_off, total]). Returns
 * the number of bytes below the oldest retained byte that were asked for but
 * are gone (0 if none). */
uint64_t ag_ring_seek(const struct ag_ring *r, uint64_t want, struct ag_cursor *c);

/* If c fell out of retention, move it to the oldest retained record and
 * return how many bytes it missed; else 0. */
uint64_t ag_ring_catch(const struct ag_ring *r, struct ag_cursor *c);

/* Copy up to max bytes of the chunk at c into out, set *tag, advance c.
 * Returns bytes copied (0 = caught up). If c fell out of retention, first
 * repositions c at the oldest record and reports the lost byte count in
 * *lost (else *lost = 0); check *lost before using the data. */
size_t ag_ring_read(const struct ag_ring *r, struct ag_cursor *c, unsigned *tag,
		    void *out, size_t max, uint64_t *lost);

#endif
