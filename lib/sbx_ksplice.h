/* Two-way relay between two non-blocking TCP sockets through the kernel:
 * splice(2) from one socket into a pipe, and from that pipe into the
 * other socket, so the bytes never cross into the process (no copies, one
 * syscall each way per batch). The same contract as sbx_splice.h (the
 * userland relay): the caller owns the descriptors and the event loop,
 * reads a side when the loop says so (sbx_ksplice_read), lets
 * sbx_ksplice_step write and pass EOFs on, and asks sbx_ksplice_events
 * what to wait for next.
 *
 * Side A's bytes travel in the pipe toward B and side B's in the pipe
 * toward A. A side is read only while the pipe toward the other side
 * holds fewer than cap bytes and took the last read whole, so a slow
 * reader holds back its peer (TCP backpressure) instead of growing
 * memory: at most cap bytes (plus the pipe's slack) wait per direction.
 * An EOF read from one side becomes shutdown(SHUT_WR) of the other once
 * the bytes before it are written; the relay is over when both
 * directions were shut down. */
#ifndef SBX_KSPLICE_H
#define SBX_KSPLICE_H

#include <stddef.h>

#include "sbx_splice.h"         /* enum sbx_splice_side, SBX_SPLICE_IN/OUT */

struct sbx_ksplice {
	int pipe[2][2];          /* [side]: the pipe toward side, [0] read end, [1] write end */
	size_t pending[2];       /* bytes in the pipe toward side */
	size_t cap[2];           /* most bytes queued toward side */
	int full[2];             /* the pipe toward side refused a read: wait for a write */
	int eof[2];              /* that side's read direction ended */
	int shut[2];             /* we shut down the write direction to it */
	int gone[2];             /* that side can take nothing more: never written */
};

/* Two pipes of about cap bytes each. 0, or -1 with errno (the struct is
 * then safe to sbx_ksplice_free). */
int sbx_ksplice_init(struct sbx_ksplice *s, size_t cap);
void sbx_ksplice_free(struct sbx_ksplice *s);

/* Let the pipe toward side hold about cap bytes, more than it holds now
 * (for a direction that moves bulk: fewer, larger splices). 0, or -1 with
 * errno when the kernel refuses (the pipe keeps its size and cap). */
int sbx_ksplice_grow(struct sbx_ksplice *s, enum sbx_splice_side side, size_t cap);

/* Queue len bytes (read before the relay began, e.g. a peeked request
 * head) toward side, ahead of anything spliced. At most cap bytes, into
 * an empty pipe. 0, or -1 with errno. */
int sbx_ksplice_queue(struct sbx_ksplice *s, enum sbx_splice_side side, const void *p,
		      size_t len);

/* One splice from side's fd into the pipe toward the other side, at most
 * its room. Returns the bytes moved, 0 at EOF, -1 on a read error, -2
 * when nothing moved now (the socket is empty or the pipe full). EOF and
 * errors end that side's reading. */
long sbx_ksplice_read(struct sbx_ksplice *s, enum sbx_splice_side side, int fd);

/* Write what waits toward side into its fd. 0, or -1 on a write error
 * other than EAGAIN. */
int sbx_ksplice_flush(struct sbx_ksplice *s, enum sbx_splice_side side, int fd);

/* Write what each side's fd takes, then pass on any EOF whose bytes are
 * all written. 1 while the relay goes on, 0 when it is over, -1 on a
 * write error (the caller closes both). */
int sbx_ksplice_step(struct sbx_ksplice *s, int fd_a, int fd_b);

/* Side can take nothing more (it hung up): what waits for it is dropped
 * and it counts as shut down. */
void sbx_ksplice_gone(struct sbx_ksplice *s, enum sbx_splice_side side);

/* SBX_SPLICE_IN while side may be read (not at EOF, room toward the other
 * side), SBX_SPLICE_OUT while bytes wait for it. */
unsigned sbx_ksplice_events(const struct sbx_ksplice *s, enum sbx_splice_side side);

#endif
