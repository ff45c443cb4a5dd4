/* Two-way byte relay with half-close (see sbx_splice.h). */
#include "sbx_splice.h"

#include <errno.h>
#include <sys/socket.h>

#define READ_CHUNK (256 * 1024)

static struct sbx_buf *toward(struct sbx_splice *s, int side)
{
	return side == SBX_SPLICE_A ? s->to_a : s->to_b;
}

void sbx_splice_init(struct sbx_splice *s, struct sbx_buf *to_a, struct sbx_buf *to_b,
		     size_t cap)
{
	*s = (struct sbx_splice){ .to_a = to_a, .to_b = to_b, .cap = cap };
}

long sbx_splice_read(struct sbx_splice *s, enum sbx_splice_side side, int fd)
{
	struct sbx_buf *b = toward(s, !side);
	size_t room = b->len < s->cap ? s->cap - b->len : 0;
	unsigned char *p;
	ssize_t n;

	if (s->eof[side] || !room)
		return -2;
	if (room > READ_CHUNK)
		room = READ_CHUNK;
	p = sbx_buf_reserve(b, room);
	n = p ? recv(fd, p, room, MSG_DONTWAIT) : -1;
	if (n < 0 && p && (errno == EAGAIN || errno == EINTR))
		return -2;
	if (n <= 0) {
		s->eof[side] = 1;
		return n < 0 ? -1 : 0;
	}
	sbx_buf_commit(b, (size_t)n);
	return n;
}

int sbx_send_buf(int fd, struct sbx_buf *b)
{
	while (b->len) {
		ssize_t n = send(fd, sbx_buf_head(b), b->len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		sbx_buf_consume(b, (size_t)n);
	}
	return 0;
}

int sbx_splice_flush(struct sbx_splice *s, enum sbx_splice_side side, int fd)
{
	return s->gone[side] ? 0 : sbx_send_buf(fd, toward(s, side));
}

void sbx_splice_gone(struct sbx_splice *s, enum sbx_splice_side side)
{
	s->gone[side] = 1;
	s->shut[side] = 1;
	sbx_buf_reset(toward(s, side));
}

int sbx_splice_step(struct sbx_splice *s, int fd_a, int fd_b)
{
	int fd[2] = { fd_a, fd_b };

	for (int side = 0; side < 2; side++)
		if (sbx_splice_flush(s, side, fd[side]) < 0)
			return -1;
	for (int side = 0; side < 2; side++) {
		/* the other side ended and all it sent reached this one */
		if (s->eof[!side] && !toward(s, side)->len && !s->shut[side]) {
			shutdown(fd[side], SHUT_WR);
			s->shut[side] = 1;
		}
	}
	return s->shut[0] && s->shut[1] ? 0 : 1;
}

unsigned sbx_splice_events(const struct sbx_splice *s, enum sbx_splice_side side)
{
	const struct sbx_buf *out = side == SBX_SPLICE_A ? s->to_a : s->to_b;
	const struct sbx_buf *in = side == SBX_SPLICE_A ? s->to_b : s->to_a;
	unsigned ev = 0;

	if (!s->eof[side] && in->len < s->cap)
		ev |= SBX_SPLICE_IN;
	if (out->len && !s->gone[side])
		ev |= SBX_SPLICE_OUT;
	return ev;
}
