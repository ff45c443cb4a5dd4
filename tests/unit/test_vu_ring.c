/* Unit tests of the vsock backend's pure parts (vsockd/): the guest memory
 * map, the split-virtqueue walker and the packet check. The guest is
 * played by the test writing descriptor tables and rings into a buffer
 * registered as guest memory; every hostile shape the walker refuses is
 * one test: heads and nexts past the table, loops, buffers outside memory
 * or lying about their length, indirect descriptors, readable after
 * writable, an available index that jumps. */
#include <endian.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../vsockd/vs_pkt.h"
#include "../../vsockd/vu_mem.h"
#include "../../vsockd/vu_ring.h"

#define GPA  0x100000ull
#define QVA  0x7f0000000000ull
#define MEMSZ 65536
#define NUM 8
/* layout inside guest memory */
#define DESC_OFF  0x0
#define AVAIL_OFF 0x1000
#define USED_OFF  0x2000
#define DATA_OFF  0x4000

struct fix {
	uint8_t *buf;
	struct vu_mem mem;
	struct vu_ring ring;
	struct vu_chain ch;
};

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof *f);

	f->buf = calloc(1, MEMSZ);
	f->mem.n = 1;
	f->mem.r[0] = (struct vu_region){ .gpa = GPA, .size = MEMSZ, .qva = QVA, .host = f->buf };
	f->ring.num = NUM;
	f->ring.desc_qva = QVA + DESC_OFF;
	f->ring.avail_qva = QVA + AVAIL_OFF;
	f->ring.used_qva = QVA + USED_OFF;
	assert_int_equal(vu_ring_map(&f->ring, &f->mem), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;
	free(f->buf);
	free(f);
	return 0;
}

static void desc(struct fix *f, unsigned i, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next)
{
	uint8_t *d = f->buf + DESC_OFF + 16 * i;
	uint64_t a = htole64(addr);
	uint32_t l = htole32(len);
	uint16_t fl = htole16(flags), n = htole16(next);

	memcpy(d, &a, 8);
	memcpy(d + 8, &l, 4);
	memcpy(d + 12, &fl, 2);
	memcpy(d + 14, &n, 2);
}

/* make head available as entry idx-1 and publish idx */
static void avail(struct fix *f, uint16_t idx, uint16_t head)
{
	uint16_t h = htole16(head), i = htole16(idx);
	memcpy(f->buf + AVAIL_OFF + 4 + 2 * ((idx - 1) % NUM), &h, 2);
	memcpy(f->buf + AVAIL_OFF + 2, &i, 2);
}

static void takes_a_chain_readable_then_writable(void **state)
{
	struct fix *f = *state;

	memcpy(f->buf + DATA_OFF, "header", 6);
	desc(f, 3, GPA + DATA_OFF, 6, 1, 5);
	desc(f, 5, GPA + DATA_OFF + 100, 10, 1 | 2, 0);
	desc(f, 0, GPA + DATA_OFF + 200, 20, 2, 0);
	avail(f, 1, 3);
	assert_int_equal(vu_ring_pop(&f->ring, &f->mem, &f->ch), 1);
	assert_int_equal(f->ch.head, 3);
	assert_int_equal(f->ch.n_out, 1);
	assert_int_equal(f->ch.n_in, 2);
	assert_int_equal(f->ch.out_len, 6);
	assert_int_equal(f->ch.in_len, 30);
	assert_ptr_equal(f->ch.out[0].iov_base, f->buf + DATA_OFF);
	/* nothing more available */
	assert_int_equal(vu_ring_pop(&f->ring, &f->mem, &f->ch), 0);
}

static void used_entry_and_index_are_written(void **state)
{
	struct fix *f = *state;
	uint32_t id, len;
	uint16_t idx;

	desc(f, 2, GPA + DATA_OFF, 8, 2, 0);
	avail(f, 1, 2);
	assert_int_equal(vu_ring_pop(&f->ring, &f->mem, &f->ch), 1);
	vu_ring_push(&f->ring, f->ch.head, 7);
	memcpy(&id, f->buf + USED_OFF + 4, 4);
	memcpy(&len, f->buf + USED_OFF + 8, 4);
	memcpy(&idx, f->buf + USED_OFF + 2, 2);
	assert_int_equal(le32toh(id), 2);
	assert_int_equal(le32toh(len), 7);
	assert_int_equal(le16toh(idx), 1);
}

static void chain_copies_cross_buffers(void **state)
{
	struct fix *f = *state;
	char out[16] = { 0 };

	memcpy(f->buf + DATA_OFF, "abc", 3);
	memcpy(f->buf + DATA_OFF + 64, "defgh", 5);
	desc(f, 0, GPA + DATA_OFF, 3, 1, 1);
	desc(f, 1, GPA + DATA_OFF + 64, 5, 1, 2);
	desc(f, 2, GPA + DATA_OFF + 128, 4, 2 | 1, 3);
	desc(f, 3, GPA + DATA_OFF + 192, 4, 2, 0);
	avail(f, 1, 0);
	assert_int_equal(vu_ring_pop(&f->ring, &f->mem, &f->ch), 1);
	assert_int_equal(vu_chain_read(&f->ch, 2, out, sizeof out), 6);
	assert_memory_equal(out, "cdefgh", 6);
	assert_int_equal(vu_chain_write(&f->ch, 1, "0123456789", 10), 7);
	assert_memory_equal(f->buf + DATA_OFF + 129, "012", 3);
	assert_memory_equal(f->buf + DATA_OFF + 192, "3456", 4);
}

/* pop must refuse, mark the ring broken and stay broken */
static void refused(struct fix *f)
{
	assert_int_equal(vu_ring_pop(&f->ring, &f->mem, &f->ch), -1);
	assert_true(f->ring.broken);
	assert_non_null(f->ring.why);
	assert_int_equal(vu_ring_pop(&f->ring, &f->mem, &f->ch), -1);
}

static void head_past_table(void **state)
{
	struct fix *f = *state;
	avail(f, 1, NUM);
	refused(f);
}

static void next_past_table(void **state)
{
	struct fix *f = *state;
	desc(f, 0, GPA + DATA_OFF, 4, 1, NUM + 3);
	avail(f, 1, 0);
	refused(f);
}

static void chain_that_loops(void **state)
{
	struct fix *f = *state;
	desc(f, 0, GPA + DATA_OFF, 4, 1, 1);
	desc(f, 1, GPA + DATA_OFF, 4, 1, 0);
	avail(f, 1, 0);
	refused(f);
	assert_string_equal(f->ring.why, "descriptor chain loops");
}

static void self_loop(void **state)
{
	struct fix *f = *state;
	desc(f, 4, GPA + DATA_OFF, 4, 2 | 1, 4);
	avail(f, 1, 4);
	refused(f);
}

static void buffer_outside_memory(void **state)
{
	struct fix *f = *state;
	desc(f, 0, GPA - 16, 8, 0, 0);
	avail(f, 1, 0);
	refused(f);
}

static void length_that_lies(void **state)
{
	struct fix *f = *state;
	/* starts inside, claims to run past the end of memory */
	desc(f, 0, GPA + MEMSZ - 8, 9, 0, 0);
	avail(f, 1, 0);
	refused(f);
}

static void address_that_wraps(void **state)
{
	struct fix *f = *state;
	desc(f, 0, UINT64_MAX - 3, 0xffffffffu, 0, 0);
	avail(f, 1, 0);
	refused(f);
}

static void indirect_not_offered(void **state)
{
	struct fix *f = *state;
	desc(f, 0, GPA + DATA_OFF, 16, 4, 0);
	avail(f, 1, 0);
	refused(f);
}

static void readable_after_writable(void **state)
{
	struct fix *f = *state;
	desc(f, 0, GPA + DATA_OFF, 4, 2 | 1, 1);
	desc(f, 1, GPA + DATA_OFF, 4, 0, 0);
	avail(f, 1, 0);
	refused(f);
}

static void avail_index_jumps(void **state)
{
	struct fix *f = *state;
	desc(f, 0, GPA + DATA_OFF, 4, 0, 0);
	avail(f, NUM + 1, 0);
	refused(f);
}

static void ring_outside_memory_is_not_mapped(void **state)
{
	struct fix *f = *state;
	struct vu_ring r = f->ring;

	r.used_qva = QVA + MEMSZ - 8;      /* used ring runs past the end */
	assert_int_equal(vu_ring_map(&r, &f->mem), -1);
	assert_null(r.desc);
	r = f->ring;
	r.desc_qva = QVA + 8;               /* misaligned table */
	assert_int_equal(vu_ring_map(&r, &f->mem), -1);
	r = f->ring;
	r.num = 6;                          /* not a power of two */
	assert_int_equal(vu_ring_map(&r, &f->mem), -1);
	/* an unmapped ring has nothing to give */
	assert_int_equal(vu_ring_pop(&r, &f->mem, &f->ch), 0);
}

static void memory_ranges(void **state)
{
	struct fix *f = *state;
	struct vu_mem m = f->mem;

	assert_ptr_equal(vu_mem_gpa(&m, GPA, MEMSZ), f->buf);
	assert_null(vu_mem_gpa(&m, GPA, MEMSZ + 1));
	assert_null(vu_mem_gpa(&m, GPA + MEMSZ, 1));
	assert_non_null(vu_mem_gpa(&m, GPA + MEMSZ, 0));
	assert_null(vu_mem_gpa(&m, GPA - 1, 2));
	assert_null(vu_mem_gpa(&m, UINT64_MAX, 2));
	assert_ptr_equal(vu_mem_qva(&m, QVA + 10, 10), f->buf + 10);
	assert_null(vu_mem_qva(&m, GPA, 1));
	/* a range across two adjacent regions is refused: one region each */
	m.n = 2;
	m.r[1] = (struct vu_region){ .gpa = GPA + MEMSZ, .size = 16, .qva = 0, .host = f->buf };
	assert_null(vu_mem_gpa(&m, GPA + MEMSZ - 4, 8));
}

static void hdr(struct vs_hdr *h, uint16_t op, uint32_t len)
{
	memset(h, 0, sizeof *h);
	h->src_cid = 3;
	h->dst_cid = VS_HOST_CID;
	h->src_port = 5000;
	h->dst_port = 1u << 30;
	h->type = VS_TYPE_STREAM;
	h->op = op;
	h->len = len;
}

static void packet_header_round_trip(void **state)
{
	struct vs_hdr h = { 3, 2, 1024, 77, 5, 1, 5, 3, 65536, 12345 }, g;
	uint8_t b[VS_HDR_LEN];

	(void)state;
	vs_hdr_encode(&h, b);
	assert_int_equal(b[0], 3);          /* little-endian, packed */
	assert_int_equal(b[16], 0);
	assert_int_equal(b[17], 4);         /* src_port 1024 */
	assert_int_equal(b[30], 5);         /* op */
	vs_hdr_decode(b, &g);
	assert_memory_equal(&g, &h, sizeof h);
}

static void packet_checks(void **state)
{
	struct vs_hdr h;

	(void)state;
	hdr(&h, VS_OP_RW, 100);
	assert_int_equal(vs_pkt_check(&h, 100, 3), VS_ACCEPT);
	assert_int_equal(vs_pkt_check(&h, 99, 3), VS_RESET);        /* len lies */
	hdr(&h, VS_OP_RW, VS_MAX_PAYLOAD + 1);
	assert_int_equal(vs_pkt_check(&h, 1u << 20, 3), VS_RESET);
	hdr(&h, VS_OP_REQUEST, 0);
	assert_int_equal(vs_pkt_check(&h, 0, 3), VS_ACCEPT);
	assert_int_equal(vs_pkt_check(&h, 0, 4), VS_DROP);         /* not from our guest */
	h.dst_cid = 7;
	assert_int_equal(vs_pkt_check(&h, 0, 3), VS_DROP);         /* not to the host */
	hdr(&h, VS_OP_RST, 0);
	assert_int_equal(vs_pkt_check(&h, 0, 3), VS_DROP);         /* resets go unanswered */
	hdr(&h, VS_OP_CREDIT_UPDATE, 4);
	assert_int_equal(vs_pkt_check(&h, 4, 3), VS_RESET);        /* data on a control op */
	hdr(&h, 0, 0);
	assert_int_equal(vs_pkt_check(&h, 0, 3), VS_RESET);
	hdr(&h, 8, 0);
	assert_int_equal(vs_pkt_check(&h, 0, 3), VS_RESET);
	hdr(&h, VS_OP_REQUEST, 0);
	h.type = VS_TYPE_SEQPACKET;
	assert_int_equal(vs_pkt_check(&h, 0, 3), VS_RESET);        /* not offered */
	hdr(&h, VS_OP_SHUTDOWN, 0);
	h.flags = VS_SHUTDOWN_RCV | VS_SHUTDOWN_SEND;
	assert_int_equal(vs_pkt_check(&h, 0, 3), VS_ACCEPT);
	h.flags = 4;
	assert_int_equal(vs_pkt_check(&h, 0, 3), VS_RESET);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(takes_a_chain_readable_then_writable, setup, teardown),
		cmocka_unit_test_setup_teardown(used_entry_and_index_are_written, setup, teardown),
		cmocka_unit_test_setup_teardown(chain_copies_cross_buffers, setup, teardown),
		cmocka_unit_test_setup_teardown(head_past_table, setup, teardown),
		cmocka_unit_test_setup_teardown(next_past_table, setup, teardown),
		cmocka_unit_test_setup_teardown(chain_that_loops, setup, teardown),
		cmocka_unit_test_setup_teardown(self_loop, setup, teardown),
		cmocka_unit_test_setup_teardown(buffer_outside_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(length_that_lies, setup, teardown),
		cmocka_unit_test_setup_teardown(address_that_wraps, setup, teardown),
		cmocka_unit_test_setup_teardown(indirect_not_offered, setup, teardown),
		cmocka_unit_test_setup_teardown(readable_after_writable, setup, teardown),
		cmocka_unit_test_setup_teardown(avail_index_jumps, setup, teardown),
		cmocka_unit_test_setup_teardown(ring_outside_memory_is_not_mapped, setup, teardown),
		cmocka_unit_test_setup_teardown(memory_ranges, setup, teardown),
		cmocka_unit_test(packet_header_round_trip),
		cmocka_unit_test(packet_checks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
