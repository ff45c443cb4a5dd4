/* The virtio-vsock packet header (virtio 1.2, 5.10.6) and the check of a
 * packet the guest sent, before any connection is looked at. */
#ifndef VS_PKT_H
#define VS_PKT_H

#include <stddef.h>
#include <stdint.h>

#define VS_HDR_LEN 44
#define VS_HOST_CID 2
#define VS_MAX_PAYLOAD 65536        /* more in one packet is refused */

enum vs_type { VS_TYPE_STREAM = 1, VS_TYPE_SEQPACKET = 2 };

enum vs_op {
	VS_OP_INVALID = 0,
	VS_OP_REQUEST = 1,
	VS_OP_RESPONSE = 2,
	VS_OP_RST = 3,
	VS_OP_SHUTDOWN = 4,
	VS_OP_RW = 5,
	VS_OP_CREDIT_UPDATE = 6,
	VS_OP_CREDIT_REQUEST = 7,
};

#define VS_SHUTDOWN_RCV  1u
#define VS_SHUTDOWN_SEND 2u

struct vs_hdr {
	uint64_t src_cid, dst_cid;
	uint32_t src_port, dst_port;
	uint32_t len;
	uint16_t type, op;
	uint32_t flags;
	uint32_t buf_alloc, fwd_cnt;
};

/* What to do with a packet from the guest. */
enum vs_verdict {
	VS_ACCEPT,     /* well formed: hand it to its connection */
	VS_DROP,       /* not ours to answer (wrong addresses, a reset): ignore */
	VS_RESET,      /* well addressed but unusable: answer with a reset */
};

void vs_hdr_decode(const uint8_t b[VS_HDR_LEN], struct vs_hdr *h);
void vs_hdr_encode(const struct vs_hdr *h, uint8_t b[VS_HDR_LEN]);

/* Check a header whose chain carried payload_avail bytes after it, from
 * the guest with CID guest_cid. A length that claims more than the chain
 * holds or than VS_MAX_PAYLOAD, data on an op that carries none, an op or
 * type we do not know: the answer says which of the verdicts applies. */
enum vs_verdict vs_pkt_check(const struct vs_hdr *h, uint64_t payload_avail,
                             uint64_t guest_cid);

#endif
