#include "vu_mem.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

/* [a, a+len) inside [base, base+size), with no wrap on either side. */
static int inside(uint64_t a, uint64_t len, uint64_t base, uint64_t size)
{
	return a >= base && a - base <= size && len <= size - (a - base);
}

void *vu_mem_gpa(const struct vu_mem *m, uint64_t gpa, uint64_t len)
{
	for (unsigned i = 0; i < m->n; i++) {
		const struct vu_region *r = &m->r[i];
		if (inside(gpa, len, r->gpa, r->size))
			return r->host + (gpa - r->gpa);
	}
	return NULL;
}

void *vu_mem_qva(const struct vu_mem *m, uint64_t qva, uint64_t len)
{
	for (unsigned i = 0; i < m->n; i++) {
		const struct vu_region *r = &m->r[i];
		if (inside(qva, len, r->qva, r->size))
			return r->host + (qva - r->qva);
	}
	return NULL;
}

static int overlaps(const struct vu_mem *m, uint64_t gpa, uint64_t size)
{
	for (unsigned i = 0; i < m->n; i++)
		if (gpa < m->r[i].gpa + m->r[i].size && m->r[i].gpa < gpa + size)
			return 1;
	return 0;
}

int vu_mem_add(struct vu_mem *m, int fd, uint64_t gpa, uint64_t size,
               uint64_t qva, uint64_t mmap_offset)
{
	struct vu_region *r;
	void *p;

	if (m->n >= VU_MEM_MAX) {
		errno = E2BIG;
		return -1;
	}
	if (!size || gpa + size < gpa || qva + size < qva ||
	    mmap_offset + size < mmap_offset || mmap_offset + size > SIZE_MAX ||
	    overlaps(m, gpa, size)) {
		errno = EINVAL;
		return -1;
	}
	p = mmap(NULL, (size_t)(mmap_offset + size), PROT_READ | PROT_WRITE,
	         MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	r = &m->r[m->n++];
	r->gpa = gpa;
	r->size = size;
	r->qva = qva;
	r->map = p;
	r->map_len = (size_t)(mmap_offset + size);
	r->host = (uint8_t *)p + mmap_offset;
	return 0;
}

void vu_mem_clear(struct vu_mem *m)
{
	for (unsigned i = 0; i < m->n; i++)
		if (m->r[i].map)
			munmap(m->r[i].map, m->r[i].map_len);
	memset(m, 0, sizeof *m);
}
