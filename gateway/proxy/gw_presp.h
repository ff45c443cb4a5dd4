/* The guest's responses on a preview connection, as the browser will read
 * them (gw_presp.c). Each response head is parsed before it goes on, so
 * that a sandbox's cookies stay its own:
 * - a Set-Cookie's Domain attribute is removed, which makes the cookie
 *   host-only: one preview cannot plant cookies that every other preview
 *   of the same domain then receives (cookie tossing);
 * - a Set-Cookie of the gateway's own token cookie is dropped, so a guest
 *   cannot displace or fixate it.
 * The body is passed through as bytes, framed as RFC 9112 6.3 says, so the
 * next head is found where the browser will find it. Anything two parsers
 * could read differently (bare LF or CR, obs-fold, control characters,
 * Content-Length with Transfer-Encoding, conflicting lengths) ends the
 * connection instead. Pure: no I/O; a head split across reads is kept in
 * a buffer allocated only for that while. */
#ifndef GW_PRESP_H
#define GW_PRESP_H
#include <stddef.h>
#include <stdint.h>
#include "sbx_buf.h"
#include "gw_http1.h"

/* Requests on their way to the guest whose responses have not begun: a
 * client that pipelines more waits (gw_proxy.c). */
#define GW_PRESP_PENDING_MAX 64

enum gw_presp_state {
	GW_PR_HEAD,       /* reading a response head */
	GW_PR_LENGTH,     /* a Content-Length body */
	GW_PR_CHUNKED,    /* a chunked body */
	GW_PR_RAW,        /* to the end of the connection: a body without
			   * length, or a 101's WebSocket bytes */
	GW_PR_BAD,        /* a head was refused: nothing more goes on */
};

struct gw_presp {
	enum gw_presp_state state;
	uint64_t left;                   /* GW_PR_LENGTH: body bytes still to pass */
	struct gw_h1_chunk ck;
	struct sbx_buf part;             /* a head that came in pieces */
	unsigned char pending[GW_PRESP_PENDING_MAX];   /* 1: a HEAD request */
	unsigned first, count;           /* the ring of pending requests */
	const char *why;                 /* GW_PR_BAD: what was wrong */
	int at_head;                     /* GW_PR_BAD: at a response's start */
};

void gw_presp_init(struct gw_presp *rp);
void gw_presp_free(struct gw_presp *rp);
/* A request head went toward the guest (head_method: it was a HEAD).
 * -1 when GW_PRESP_PENDING_MAX are pending already. */
int gw_presp_expect(struct gw_presp *rp, int head_method);
int gw_presp_full(const struct gw_presp *rp);
/* Bytes from the guest: what the client is to get is appended to out
 * (heads rewritten, bodies as they are). 0, or -1 when a head was refused
 * (rp->why says why; the connection must end) or out of memory. */
int gw_presp_feed(struct gw_presp *rp, const char *in, size_t len, struct sbx_buf *out,
		  const char *token_cookie);

#endif
