/* Two-way relay through the kernel with half-close (see sbx_ksplice.h). */
#include "sbx_ksplice.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/socket.h>
#include <unistd.h>

#define MOVE_FLAGS (SPLICE_F_MOVE | SPLICE_F_NONBLOCK)

/* Size the pipe toward side for cap bytes; its cap is what the pipe
 * holds, whatever cap asked. The F_SETPIPE_SZ result. */
static int size_pipe(struct sbx_ksplice *s, int side, size_t cap)
{
	int rc = fcntl(s->pipe[side][1], F_SETPIPE_SZ, (int)cap);
	int sz = fcntl(s->pipe[side][1], F_GETPIPE_SZ);

	s->cap[side] = sz > 0 && (size_t)sz < cap ? (size_t)sz : cap;
	return rc;
}

int sbx_ksplice_init(struct sbx_ksplice *s, size_t cap)
{
	*s = (struct sbx_ksplice){ .pipe = { { -1, -1 }, { -1, -1 } }, .cap = { cap, cap } };
	for (int side = 0; side < 2; side++) {
		if (pipe2(s->pipe[side], O_NONBLOCK | O_CLOEXEC) < 0) {
			s->pipe[side][0] = s->pipe[side][1] = -1;
			return -1;
		}
		size_pipe(s, side, cap);
	}
	return 0;
}

int sbx_ksplice_grow(struct sbx_ksplice *s, enum sbx_splice_side side, size_t cap)
{
	size_t was = s->cap[side];

	if (cap <= was || cap > INT_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (size_pipe(s, side, cap) < 0) {
		int e = errno;
		s->cap[side] = was;
		errno = e;
		return -1;
	}
	s->full[side] = 0;      /* the new slots are room */
	return 0;
}

void sbx_ksplice_free(struct sbx_ksplice *s)
{
	for (int side = 0; side < 2; side++)
		for (int end = 0; end < 2; end++) {
			if (s->pipe[side][end] >= 0)
				close(s->pipe[side][end]);
			s->pipe[side][end] = -1;
		}
}

int sbx_ksplice_queue(struct sbx_ksplice *s, enum sbx_splice_side side, const void *p,
		      size_t len)
{
	const char *c = p;

	if (s->pending[side] || len > s->cap[side]) {
		errno = ENOBUFS;
		return -1;
	}
	while (len) {
		ssize_t n = write(s->pipe[side][1], c, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = ENOBUFS;
			return -1;
		}
		s->pending[side] += (size_t)n;
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

long sbx_ksplice_read(struct sbx_ksplice *s, enum sbx_splice_side side, int fd)
{
	int to = !side;
	size_t room = s->pending[to] < s->cap[to] ? s->cap[to] - s->pending[to] : 0;
	ssize_t n;

	if (s->eof[side] || !room || s->full[to])
		return -2;
	n = splice(fd, NULL, s->pipe[to][1], NULL, room, MOVE_FLAGS);
	if (n > 0) {
		s->pending[to] += (size_t)n;
		return n;
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		/* the socket is empty, or the pipe's slots are taken (a slot
		 * per segment can fill it below cap bytes): either way the
		 * next read waits for bytes to leave the pipe, so a full pipe
		 * never spins the loop on a readable socket */
		if (errno == EAGAIN && s->pending[to])
			s->full[to] = 1;
		return -2;
	}
	s->eof[side] = 1;
	return n < 0 ? -1 : 0;
}

int sbx_ksplice_flush(struct sbx_ksplice *s, enum sbx_splice_side side, int fd)
{
	if (s->gone[side])
		return 0;
	while (s->pending[side]) {
		ssize_t n = splice(s->pipe[side][0], NULL, fd, NULL, s->pending[side], MOVE_FLAGS);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		if (n == 0) {           /* the pipe is empty: nothing was pending after all */
			s->pending[side] = 0;
			break;
		}
		s->pending[side] -= (size_t)n;
		s->full[side] = 0;
	}
	return 0;
}

void sbx_ksplice_gone(struct sbx_ksplice *s, enum sbx_splice_side side)
{
	s->gone[side] = 1;
	s->shut[side] = 1;
}

int sbx_ksplice_step(struct sbx_ksplice *s, int fd_a, int fd_b)
{
	int fd[2] = { fd_a, fd_b };

	for (int side = 0; side < 2; side++)
		if (sbx_ksplice_flush(s, side, fd[side]) < 0)
			return -1;
	for (int side = 0; side < 2; side++) {
		/* the other side ended and all it sent reached this one */
		if (s->eof[!side] && !s->pending[side] && !s->shut[side]) {
			shutdown(fd[side], SHUT_WR);
			s->shut[side] = 1;
		}
	}
	return s->shut[0] && s->shut[1] ? 0 : 1;
}

unsigned sbx_ksplice_events(const struct sbx_ksplice *s, enum sbx_splice_side side)
{
	int to = !side;         /* where side's bytes go */
	unsigned ev = 0;

	if (!s->eof[side] && s->pending[to] < s->cap[to] && !s->full[to])
		ev |= SBX_SPLICE_IN;
	if (s->pending[side] && !s->gone[side])
		ev |= SBX_SPLICE_OUT;
	return ev;
}
