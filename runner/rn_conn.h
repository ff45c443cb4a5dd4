/* Control connections: one JSON request frame, one JSON reply frame (and
 * again, when the request asked to keep the connection); a connect
 * request turns the connection into a spliced byte stream to the
 * sandbox's agent socket. */
#ifndef RN_CONN_H
#define RN_CONN_H

#include <cJSON.h>

#include "runner.h"

#define RN_MAX_CONNS 4096
/* Spliced connections (`connect` without "fd") to one sandbox: a quarter
 * of all, so one tenant's previews or streams cannot take every
 * connection of the runner; beyond it `connect` answers
 * too_many_connections. */
#define RN_MAX_CONNS_PER_SANDBOX 1024
/* ... and to all the sandboxes of one owner tag (one API key): half, so a
 * tenant with several sandboxes still leaves the others room. */
#define RN_MAX_CONNS_PER_OWNER 2048
#define RN_REQ_MAX (64u * 1024)         /* request frame payload cap */
#define RN_REQ_TIMEOUT_MS 10000         /* whole request must arrive in */
#define RN_HANDSHAKE_TIMEOUT_MS 5000
#define RN_SPLICE_BUF (256u * 1024)     /* per direction */
/* Kept-alive control connections: a request with "keep":true leaves its
 * connection open for the next request once its reply went out (never a
 * connect's or an import's, which take the connection over). At most
 * RN_KEEP_REQUESTS requests on one connection (the last one's reply
 * closes it), and one idle for RN_KEEP_IDLE_MS closes; a gateway keeps
 * its own bounds below both (gateway/core/gw_up_keep.c), so it never
 * sends on a connection the runner is closing. */
#define RN_KEEP_REQUESTS 1000
#define RN_KEEP_IDLE_MS 60000

struct rn_conn;

/* READY: running; FINAL: ended; CONNECT: running, then the connect;
 * REDO: running, then the request again (rn_conn_wait_redo); PAUSE: a
 * pause off the loop over (paused, or its error); SETTLED: no pause or
 * resume in progress, then the request again (rn_conn_wait_settled). */
enum rn_wait { RN_WAIT_READY, RN_WAIT_FINAL, RN_WAIT_CONNECT, RN_WAIT_REDO, RN_WAIT_PAUSE,
	       RN_WAIT_SETTLED };

/* Accept every pending connection on the listening fd. -1 when accept
 * failed for want of descriptors or memory (errno set): pause listening. */
int rn_conn_accept(struct runner *r, int listen_fd);
/* Serve the control protocol on fd, a connected non-blocking stream
 * socket, whose request must be complete by deadline (monotonic ms).
 * remote: the peer is not on this host (it came over TLS, runner/rn_tls.c):
 * no descriptor is ever passed to it and `drain` is refused. 0, or -1 when
 * the runner holds RN_MAX_CONNS already or is out of memory (fd closed). */
int rn_conn_adopt(struct runner *r, int fd, int remote, int64_t deadline);
/* 1 when c came from a peer not on this host. */
int rn_conn_remote(const struct rn_conn *c);
/* Send {"ok":true, <key>: obj} (obj consumed; key may be NULL). */
void rn_conn_reply_ok(struct rn_conn *c, const char *key, cJSON *obj);
/* Send obj as the whole reply (consumed). */
void rn_conn_reply_obj(struct rn_conn *c, cJSON *obj);
/* Send {"ok":false,"error":{"code":code,"message":msg}}. */
void rn_conn_reply_err(struct rn_conn *c, const char *code, const char *msg);
/* Reply later, when sb reaches the state kind asks for. */
void rn_conn_wait(struct rn_conn *c, struct rn_sandbox *sb, enum rn_wait kind);
/* Start the hybrid vsock handshake to port on sb's agent socket; replies
 * {"ok":true} and splices once the guest said OK. */
void rn_conn_connect(struct rn_conn *c, struct rn_sandbox *sb, int port);
/* Reply {"ok":true} with fd attached (SCM_RIGHTS) and close the
 * connection; fd is closed here in every case. */
void rn_conn_reply_fd(struct rn_conn *c, int fd);
/* Take c's socket out of the loop for a process of its own (an image
 * import, rn_image_import.c): the descriptor, made blocking, and the bytes
 * that came after the request frame (copied to *pending, malloc'd, *n).
 * c is closed without closing the socket. -1 when out of memory (c left
 * as it was). */
int rn_conn_take(struct rn_conn *c, unsigned char **pending, size_t *n);
/* Park c until rn_conn_unpark(on): its request req (owned now) waits for
 * something of its own (a create's image pull, rn_image_pull_create.c).
 * A client that hangs up meanwhile is closed and its request dropped. */
void rn_conn_park(struct rn_conn *c, const void *on, cJSON *req);
/* Resume every connection parked on on: fn(r, c, req, arg) for each, which
 * must reply (req is freed after). How many there were. */
typedef void (*rn_conn_resume_fn)(struct runner *r, struct rn_conn *c, const cJSON *req,
				  void *arg);
int rn_conn_unpark(struct runner *r, const void *on, rn_conn_resume_fn fn, void *arg);
/* Tell waiting connections that sb changed state. */
void rn_conn_sandbox_changed(struct runner *r, struct rn_sandbox *sb);
int rn_conn_waiting_on(const struct rn_sandbox *sb);
/* A connect that resumed sb (rn_persist.h): made once sb runs (now, or
 * when it is ready), its ok saying "resumed":true. */
void rn_conn_wait_connect(struct rn_conn *c, struct rn_sandbox *sb, int port, int want_fd);
/* A request on a kept persistent sandbox that is being resumed: req (copied)
 * is handled again (rn_api_handle) once sb runs, its ok saying "resumed";
 * an error when sb ends before that. */
void rn_conn_wait_redo(struct rn_conn *c, struct rn_sandbox *sb, const cJSON *req);
/* A request on sb while a pause or resume of it runs off the loop: req
 * (copied) is handled again once that is over. */
void rn_conn_wait_settled(struct rn_conn *c, struct rn_sandbox *sb, const cJSON *req);
/* c's reply says "resumed":true (it brought its sandbox back first). */
void rn_conn_set_resumed(struct rn_conn *c);
/* Free closed connections, time out slow ones. Returns ms until the next
 * connection deadline (-1 none). */
int rn_conn_sweep(void);
/* Close everything (shutdown). */
void rn_conn_close_all(void);

/* Implemented in rn_api.c: handle one parsed request. */
void rn_api_handle(struct runner *r, struct rn_conn *c, const cJSON *req);
/* A request with "resume":true on a kept persistent sb brings it back
 * first: 0 to go on (nothing to resume, or it runs again already), 1 when
 * c was answered (an error) or waits (rn_conn_wait_redo). */
int rn_api_resume_first(struct runner *r, struct rn_conn *c, struct rn_sandbox *sb,
			const cJSON *req);
/* "resume_limit":N (the gateway's: the owner's key is at its sandbox limit)
 * on a request that would bring kept sb back: 1 after refusing it with
 * limit_reached, else 0. */
int rn_api_resume_refused(struct rn_conn *c, const struct rn_sandbox *sb, const cJSON *req);
/* ... and the connect of a running sb to port (want_fd: pass the socket). */
void rn_api_connect(struct runner *r, struct rn_conn *c, struct rn_sandbox *sb, int port,
		    int want_fd);

#endif
