/* Guest memory as the vhost-user front end shares it (SET_MEM_TABLE): up to
 * VU_MEM_MAX regions, each known by three addresses (guest-physical, the
 * front end's own virtual address, and where this process mapped it). Every
 * address the guest or the front end gives is translated here, and a range
 * is handed out only when it lies whole inside one region: an address that
 * wraps, straddles two regions or points nowhere is refused (NULL). */
#ifndef VU_MEM_H
#define VU_MEM_H

#include <stddef.h>
#include <stdint.h>

#define VU_MEM_MAX 8

struct vu_region {
	uint64_t gpa;        /* guest-physical start */
	uint64_t size;
	uint64_t qva;        /* the front end's virtual address of gpa */
	uint8_t *host;       /* our mapping of gpa (after the mmap offset) */
	void *map;           /* what munmap takes (NULL: not ours to unmap) */
	size_t map_len;
};

struct vu_mem {
	unsigned n;
	struct vu_region r[VU_MEM_MAX];
};

/* Pointer to the len bytes at guest-physical gpa, or NULL. */
void *vu_mem_gpa(const struct vu_mem *m, uint64_t gpa, uint64_t len);

/* Pointer to the len bytes at the front end's virtual address qva, or NULL. */
void *vu_mem_qva(const struct vu_mem *m, uint64_t qva, uint64_t len);

/* Map a region from the fd the front end sent (the fd is not kept). Returns
 * 0, or -1 with errno: EINVAL for a region that is empty, overflows or
 * overlaps one already known, E2BIG past VU_MEM_MAX, or mmap's. */
int vu_mem_add(struct vu_mem *m, int fd, uint64_t gpa, uint64_t size,
               uint64_t qva, uint64_t mmap_offset);

/* Unmap every region. */
void vu_mem_clear(struct vu_mem *m);

#endif
