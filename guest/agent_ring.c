/* Retention ring; see agent_ring.h. Ring positions are monotonic 64-bit
 * counters reduced modulo cap on access, so a stale cursor is detected by
 * comparison alone. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent_ring.h"

int ag_ring_init(struct ag_ring *r, size_t cap)
{
	memset(r, 0, sizeof(*r));
	r->buf = malloc(cap);
	if (!r->buf) {
		errno = ENOMEM;
		return -1;
	}
	r->cap = cap;
	return 0;
}

void ag_ring_free(struct ag_ring *r)
{
	free(r->buf);
	r->buf = NULL;
}

static void ring_put(struct ag_ring *r, uint64_t pos, const void *p, size_t n)
{
	size_t at = (size_t)(pos % r->cap);
	size_t first = r->cap - at < n ? r->cap - at : n;

	memcpy(r->buf + at, p, first);
	memcpy(r->buf, (const unsigned char *)p + first, n - first);
}

static void ring_get(const struct ag_ring *r, uint64_t pos, void *p, size_t n)
{
	size_t at = (size_t)(pos % r->cap);
	size_t first = r->cap - at < n ? r->cap - at : n;

	memcpy(p, r->buf + at, first);
	memcpy((unsigned char *)p + first, r->buf, n - first);
}

static uint32_t rec_len(const struct ag_ring *r, uint64_t pos, unsigned *tag)
{
	unsigned char h[AG_RING_REC_HDR];

	ring_get(r, pos, h, sizeof(h));
	if (tag)
		*tag = h[4];
	return (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
}

/* Drop the oldest records until need more bytes fit. */
static void make_room(struct ag_ring *r, size_t need)
{
	while (r->head - r->tail + need > r->cap) {
		uint32_t l = rec_len(r, r->tail, NULL);

		r->tail += AG_RING_REC_HDR + l;
		r->tail_off += l;
	}
}

static void put_header(struct ag_ring *r, unsigned tag, size_t n)
{
	unsigned char h[AG_RING_REC_HDR];

	h[0] = (unsigned char)(n >> 24);
	h[1] = (unsigned char)(n >> 16);
	h[2] = (unsigned char)(n >> 8);
	h[3] = (unsigned char)n;
	h[4] = (unsigned char)tag;
	ring_put(r, r->head, h, sizeof(h));
}

/* The ring's bytes [pos, pos + n) as one or two spans. */
static int spans(const struct ag_ring *r, uint64_t pos, size_t n, struct iovec iov[2])
{
	size_t at = (size_t)(pos % r->cap);
	size_t first = r->cap - at < n ? r->cap - at : n;

	iov[0] = (struct iovec){ r->buf + at, first };
	iov[1] = (struct iovec){ r->buf, n - first };
	return n > first ? 2 : 1;
}

int ag_ring_push(struct ag_ring *r, unsigned tag, const void *p, size_t n)
{
	size_t need = n + AG_RING_REC_HDR;

	if (need > r->cap || n > UINT32_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	make_room(r, need);
	ring_put(r, r->head + AG_RING_REC_HDR, p, n);
	ag_ring_commit(r, tag, n);
	return 0;
}

int ag_ring_reserve(struct ag_ring *r, size_t n, struct iovec iov[2])
{
	if (n + AG_RING_REC_HDR > r->cap || n > UINT32_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	make_room(r, n + AG_RING_REC_HDR);
	return spans(r, r->head + AG_RING_REC_HDR, n, iov);
}

void ag_ring_commit(struct ag_ring *r, unsigned tag, size_t k)
{
	if (!k)
		return;
	put_header(r, tag, k);
	r->head += AG_RING_REC_HDR + k;
	r->total += k;
}

size_t ag_ring_span(const struct ag_ring *r, const struct ag_cursor *c, size_t max,
		    struct iovec iov[2], int *niov)
{
	uint64_t end = c->pos;

	*niov = 0;
	if (c->pos < r->tail || c->skip)
		return 0;
	while (end < r->head) {
		uint64_t next = end + AG_RING_REC_HDR + rec_len(r, end, NULL);

		if (end > c->pos && next - c->pos > max)
			break;
		end = next;
	}
	if (end == c->pos)
		return 0;
	*niov = spans(r, c->pos, (size_t)(end - c->pos), iov);
	return (size_t)(end - c->pos);
}

size_t ag_ring_sent(const struct ag_ring *r, struct ag_cursor *c, size_t k, unsigned char *rest)
{
	while (k) {
		uint32_t l = rec_len(r, c->pos, NULL);
		size_t whole = AG_RING_REC_HDR + l, cut = k < whole ? whole - k : 0;

		if (cut)
			ring_get(r, c->pos + k, rest, cut);
		c->pos += whole;
		c->off += l;
		if (cut)
			return cut;
		k -= whole;
	}
	return 0;
}

int ag_ring_shrink(struct ag_ring *r)
{
	size_t used = (size_t)(r->head - r->tail), ncap = used ? used : 1;
	unsigned char *nb;
	struct ag_ring tmp;

	if (ncap >= r->cap)
		return 0;
	nb = malloc(ncap);
	if (!nb) {
		errno = ENOMEM;
		return -1;
	}
	/* Positions keep their values; [tail, head) is exactly ncap long so
	 * each maps to a distinct index modulo the new size. */
	tmp = *r;
	tmp.buf = nb;
	tmp.cap = ncap;
	if (used) {
		unsigned char chunk[4096];
		uint64_t p;

		for (p = r->tail; p < r->head; ) {
			size_t n = r->head - p < sizeof(chunk) ? (size_t)(r->head - p) : sizeof(chunk);

			ring_get(r, p, chunk, n);
			ring_put(&tmp, p, chunk, n);
			p += n;
		}
	}
	free(r->buf);
	*r = tmp;
	return 0;
}

uint64_t ag_ring_seek(const struct ag_ring *r, uint64_t want, struct ag_cursor *c)
{
	uint64_t lost = 0;

	if (want > r->total)
		want = r->total;
	if (want < r->tail_off) {
		lost = r->tail_off - want;
		want = r->tail_off;
	}
	c->pos = r->tail;
	c->off = r->tail_off;
	c->skip = 0;
	/* Walk records: an attach does this once, readers then move forward. */
	while (c->pos < r->head) {
		uint32_t l = rec_len(r, c->pos, NULL);

		if (c->off + l > want) {
			c->skip = (uint32_t)(want - c->off);
			c->off = want;
			break;
		}
		c->pos += AG_RING_REC_HDR + l;
		c->off += l;
	}
	return lost;
}

uint64_t ag_ring_catch(const struct ag_ring *r, struct ag_cursor *c)
{
	uint64_t lost;

	if (c->pos >= r->tail)
		return 0;
	lost = r->tail_off - c->off;
	c->pos = r->tail;
	c->off = r->tail_off;
	c->skip = 0;
	return lost;
}

size_t ag_ring_read(const struct ag_ring *r, struct ag_cursor *c, unsigned *tag,
		    void *out, size_t max, uint64_t *lost)
{
	uint32_t l;
	size_t n;

	*lost = ag_ring_catch(r, c);
	if (c->pos >= r->head)
		return 0;
	l = rec_len(r, c->pos, tag);
	n = l - c->skip;
	if (n > max)
		n = max;
	ring_get(r, c->pos + AG_RING_REC_HDR + c->skip, out, n);
	c->skip += (uint32_t)n;
	c->off += n;
	if (c->skip == l) {
		c->pos += AG_RING_REC_HDR + l;
		c->skip = 0;
	}
	return n;
}
