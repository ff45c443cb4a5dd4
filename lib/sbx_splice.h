/* Two-way byte relay between two non-blocking stream sockets, with bounded
 * buffers and half-close: the byte accounting and the order of shutdowns
 * that the agent's TCP forward and the runner's connect splice share. The
 * caller owns the descriptors and the event loop: it reads a side when
 * the loop says so (sbx_splice_read), then lets sbx_splice_step write and
 * pass EOFs on, and asks sbx_splice_events what to wait for next.
 *
 * Side A's bytes travel in *to_b, side B's in *to_a; the buffers are the
 * caller's (they may hold bytes from before the splice began). A side is
 * read only while the buffer toward the other side has room below cap, so
 * a slow reader holds back its peer instead of growing memory. An EOF
 * read from one side becomes shutdown(SHUT_WR) of the other once the
 * bytes before it are written; the splice is over when both directions
 * were shut down. */
#ifndef SBX_SPLICE_H
#define SBX_SPLICE_H

#include <stddef.h>
#include <stdint.h>

#include "sbx_buf.h"

enum sbx_splice_side { SBX_SPLICE_A, SBX_SPLICE_B };

struct sbx_splice {
	struct sbx_buf *to_a, *to_b;
	size_t cap;              /* most bytes buffered toward one side */
	int eof[2];              /* that side's read direction ended */
	int shut[2];             /* we shut down the write direction to it */
	int gone[2];             /* that side can take nothing more: never written */
};

void sbx_splice_init(struct sbx_splice *s, struct sbx_buf *to_a, struct sbx_buf *to_b,
		     size_t cap);

/* One read from side's fd into the buffer toward the other side, at most
 * its room. Returns the bytes read, 0 at EOF, -1 on a read error (or no
 * memory), -2 when the socket has nothing now. EOF and errors end that
 * side's reading: a caller may close at once on -1, or go on relaying the
 * other way. A side at EOF or without room reads nothing: -2. */
long sbx_splice_read(struct sbx_splice *s, enum sbx_splice_side side, int fd);

/* Write what each side's fd takes, then pass on any EOF whose bytes are
 * all written. Returns 1 while the splice goes on, 0 when it is over,
 * -1 on a write error (the caller closes both). */
int sbx_splice_step(struct sbx_splice *s, int fd_a, int fd_b);

/* Write what waits for side (for a caller that drains one side on its
 * own, e.g. before closing). 0, or -1 on a write error. */
int sbx_splice_flush(struct sbx_splice *s, enum sbx_splice_side side, int fd);

/* Write as much of b as the non-blocking socket fd takes (also outside a
 * splice, e.g. a reply). 0, or -1 on a write error other than EAGAIN. */
int sbx_send_buf(int fd, struct sbx_buf *b);

/* Side can take nothing more (it hung up): its pending bytes are dropped
 * and it counts as shut down. */
void sbx_splice_gone(struct sbx_splice *s, enum sbx_splice_side side);

/* What to wait for on side: SBX_SPLICE_IN while it may be read (not at
 * EOF, room toward the other side), SBX_SPLICE_OUT while bytes wait for
 * it. */
#define SBX_SPLICE_IN  1u
#define SBX_SPLICE_OUT 2u
unsigned sbx_splice_events(const struct sbx_splice *s, enum sbx_splice_side side);

#endif
