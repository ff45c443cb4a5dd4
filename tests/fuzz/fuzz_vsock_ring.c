/* libFuzzer target: a hostile guest's virtqueue and packets, as the vsock
 * backend (vsockd/) reads them. The input is the guest's memory: a
 * descriptor table, the available ring and the buffers, all of it the
 * fuzzer's. Every chain the walker hands out is checked to lie inside
 * guest memory (ASan sees the rest: memory is an exact-size allocation),
 * its lengths to add up, and every packet the check accepts to claim no
 * more than its chain holds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../vsockd/vs_pkt.h"
#include "../../vsockd/vu_mem.h"
#include "../../vsockd/vu_ring.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MEMSZ 8192
#define GPA 0x40000ull
#define QVA 0x7f0000000000ull

static int inside(const struct iovec *v, const uint8_t *mem)
{
	return (const uint8_t *)v->iov_base >= mem &&
	       (const uint8_t *)v->iov_base + v->iov_len <= mem + MEMSZ;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *mem;
	struct vu_mem m = { 0 };
	struct vu_ring r = { 0 };
	struct vu_chain c;

	if (size < 2)
		return 0;
	mem = calloc(1, MEMSZ);
	/* the first byte picks the ring size (a power of two up to 64) */
	r.num = 1u << (data[0] % 7);
	r.last_avail = data[1];
	r.used_idx = data[1];
	memcpy(mem, data + 2, size - 2 < MEMSZ ? size - 2 : MEMSZ);
	m.n = 1;
	m.r[0] = (struct vu_region){ .gpa = GPA, .size = MEMSZ, .qva = QVA, .host = mem };
	r.desc_qva = QVA;
	r.avail_qva = QVA + 0x400;
	r.used_qva = QVA + 0x600;
	if (vu_ring_map(&r, &m) < 0)
		__builtin_trap();
	for (int k = 0; k < 80; k++) {
		uint64_t out = 0, in = 0;
		int rc = vu_ring_pop(&r, &m, &c);
		if (rc <= 0) {
			if (rc < 0 && (!r.broken || !r.why))
				__builtin_trap();
			break;
		}
		if (c.head >= r.num || c.n_out > VU_CHAIN_MAX || c.n_in > VU_CHAIN_MAX ||
		    c.n_out + c.n_in > r.num)
			__builtin_trap();
		for (unsigned i = 0; i < c.n_out; i++) {
			if (!inside(&c.out[i], mem))
				__builtin_trap();
			out += c.out[i].iov_len;
		}
		for (unsigned i = 0; i < c.n_in; i++) {
			if (!inside(&c.in[i], mem))
				__builtin_trap();
			in += c.in[i].iov_len;
		}
		if (out != c.out_len || in != c.in_len)
			__builtin_trap();
		if (c.out_len >= VS_HDR_LEN) {
			uint8_t b[VS_HDR_LEN], again[VS_HDR_LEN];
			struct vs_hdr h;
			if (vu_chain_read(&c, 0, b, VS_HDR_LEN) != VS_HDR_LEN)
				__builtin_trap();
			vs_hdr_decode(b, &h);
			vs_hdr_encode(&h, again);
			if (memcmp(b, again, VS_HDR_LEN))
				__builtin_trap();
			if (vs_pkt_check(&h, c.out_len - VS_HDR_LEN, 3) == VS_ACCEPT) {
				uint8_t *payload = malloc(h.len ? h.len : 1);
				if (h.len > c.out_len - VS_HDR_LEN || h.len > VS_MAX_PAYLOAD ||
				    (h.len && h.op != VS_OP_RW) || h.src_cid != 3)
					__builtin_trap();
				if (vu_chain_read(&c, VS_HDR_LEN, payload, h.len) != h.len)
					__builtin_trap();
				free(payload);
			}
		}
		if (vu_chain_write(&c, 0, data, size < c.in_len ? size : (size_t)c.in_len) >
		    c.in_len)
			__builtin_trap();
		vu_ring_push(&r, c.head, (uint32_t)c.in_len);
	}
	free(mem);
	return 0;
}
