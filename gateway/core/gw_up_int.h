/* What gw_up.c and its keep-alive pool (gw_up_keep.c) share, no one else. */
#ifndef GW_UP_INT_H
#define GW_UP_INT_H
#include "gw_tls.h"
#include "gw_up.h"

/* A TLS runner connection's state beside its gw_up (malloc'd: UNIX
 * connections, the most, pay nothing for it). It moves with the socket
 * when a kept-alive connection passes from one gw_up to the next. */
struct gw_up_tls {
	struct gw_tls t;
	int connecting;              /* TCP connect not finished */
	int got_plain;               /* the runner's plaintext came: it was reached */
	int timed_out;               /* the deadline below closed it */
	int runner_down;             /* closed because its runner was marked down meanwhile */
	lws_usec_t t0;               /* when the connect began */
	lws_sorted_usec_list_t sul;  /* connect + handshake deadline (GW_UP_TLS_CONNECT_S);
				      * not an lws timeout: owners set their own */
	int reused;                  /* a kept connection carrying its next request: until
				      * the reply, its runner marked down ends it */
	struct gw_up *u;
	char addr[128];              /* the runner's address, for messages */
};

/* gw_up_keep.c: whether u's request may leave its connection for the next
 * (adds "keep":true to first when so). */
int gw_up_keep_wanted(const struct gw_up *u, const struct gw_runner *rn, cJSON *first,
		      const cJSON *next, unsigned flags);
/* Give u an idle connection of rn's (1), or none is there (0). */
int gw_up_keep_take(struct gw_up *u, struct gw_runner *rn);
/* u's request is complete on wsi: park the connection for the next
 * request (1; ops->closed(u, 0, 0) was called, u is the owner's again),
 * or it cannot be kept (0: close it as before). */
int gw_up_keep_park(struct gw_up *u, struct lws *wsi);
#endif
