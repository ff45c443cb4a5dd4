#include "vs_pkt.h"

#include <endian.h>
#include <string.h>

/* field offsets of the packed little-endian header */
enum { O_SRC_CID = 0, O_DST_CID = 8, O_SRC_PORT = 16, O_DST_PORT = 20,
       O_LEN = 24, O_TYPE = 28, O_OP = 30, O_FLAGS = 32, O_BUF_ALLOC = 36,
       O_FWD_CNT = 40 };

static uint64_t g64(const uint8_t *b) { uint64_t v; memcpy(&v, b, 8); return le64toh(v); }
static uint32_t g32(const uint8_t *b) { uint32_t v; memcpy(&v, b, 4); return le32toh(v); }
static uint16_t g16(const uint8_t *b) { uint16_t v; memcpy(&v, b, 2); return le16toh(v); }
static void p64(uint8_t *b, uint64_t v) { v = htole64(v); memcpy(b, &v, 8); }
static void p32(uint8_t *b, uint32_t v) { v = htole32(v); memcpy(b, &v, 4); }
static void p16(uint8_t *b, uint16_t v) { v = htole16(v); memcpy(b, &v, 2); }

void vs_hdr_decode(const uint8_t b[VS_HDR_LEN], struct vs_hdr *h)
{
	h->src_cid = g64(b + O_SRC_CID);
	h->dst_cid = g64(b + O_DST_CID);
	h->src_port = g32(b + O_SRC_PORT);
	h->dst_port = g32(b + O_DST_PORT);
	h->len = g32(b + O_LEN);
	h->type = g16(b + O_TYPE);
	h->op = g16(b + O_OP);
	h->flags = g32(b + O_FLAGS);
	h->buf_alloc = g32(b + O_BUF_ALLOC);
	h->fwd_cnt = g32(b + O_FWD_CNT);
}

void vs_hdr_encode(const struct vs_hdr *h, uint8_t b[VS_HDR_LEN])
{
	p64(b + O_SRC_CID, h->src_cid);
	p64(b + O_DST_CID, h->dst_cid);
	p32(b + O_SRC_PORT, h->src_port);
	p32(b + O_DST_PORT, h->dst_port);
	p32(b + O_LEN, h->len);
	p16(b + O_TYPE, h->type);
	p16(b + O_OP, h->op);
	p32(b + O_FLAGS, h->flags);
	p32(b + O_BUF_ALLOC, h->buf_alloc);
	p32(b + O_FWD_CNT, h->fwd_cnt);
}

enum vs_verdict vs_pkt_check(const struct vs_hdr *h, uint64_t payload_avail,
                             uint64_t guest_cid)
{
	/* a packet that is not from our guest to us is answered by nobody,
	 * and a reset is never answered (two sides would bounce resets) */
	if (h->src_cid != guest_cid || h->dst_cid != VS_HOST_CID ||
	    h->op == VS_OP_RST)
		return VS_DROP;
	if (h->type != VS_TYPE_STREAM)
		return VS_RESET;
	if (h->op < VS_OP_REQUEST || h->op > VS_OP_CREDIT_REQUEST)
		return VS_RESET;
	if (h->len > payload_avail || h->len > VS_MAX_PAYLOAD)
		return VS_RESET;
	if (h->len && h->op != VS_OP_RW)
		return VS_RESET;
	if (h->op == VS_OP_SHUTDOWN &&
	    (h->flags & ~(VS_SHUTDOWN_RCV | VS_SHUTDOWN_SEND)))
		return VS_RESET;
	return VS_ACCEPT;
}
