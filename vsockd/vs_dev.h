/* The virtio-vsock device behind the vhost-user rings, and its host side:
 * Firecracker's hybrid vsock. A client of the host UNIX socket writes
 * "CONNECT <port>\n"; the device asks the guest (REQUEST), and on the
 * guest's RESPONSE answers "OK <port>\n" and the socket is the stream.
 *
 * Flow control is the guest's credit both ways, and nothing is buffered
 * without bound:
 *  - host -> guest: bytes are read from the client straight into the
 *    guest's receive buffers, never more than the guest's credit; with no
 *    credit (or no buffers) the client is not read, so a writer whose
 *    guest stops reading is paused by its own socket's buffer;
 *  - guest -> host: each connection has VS_BUF_ALLOC bytes, the credit it
 *    gives the guest; a guest that sends past it is reset.
 * Packets that name no connection are answered with a reset (bounded
 * queue); a broken ring ends every connection.
 *
 * With a relay port R (vsockd --relay-port), "CONNECT <R>" is as above and
 * every other "CONNECT <p>" goes to the guest's port R with the line
 * itself as its first bytes: the guest's listener there (the agent) does
 * the handshake and answers "OK <p>" or closes, so one guest listener
 * serves every port (the agent's forward to 127.0.0.1:p). */
#ifndef VS_DEV_H
#define VS_DEV_H

#include <stdint.h>

#include "vu_proto.h"

#define VS_BUF_ALLOC (64 * 1024)
#define VS_MAX_CONNS 256
#define VS_RST_QUEUE 64

struct vs_conn;

struct vs_rst { uint32_t host_port, guest_port; };

struct vs_dev {
	struct vu_dev vu;
	int epfd;
	struct vs_conn *conns[VS_MAX_CONNS];
	unsigned nconns;
	uint32_t next_port;                /* host-side ports we hand out */
	struct vs_rst rst[VS_RST_QUEUE];   /* resets owed with no connection */
	unsigned rst_head, rst_len;
	uint32_t relay_port;               /* 0, or the port other ports go through */
	int rx_starved;                    /* the guest gave no receive buffer */
	int rx_used, tx_used;              /* used entries not yet signalled */
	unsigned long long dropped;        /* packets ignored, for the log */
};

/* Tags of what epoll reports (the first field of each watched struct). */
enum vs_ev_kind { VS_EV_VHOST, VS_EV_KICK_RX, VS_EV_KICK_TX, VS_EV_LISTEN, VS_EV_CLIENT };

void vs_dev_init(struct vs_dev *d, int epfd, uint64_t guest_cid);

/* A client accepted on the hybrid socket (non-blocking). */
void vs_dev_client(struct vs_dev *d, int fd);

/* epoll events of a client (ptr from the event) */
void vs_dev_client_event(struct vs_dev *d, void *ptr, uint32_t events);

/* The guest kicked ring q. */
void vs_dev_kick(struct vs_dev *d, int q);

/* Close every connection (the guest is not told). */
void vs_dev_close_all(struct vs_dev *d);

#endif
