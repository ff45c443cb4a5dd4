/* Between the proxy's client side (gw_proxy.c) and its upstream
 * (gw_proxy_up.c): internal to the preview proxy. */
#ifndef GW_PROXY_UP_H
#define GW_PROXY_UP_H
#include "gw_proxy.h"

/* Ask the runner whether c->sid exists and declares c->port, then open the
 * `connect` stream; on success the held head goes out and the client is
 * read again; on failure the client gets 404/403/502. */
void gw_proxy_up_route(struct gw_pconn *c);
/* Close the upstream (asynchronously; safe from any callback). */
void gw_proxy_up_close(struct gw_pconn *c);
/* Ready c->up (its queue is c->to_up). */
void gw_proxy_up_init(struct gw_pconn *c);

/* gw_proxy.c */
void gw_proxy_fail(struct gw_pconn *c, int status, const char *msg);
/* Answer status with extra header lines (each ending CRLF) and a short
 * HTML page saying msg, then close (as gw_proxy_fail, without counting an
 * error). */
void gw_proxy_answer(struct gw_pconn *c, int status, const char *extra, const char *msg);
void gw_proxy_process(struct gw_pconn *c);
void gw_proxy_pause_client(struct gw_pconn *c, int pause);
/* Bytes from the guest, queued for the client through the response
 * checks (gw_presp.h); -1 when a response was refused and the connection
 * ends (answered). */
int gw_proxy_guest_bytes(struct gw_pconn *c, const void *in, size_t len);
/* What the guest sent, on its way to the client now: written at once
 * unless lws still holds earlier bytes of the client's (a loop turn saved
 * per response); the rest, and a close after it, in its WRITEABLE. */
void gw_proxy_client_flush(struct gw_pconn *c);
/* Bytes from the guest (already queued for the client): watches the
 * status line of its first response, which decides an upgrade. */
void gw_proxy_guest_rx(struct gw_pconn *c, const void *in, size_t len);
#endif
