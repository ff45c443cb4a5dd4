#include "sbx_buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void sbx_buf_init(struct sbx_buf *b, size_t cap)
{
	memset(b, 0, sizeof(*b));
	b->cap = cap;
}

void sbx_buf_free(struct sbx_buf *b)
{
	free(b->data);
	sbx_buf_init(b, b->cap);
}

unsigned char *sbx_buf_reserve(struct sbx_buf *b, size_t n)
{
	size_t want, na;
	unsigned char *p;

	if (b->cap && (n > b->cap || b->len > b->cap - n)) {
		errno = ENOBUFS;
		return NULL;
	}
	if (b->off + b->len + n <= b->alloc)
		return b->data + b->off + b->len;
	if (b->off) {
		memmove(b->data, b->data + b->off, b->len);
		b->off = 0;
		if (b->len + n <= b->alloc)
			return b->data + b->len;
	}
	want = b->len + n;
	na = b->alloc ? b->alloc : 256;
	while (na < want) {
		if (na > ((size_t)-1) / 2) {
			errno = ENOMEM;
			return NULL;
		}
		na *= 2;
	}
	if (b->cap && na > b->cap)
		na = b->cap;
	p = realloc(b->data, na);
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	b->data = p;
	b->alloc = na;
	return b->data + b->len;
}

void sbx_buf_commit(struct sbx_buf *b, size_t n)
{
	b->len += n;
}

int sbx_buf_append(struct sbx_buf *b, const void *p, size_t n)
{
	unsigned char *dst;

	if (!n)
		return 0;
	dst = sbx_buf_reserve(b, n);
	if (!dst)
		return -1;
	memcpy(dst, p, n);
	b->len += n;
	return 0;
}

void sbx_buf_consume(struct sbx_buf *b, size_t n)
{
	if (n >= b->len) {
		b->off = 0;
		b->len = 0;
		return;
	}
	b->off += n;
	b->len -= n;
}

void sbx_buf_reset(struct sbx_buf *b)
{
	b->off = 0;
	b->len = 0;
}
