#include "vu_ring.h"

#include <endian.h>
#include <string.h>

#define DESC_F_NEXT     1
#define DESC_F_WRITE    2
#define DESC_F_INDIRECT 4
#define AVAIL_F_NO_INTERRUPT 1

struct desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

/* avail: flags, idx, ring[num]; used: flags, idx, {id, len}[num] */
static uint16_t load16(const void *p)
{
	uint16_t v;
	__atomic_load((const uint16_t *)p, &v, __ATOMIC_ACQUIRE);
	return le16toh(v);
}

static void store16(void *p, uint16_t v)
{
	uint16_t le = htole16(v);
	__atomic_store((uint16_t *)p, &le, __ATOMIC_RELEASE);
}

int vu_ring_num_ok(unsigned num)
{
	return num >= 1 && num <= VU_RING_MAX_NUM && (num & (num - 1)) == 0;
}

int vu_ring_map(struct vu_ring *r, const struct vu_mem *mem)
{
	void *d, *a, *u;

	r->desc = r->avail = r->used = NULL;
	if (!vu_ring_num_ok(r->num) || r->desc_qva % 16 || r->avail_qva % 2 ||
	    r->used_qva % 4)
		return -1;
	d = vu_mem_qva(mem, r->desc_qva, 16ull * r->num);
	a = vu_mem_qva(mem, r->avail_qva, 6 + 2ull * r->num);
	u = vu_mem_qva(mem, r->used_qva, 6 + 8ull * r->num);
	if (!d || !a || !u)
		return -1;
	r->desc = d;
	r->avail = a;
	r->used = u;
	return 0;
}

static int broken(struct vu_ring *r, const char *why)
{
	r->broken = 1;
	r->why = why;
	return -1;
}

static void read_desc(const struct vu_ring *r, uint16_t i, struct desc *d)
{
	/* one copy: the guest may rewrite the entry while we look at it */
	memcpy(d, (const uint8_t *)r->desc + 16u * i, sizeof *d);
	d->addr = le64toh(d->addr);
	d->len = le32toh(d->len);
	d->flags = le16toh(d->flags);
	d->next = le16toh(d->next);
}

int vu_ring_pop(struct vu_ring *r, const struct vu_mem *mem, struct vu_chain *c)
{
	uint16_t avail_idx, i;
	unsigned count = 0;
	struct desc d;

	if (r->broken)
		return -1;
	if (!r->desc)
		return 0;
	avail_idx = load16((uint8_t *)r->avail + 2);
	if (avail_idx == r->last_avail)
		return 0;
	if ((uint16_t)(avail_idx - r->last_avail) > r->num)
		return broken(r, "available index more than a ring ahead");
	i = load16((uint8_t *)r->avail + 4 + 2u * (r->last_avail % r->num));
	if (i >= r->num)
		return broken(r, "head past the descriptor table");
	memset(c, 0, sizeof *c);
	c->head = i;
	for (;;) {
		void *p;
		if (++count > r->num)
			return broken(r, "descriptor chain loops");
		read_desc(r, i, &d);
		if (d.flags & DESC_F_INDIRECT)
			return broken(r, "indirect descriptor (not offered)");
		p = vu_mem_gpa(mem, d.addr, d.len);
		if (!p)
			return broken(r, "buffer outside guest memory");
		if (d.flags & DESC_F_WRITE) {
			if (c->n_in >= VU_CHAIN_MAX)
				return broken(r, "chain too long");
			c->in[c->n_in].iov_base = p;
			c->in[c->n_in++].iov_len = d.len;
			c->in_len += d.len;
		} else {
			if (c->n_in)
				return broken(r, "readable buffer after a writable one");
			if (c->n_out >= VU_CHAIN_MAX)
				return broken(r, "chain too long");
			c->out[c->n_out].iov_base = p;
			c->out[c->n_out++].iov_len = d.len;
			c->out_len += d.len;
		}
		if (!(d.flags & DESC_F_NEXT))
			break;
		if (d.next >= r->num)
			return broken(r, "next past the descriptor table");
		i = d.next;
	}
	r->last_avail++;
	return 1;
}

void vu_ring_unpop(struct vu_ring *r)
{
	r->last_avail--;
}

void vu_ring_push(struct vu_ring *r, uint16_t head, uint32_t written)
{
	uint8_t *e = (uint8_t *)r->used + 4 + 8u * (r->used_idx % r->num);
	uint32_t id = htole32(head), len = htole32(written);

	memcpy(e, &id, 4);
	memcpy(e + 4, &len, 4);
	/* the entry must be visible before the index that publishes it */
	store16((uint8_t *)r->used + 2, ++r->used_idx);
}

int vu_ring_wants_call(const struct vu_ring *r)
{
	return r->avail && !(load16(r->avail) & AVAIL_F_NO_INTERRUPT);
}

static size_t chain_copy(const struct iovec *v, unsigned n, uint64_t off,
                         uint8_t *buf, size_t len, int to_chain)
{
	size_t done = 0;

	for (unsigned k = 0; k < n && done < len; k++) {
		size_t take;
		if (off >= v[k].iov_len) {
			off -= v[k].iov_len;
			continue;
		}
		take = v[k].iov_len - (size_t)off;
		if (take > len - done)
			take = len - done;
		if (to_chain)
			memcpy((uint8_t *)v[k].iov_base + off, buf + done, take);
		else
			memcpy(buf + done, (uint8_t *)v[k].iov_base + off, take);
		done += take;
		off = 0;
	}
	return done;
}

size_t vu_chain_read(const struct vu_chain *c, uint64_t off, void *dst, size_t n)
{
	return chain_copy(c->out, c->n_out, off, dst, n, 0);
}

size_t vu_chain_write(const struct vu_chain *c, uint64_t off, const void *src, size_t n)
{
	return chain_copy(c->in, c->n_in, off, (uint8_t *)src, n, 1);
}
