#include "vu_proto.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sbx_log.h"

enum {
	GET_FEATURES = 1, SET_FEATURES = 2, SET_OWNER = 3, RESET_OWNER = 4,
	SET_MEM_TABLE = 5, SET_VRING_NUM = 8, SET_VRING_ADDR = 9,
	SET_VRING_BASE = 10, GET_VRING_BASE = 11, SET_VRING_KICK = 12,
	SET_VRING_CALL = 13, SET_VRING_ERR = 14, GET_PROTOCOL_FEATURES = 15,
	SET_PROTOCOL_FEATURES = 16, GET_QUEUE_NUM = 17, SET_VRING_ENABLE = 18,
	GET_CONFIG = 24, SET_CONFIG = 25,
};

#define F_VERSION_1          (1ull << 32)
#define F_PROTOCOL_FEATURES  (1ull << 30)
#define PF_REPLY_ACK         (1ull << 3)
#define PF_CONFIG            (1ull << 9)

#define FLAG_VERSION    0x1u
#define FLAG_REPLY      0x4u
#define FLAG_NEED_REPLY 0x8u
#define VRING_NOFD      0x100u

#define MAX_FDS 8
#define PAYLOAD_MAX 512   /* the largest message we take: the memory table */

struct msg {
	uint32_t req, flags, size;
	union {
		uint64_t u64;
		struct { uint32_t index, num; } state;
		struct { uint32_t index, flags; uint64_t desc, used, avail, log; } addr;
		struct {
			uint32_t n, pad;
			struct { uint64_t gpa, size, qva, off; } r[VU_MEM_MAX];
		} mem;
		struct { uint32_t offset, size, flags; uint8_t data[256]; } cfg;
		uint8_t raw[PAYLOAD_MAX];
	} p;
} __attribute__((packed));

#define HDR_LEN 12

void vu_dev_init(struct vu_dev *d, uint64_t guest_cid)
{
	memset(d, 0, sizeof *d);
	d->sock = -1;
	d->guest_cid = guest_cid;
	for (int q = 0; q < VU_NQ; q++) {
		d->kick[q] = d->call[q] = -1;
		d->enabled[q] = 1;
	}
}

int vu_dev_ring_live(const struct vu_dev *d, int q)
{
	return d->kick[q] >= 0 && d->ring[q].desc && d->enabled[q] &&
	       !d->ring[q].broken;
}

void vu_dev_call(struct vu_dev *d, int q)
{
	uint64_t one = 1;

	if (d->call[q] >= 0 && vu_ring_wants_call(&d->ring[q]) &&
	    write(d->call[q], &one, sizeof one) < 0 && errno != EAGAIN)
		sbx_warn("call fd of ring %d: %s", q, strerror(errno));
}

static void close_fds(int *fds, int n)
{
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* One message: the header with any fds, then its payload. */
static int recv_msg(int sock, struct msg *m, int *fds, int *nfds)
{
	char cbuf[CMSG_SPACE(MAX_FDS * sizeof(int))];
	struct iovec iov = { m, HDR_LEN };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
	                     .msg_control = cbuf, .msg_controllen = sizeof cbuf };
	struct cmsghdr *c;
	ssize_t n;

	*nfds = 0;
	n = recvmsg(sock, &mh, MSG_WAITALL | MSG_CMSG_CLOEXEC);
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			memcpy(fds + *nfds, CMSG_DATA(c), (size_t)k * sizeof(int));
			*nfds += k;
		}
	}
	if (n == 0)
		return -1;
	if (n != HDR_LEN || (mh.msg_flags & MSG_CTRUNC)) {
		sbx_err_log("front end: short header or too many fds");
		return -1;
	}
	if ((m->flags & 0x3) != FLAG_VERSION || m->size > PAYLOAD_MAX) {
		sbx_err_log("front end: request %u: version %u, size %u refused",
		            m->req, m->flags & 0x3, m->size);
		return -1;
	}
	if (m->size && recv(sock, &m->p, m->size, MSG_WAITALL) != (ssize_t)m->size) {
		sbx_err_log("front end: request %u: short payload", m->req);
		return -1;
	}
	return 0;
}

static int reply(struct vu_dev *d, struct msg *m, uint32_t size)
{
	m->flags = FLAG_VERSION | FLAG_REPLY;
	m->size = size;
	if (send(d->sock, m, HDR_LEN + size, MSG_NOSIGNAL) != (ssize_t)(HDR_LEN + size)) {
		sbx_err_log("front end: reply to %u: %s", m->req, strerror(errno));
		return -1;
	}
	return 0;
}

static int reply_u64(struct vu_dev *d, struct msg *m, uint64_t v)
{
	m->p.u64 = v;
	return reply(d, m, 8);
}

static void remap_rings(struct vu_dev *d)
{
	for (int q = 0; q < VU_NQ; q++)
		if (d->ring[q].num && d->ring[q].desc_qva)
			vu_ring_map(&d->ring[q], &d->mem);
}

static int set_mem_table(struct vu_dev *d, struct msg *m, int *fds, int nfds)
{
	uint32_t n = m->p.mem.n;

	if (m->size < 8 || n > VU_MEM_MAX || m->size < 8 + 32 * n ||
	    (uint32_t)nfds != n) {
		sbx_err_log("front end: memory table of %u regions, %d fds, %u bytes refused",
		            n, nfds, m->size);
		return -1;
	}
	vu_mem_clear(&d->mem);
	for (uint32_t i = 0; i < n; i++) {
		if (vu_mem_add(&d->mem, fds[i], m->p.mem.r[i].gpa, m->p.mem.r[i].size,
		               m->p.mem.r[i].qva, m->p.mem.r[i].off) < 0) {
			sbx_err_log("front end: region %u (gpa %#llx, %llu bytes): %s", i,
			            (unsigned long long)m->p.mem.r[i].gpa,
			            (unsigned long long)m->p.mem.r[i].size, strerror(errno));
			vu_mem_clear(&d->mem);
			return -1;
		}
	}
	remap_rings(d);
	return 0;
}

/* The ring a state/address/fd message names, or NULL (logged). */
static struct vu_ring *ring_of(struct vu_dev *d, uint32_t index, uint32_t req)
{
	if (index >= VU_NQ) {
		sbx_err_log("front end: request %u names ring %u of %d", req, index, VU_NQ);
		return NULL;
	}
	return &d->ring[index];
}

static int set_vring_fd(struct vu_dev *d, struct msg *m, int *fds, int nfds)
{
	uint32_t index = (uint32_t)(m->p.u64 & 0xff);
	int nofd = (m->p.u64 & VRING_NOFD) != 0, fd;

	if (m->size < 8 || !ring_of(d, index, m->req) || nofd != (nfds == 0) || nfds > 1) {
		sbx_err_log("front end: request %u: ring fd refused (polling mode is not offered)",
		            m->req);
		return -1;
	}
	fd = fds[0];
	fds[0] = -1;
	if (m->req == SET_VRING_ERR) {
		close(fd);
		return 0;
	}
	if (m->req == SET_VRING_CALL) {
		if (d->call[index] >= 0)
			close(d->call[index]);
		d->call[index] = fd;
		return 0;
	}
	if (d->kick[index] >= 0) {
		d->watch_kick(d->owner, (int)index, d->kick[index], -1);
		close(d->kick[index]);
	}
	d->kick[index] = fd;
	d->ring[index].broken = 0;
	d->watch_kick(d->owner, (int)index, -1, fd);
	return 0;
}

static int get_vring_base(struct vu_dev *d, struct msg *m)
{
	struct vu_ring *r = ring_of(d, m->p.state.index, m->req);

	if (m->size < 8 || !r)
		return -1;
	/* the ring stops: no connection survives a device stop */
	if (d->kick[m->p.state.index] >= 0) {
		d->watch_kick(d->owner, (int)m->p.state.index, d->kick[m->p.state.index], -1);
		close(d->kick[m->p.state.index]);
		d->kick[m->p.state.index] = -1;
	}
	d->rings_stopped(d->owner);
	m->p.state.num = r->last_avail;
	r->desc = r->avail = r->used = NULL;
	return reply(d, m, 8);
}

static int get_config(struct vu_dev *d, struct msg *m)
{
	uint8_t cfg[8];
	uint64_t cid = d->guest_cid;
	uint32_t off = m->p.cfg.offset, size = m->p.cfg.size;

	memcpy(cfg, &cid, 8);   /* le64 guest_cid; this host is little-endian */
	if (m->size < 12 || off > sizeof cfg || size > sizeof cfg - off ||
	    m->size != 12 + size) {
		sbx_err_log("front end: config read of %u bytes at %u refused", size, off);
		return reply(d, m, 0);   /* an empty reply is the front end's error */
	}
	memcpy(m->p.cfg.data, cfg + off, size);
	return reply(d, m, 12 + size);
}

/* Handle m; returns 1 when a reply was already sent, 0, -1 on error. */
static int dispatch(struct vu_dev *d, struct msg *m, int *fds, int nfds)
{
	struct vu_ring *r;

	switch (m->req) {
	case GET_FEATURES:
		return reply_u64(d, m, F_VERSION_1 | F_PROTOCOL_FEATURES) ? -1 : 1;
	case SET_FEATURES:
		d->features = m->p.u64;
		return 0;
	case GET_PROTOCOL_FEATURES:
		return reply_u64(d, m, PF_REPLY_ACK | PF_CONFIG) ? -1 : 1;
	case SET_PROTOCOL_FEATURES:
		d->proto = m->p.u64 & (PF_REPLY_ACK | PF_CONFIG);
		return 0;
	case GET_QUEUE_NUM:
		return reply_u64(d, m, VU_NQ) ? -1 : 1;
	case SET_OWNER:
	case SET_CONFIG:
		return 0;
	case RESET_OWNER:
		d->rings_stopped(d->owner);
		return 0;
	case SET_MEM_TABLE:
		return set_mem_table(d, m, fds, nfds);
	case SET_VRING_NUM:
		if (m->size < 8 || !(r = ring_of(d, m->p.state.index, m->req)) ||
		    !vu_ring_num_ok(m->p.state.num))
			return -1;
		r->num = m->p.state.num;
		r->desc = r->avail = r->used = NULL;
		return 0;
	case SET_VRING_BASE:
		if (m->size < 8 || !(r = ring_of(d, m->p.state.index, m->req)))
			return -1;
		r->last_avail = (uint16_t)m->p.state.num;
		r->used_idx = (uint16_t)m->p.state.num;
		return 0;
	case SET_VRING_ADDR:
		if (m->size < sizeof m->p.addr || !(r = ring_of(d, m->p.addr.index, m->req)))
			return -1;
		r->desc_qva = m->p.addr.desc;
		r->avail_qva = m->p.addr.avail;
		r->used_qva = m->p.addr.used;
		if (vu_ring_map(r, &d->mem) < 0) {
			sbx_err_log("front end: ring %u addresses outside shared memory",
			            m->p.addr.index);
			return -1;
		}
		/* the used index the driver last saw is in its memory */
		r->used_idx = (uint16_t)(((uint8_t *)r->used)[2] | ((uint8_t *)r->used)[3] << 8);
		return 0;
	case GET_VRING_BASE:
		return get_vring_base(d, m) ? -1 : 1;
	case SET_VRING_KICK:
	case SET_VRING_CALL:
	case SET_VRING_ERR:
		return set_vring_fd(d, m, fds, nfds);
	case SET_VRING_ENABLE:
		if (m->size < 8 || !ring_of(d, m->p.state.index, m->req))
			return -1;
		d->enabled[m->p.state.index] = m->p.state.num != 0;
		return 0;
	case GET_CONFIG:
		return get_config(d, m) ? -1 : 1;
	default:
		sbx_warn("front end: request %u not offered, ignored", m->req);
		return 0;
	}
}

int vu_dev_handle(struct vu_dev *d)
{
	struct msg m;
	int fds[MAX_FDS], nfds, rc;
	uint32_t need_reply;

	memset(&m, 0, sizeof m);
	if (recv_msg(d->sock, &m, fds, &nfds) < 0) {
		close_fds(fds, nfds);
		return -1;
	}
	need_reply = (m.flags & FLAG_NEED_REPLY) && (d->proto & PF_REPLY_ACK);
	rc = dispatch(d, &m, fds, nfds);
	close_fds(fds, nfds);
	if (rc == 1)
		return 0;
	if (need_reply)
		return reply_u64(d, &m, rc < 0 ? 1 : 0);
	/* without a way to say no, a refused setup message leaves the
	 * device unusable: better ended than half set up */
	return rc < 0 ? -1 : 0;
}

void vu_dev_free(struct vu_dev *d)
{
	for (int q = 0; q < VU_NQ; q++) {
		if (d->kick[q] >= 0)
			close(d->kick[q]);
		if (d->call[q] >= 0)
			close(d->call[q]);
		d->kick[q] = d->call[q] = -1;
	}
	vu_mem_clear(&d->mem);
	if (d->sock >= 0)
		close(d->sock);
	d->sock = -1;
}
