/* A growable byte buffer with a hard capacity. Data lives in
 * [data + off, data + off + len); consuming from the front is O(1) and the
 * space is reclaimed on the next append. */
#ifndef SBX_BUF_H
#define SBX_BUF_H

#include <stddef.h>

struct sbx_buf {
	unsigned char *data;
	size_t off;       /* start of unconsumed bytes */
	size_t len;       /* unconsumed bytes */
	size_t alloc;     /* bytes allocated */
	size_t cap;       /* never hold more than this many bytes (0 = no cap) */
};

void sbx_buf_init(struct sbx_buf *b, size_t cap);
void sbx_buf_free(struct sbx_buf *b);

/* Append n bytes. Returns 0, or -1 with errno ENOBUFS past the cap or
 * ENOMEM; the buffer is unchanged on failure. */
int sbx_buf_append(struct sbx_buf *b, const void *p, size_t n);

/* Make room for n more bytes and return a pointer to write them at; call
 * sbx_buf_commit(b, k) with the k <= n bytes actually written. NULL on
 * failure as for sbx_buf_append. */
unsigned char *sbx_buf_reserve(struct sbx_buf *b, size_t n);
void sbx_buf_commit(struct sbx_buf *b, size_t n);

static inline unsigned char *sbx_buf_head(const struct sbx_buf *b)
{
	return b->data + b->off;
}

/* Drop n bytes from the front (n <= len). */
void sbx_buf_consume(struct sbx_buf *b, size_t n);
void sbx_buf_reset(struct sbx_buf *b);

#endif
