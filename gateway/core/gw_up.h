/* One connection from the gateway to the runner, to a sandbox's agent or
 * to a guest socket the runner passed us: gw_up.c. Every upstream of the
 * gateway is one (a request's, a session's side operations, the preview
 * proxy's get/connect steps and its guest stream, the owner table's runner
 * calls); each owner gives it callbacks for what its bytes mean.
 *
 * It is adopted into lws as a raw child of the owner's wsi (closing the
 * client closes it). The first request goes to the runner; when a reply is
 * expected (GW_UP_REPLY, or a request waiting behind it) only that request
 * may go out until the reply came (the gate: the runner reads one request
 * frame, then may become a byte stream). The reply is parsed and its "ok"
 * checked here, once, for every owner. Writes happen only in
 * RAW_WRITEABLE, u->chunk bytes at a time. A runner on another host
 * (GW_RUNNER_TLS) is the same behind a TLS client (gw_tls.h): a
 * non-blocking TCP connect, the handshake, then the same queue and frames
 * through TLS; its failures to connect are told apart (gw_up_unreachable). */
#ifndef GW_UP_H
#define GW_UP_H
#include <stddef.h>
#include <libwebsockets.h>
#include <cJSON.h>
#include "sbx_buf.h"
#include "sbx_frame.h"

struct gw_vh;
struct gw_runner;
struct gw_up_tls;

enum gw_up_phase {
	GW_UP_NONE,    /* never opened */
	GW_UP_REPLY,   /* waiting for the runner's reply to the first request */
	GW_UP_OPEN,    /* frames (or, GW_UP_RAW, bytes) both ways */
	GW_UP_DONE,    /* closed */
};

/* gw_up_open flags */
#define GW_UP_REPLY    1u   /* the first request's reply goes to ops->reply */
#define GW_UP_RAW      2u   /* after the reply the connection is a byte stream */
#define GW_UP_PASS_FD  4u   /* the reply may carry a descriptor (SCM_RIGHTS) */
#define GW_UP_PROBE    8u   /* the status probe: goes to a runner marked down too */

/* gw_up_open results other than 0 */
enum gw_up_err { GW_UP_ECONNECT = -1, GW_UP_EADOPT = -2, GW_UP_ENOMEM = -3, GW_UP_ESEND = -4,
		 GW_UP_ENORUNNER = -5 /* no runner of that name (gw_runner_for_sid) */,
		 GW_UP_EDOWN = -6     /* the runner is down (gw_runner_unavailable_msg) */ };

/* `why` for a reply bigger than a frame may be (the proxy says so apart),
 * and for an agent that did not answer the dial's CONNECT with its OK */
extern const char gw_up_too_much[];
extern const char gw_up_dial_refused[];

struct gw_up;
/* Return values of reply, frame and bytes: 0 to go on, 1 when the
 * operation is complete, -1 after the owner reported a failure; on 1 and
 * -1 the connection closes (ops->closed is called with by_peer 0). A
 * callback may close u, or open it again, but then must not touch the
 * frame any more. */
struct gw_up_ops {
	/* The runner's reply to the first request: o the parsed object, or
	 * NULL with why saying what was wrong; ok its "ok". fd: a descriptor
	 * that came with it (GW_UP_PASS_FD) or -1; the callee owns it. */
	int (*reply)(struct gw_up *u, const cJSON *o, int ok, const char *why, int fd);
	/* Each frame after the reply (or every frame without a reply phase). */
	int (*frame)(struct gw_up *u, const struct sbx_frame *f);
	/* GW_UP_RAW: bytes after the reply. */
	int (*bytes)(struct gw_up *u, const void *p, size_t n);
	/* Optional: the peer's bytes are no frames (or too many); u closes. */
	void (*fail)(struct gw_up *u, const char *why);
	/* Optional: 0 holds the queue back in the open phase. */
	int (*may_send)(struct gw_up *u);
	/* Optional: after each write (resume whatever fills the queue). */
	void (*sent)(struct gw_up *u);
	/* Optional: a WRITEABLE found nothing to send in the open phase;
	 * nonzero closes (as a callback's 1). */
	int (*drained)(struct gw_up *u);
	/* Optional: the frames of one read (or of one WRITEABLE's TLS
	 * plaintext) were all handed over, and u is still open: what they
	 * queued may go on in one write. */
	void (*read_done)(struct gw_up *u);
	/* Optional: the connection ended other than by gw_up_close: by_peer
	 * when the socket closed on its own, and then lost when the peer went
	 * away (EOF or an error) rather than lws closing it with its parent. */
	void (*closed)(struct gw_up *u, int by_peer, int lost);
};

struct gw_up {
	struct gw_vh *vh;
	const struct gw_up_ops *ops;
	void *owner;
	struct lws *wsi;             /* NULL when not connected */
	enum gw_up_phase phase;
	unsigned flags;
	int direct;                  /* connected straight to the agent */
	int dial;                    /* direct: the agent's "OK 1024\n" comes first */
	struct sbx_buf out;          /* what goes to the peer */
	struct sbx_buf *q;           /* the queue written from: &out, or the owner's */
	struct sbx_buf in;           /* bytes read, not yet a whole frame */
	size_t gate;                 /* bytes of q that may go before the reply */
	size_t chunk;                /* bytes per lws_write (at most GW_UP_CHUNK_MAX) */
	int rx_paused;
	int held_fd;                 /* a passed descriptor whose frame is not complete */
	struct gw_up_tls *tls;       /* a runner on another host: its TLS session, else NULL */
	int unreachable;             /* the last failure: the runner was not reached (below) */
	char why[296];               /* the last connect or TLS failure, naming the runner */
	struct gw_runner *rn;        /* the runner asked (its replies show it alive; a TLS
				      * session's runner), or NULL (an agent's socket) */
	int keep;                    /* the request asked the runner to keep the connection */
	int nframes;                 /* frames the runner sent since */
	int uses;                    /* requests sent on this connection, this one counted */
	int64_t idle_ms;             /* parked (gw_up_keep.c): since when */
	/* set by the owner: stdout and stderr frames may reach ops->frame in
	 * pieces, each as its bytes are read, rather than whole (for an owner
	 * that takes output as bytes, not chunks: a WebSocket stream) */
	int pieces;
	uint32_t piece_left;         /* bytes of the frame in pieces still to come */
	enum sbx_frame_type piece_type;
};

#define GW_UP_CHUNK_MAX (64 * 1024)

/* Ready u for gw_up_open (once; gw_up_release undoes it). */
void gw_up_init(struct gw_up *u, struct gw_vh *vh, const struct gw_up_ops *ops, void *owner);
/* Connect and queue: reach sandbox sid's agent, straight to its socket
 * when its runner is on this host and the gateway knows the socket, else
 * through its runner, and then first must be the runner's `connect`.
 * first goes only through the runner; next (may be NULL) waits behind the
 * gate. Both are consumed. parent: the wsi whose close closes u (ignored
 * with GW_UP_PASS_FD: that socket is a raw file, see gw_up.c). 0, or a
 * gw_up_err with errno set for GW_UP_ECONNECT. */
int gw_up_open(struct gw_up *u, struct lws *parent, const char *sid, cJSON *first,
	       cJSON *next, unsigned flags);
/* The same through runner rn itself (first is its request); NULL rn is
 * GW_UP_ENORUNNER. GW_UP_PASS_FD only on a runner of this host. */
int gw_up_open_runner(struct gw_up *u, struct lws *parent, struct gw_runner *rn, cJSON *first,
		      cJSON *next, unsigned flags);
/* The runner's `connect` request for port `port` of sandbox sid (with
 * "fd":true when pass_fd). */
cJSON *gw_up_connect_req(const char *sid, int port, int pass_fd);
/* Take over a connected socket (a passed guest socket) in the open phase. */
int gw_up_adopt(struct gw_up *u, struct lws *parent, int fd, unsigned flags);
/* Queue bytes as frames of type t (split at the frame maximum; an EOF
 * frame for t EOF). 0, or -1 out of memory. */
int gw_up_send(struct gw_up *u, enum sbx_frame_type t, const void *p, size_t n);
/* Whether the last failure (ops->reply with no object, ops->fail, or a
 * GW_UP_ECONNECT result) means the runner was never reached: its TCP
 * connect was refused, failed or took longer than GW_UP_TLS_CONNECT_S, or
 * the TLS handshake failed either way (a certificate of another CA, a
 * certificate not naming the runner). Nothing of the request reached the
 * runner; u->why says why with the runner's address (logged once here).
 * Callers answer 503 runner_unavailable. Only TLS runners set it today: a
 * UNIX runner's connect fails at once, as GW_UP_ECONNECT. */
int gw_up_unreachable(const struct gw_up *u);
/* Whether u's TCP connect to its runner (TLS) is still unanswered: the
 * runner's host has not even completed the handshake its kernel makes
 * for a live process, however busy. 0 for UNIX connections. */
int gw_up_connect_unanswered(const struct gw_up *u);
/* Whether the TLS runner u is connected to has a certificate naming name
 * (X509_check_host): 1 yes; 0 no, or not a TLS connection past its
 * handshake. For a name learned from the runner's first status reply. */
int gw_up_peer_names(struct gw_up *u, const char *name);
/* A TLS runner's TCP connect and handshake together get this long. */
#define GW_UP_TLS_CONNECT_S 5

/* Kept-alive control connections to TLS runners (gw_up_keep.c). A runner
 * operation of one request and one reply (not a connect, an image import
 * or pull, a create, nor a runner that does not say it keeps connections
 * in its status) asks the runner to keep the connection; once the owner
 * took the reply, the connection waits in its runner's idle list for the
 * next such request, which then needs no TCP connect and no TLS
 * handshake. The status probe rides on them too. Bounds: GW_UP_IDLE_MAX
 * idle per runner; GW_UP_KEEP_USES requests per connection (below the
 * runner's own bound, RN_KEEP_REQUESTS); one idle GW_UP_KEEP_IDLE_MS
 * closes (the runner waits RN_KEEP_IDLE_MS, longer, so it never closes
 * one we are about to use). Creates are never sent on them: a request on
 * a kept connection is ended when its runner is marked down meanwhile (a
 * host that vanished leaves no other sign), and a create cut short would
 * leave a sandbox nobody was told of. */
#define GW_UP_IDLE_MAX      4
#define GW_UP_KEEP_USES     500
#define GW_UP_KEEP_IDLE_MS  10000
/* Close rn's idle connections idle longer than GW_UP_KEEP_IDLE_MS (all of
 * them with all set: its runner is down, forgotten, or suspect). */
void gw_up_keep_sweep(struct gw_runner *rn, int64_t now_ms, int all);

/* Ask for a WRITEABLE (after the owner filled its own queue). */
void gw_up_want_write(struct gw_up *u);
/* The queue's first chunk (u->chunk) on the wire now, from outside a
 * WRITEABLE: a plain socket in the open phase whose earlier bytes all left
 * (lws holds none of them). Saves the loop turn a WRITEABLE costs, per
 * request of the preview proxy. Otherwise, and for the rest of the queue,
 * as gw_up_want_write. ops->sent is not called (the caller is filling the
 * queue). */
void gw_up_write_now(struct gw_up *u);
/* Stop (1) or resume (0) reading the peer. */
void gw_up_pause(struct gw_up *u, int pause);
/* Close (asynchronously; safe from any callback); ops->closed is not
 * called. The queues stay until gw_up_release. */
void gw_up_close(struct gw_up *u);
/* Close and free the queues. */
void gw_up_release(struct gw_up *u);
/* Bytes still queued. */
size_t gw_up_queued(const struct gw_up *u);

int gw_up_callback(struct lws *wsi, enum lws_callback_reasons reason,
		   void *user, void *in, size_t len);
#endif
