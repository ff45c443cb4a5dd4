/* The front door: the gateway's own listening socket. Each accepted
 * connection is first watched as a raw file fd ("gw-sniff"); its first
 * bytes are peeked (never read, but for empty lines before a plain
 * request) to find the Host header or the TLS SNI, then the socket is
 * handed to lws as an HTTP connection of the API vhost or as a raw
 * connection of the preview proxy (gw_proxy.c). Near the descriptor limit
 * the listener keeps accepting: the oldest connection that has not sent
 * its head gives way to a new one, and one that cannot be served is
 * answered 503, so nothing waits unanswered in the kernel's queue. */
#ifndef GW_FRONT_H
#define GW_FRONT_H
#include "../core/gw.h"

struct gw_front {
	struct gw_vh *vh;
	int tls;                 /* the vhost serves TLS: every connection is TLS */
	int devnull;             /* dup'd over a handed-over fd number (see why there) */
	int lfd;                 /* the listening socket */
	struct lws *lwsi;        /* its wsi (a raw file) */
	int spare;               /* given up to accept (and answer 503) at the limit */
	lws_sorted_usec_list_t accept_sul;   /* accepting again after EMFILE */
	struct lws_dll2_owner sniffs;        /* connections being sniffed, oldest first */
	unsigned round;          /* accept rounds so far (how old a sniffed connection is) */
	int head_timeout_s;      /* a request head must arrive within this */
	int idle_timeout_s;      /* a proxied connection with no traffic closes */
	int preview_stream;      /* never ask the runner for the guest socket itself */
	char peek[16 * 1024 + 5];  /* the first bytes of a connection (one loop: one user) */
};

/* per accepted connection while its first bytes are awaited */
struct gw_sniff {
	struct gw_front *f;
	struct lws *wsi;
	struct lws_dll2 list;        /* in f->sniffs */
	unsigned round;              /* f->round when it was accepted */
	lws_sorted_usec_list_t sul;  /* look again after a pause */
	int64_t t0_us;
	int npeek;                   /* peeks so far (the pause grows) */
};

int gw_front_listen_cb(struct lws *wsi, enum lws_callback_reasons reason,
		       void *user, void *in, size_t len);
int gw_front_sniff_cb(struct lws *wsi, enum lws_callback_reasons reason,
		      void *user, void *in, size_t len);

/* Bind and listen on addr:port (an IPv4 address stays IPv4; "::" style
 * addresses are IPv6-only), adopt the listener into the loop of f->vh's
 * vhost and set f->vh->port to the bound port. Call after the vhost exists
 * and the protocol privs are set. Returns 0, or -1 with err set. */
int gw_front_start(struct gw_front *f, const char *addr, int port, struct sbx_err *err);

/* Store f as the per-vhost data of the front and proxy protocols. */
int gw_front_bind_protocols(struct gw_front *f, const struct lws_protocols *prots);

#endif
