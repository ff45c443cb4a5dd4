/* Caps on preview connections: per sandbox and per client address, and
 * the descriptor reserve (gw_fdguard.h), checked when a connection's
 * first request is routed. Beyond them the client gets 503 with a JSON
 * error body and the connection closes. See docs/preview.md. */
#ifndef GW_PLIMIT_H
#define GW_PLIMIT_H
#include "gw_proxy.h"

#define GW_PREVIEW_MAX_PER_SANDBOX 1024   /* a quarter of the runner's connections */
#define GW_PREVIEW_MAX_PER_CLIENT  256

struct gw_plimit_ent;

/* Set the caps (0 or less: the defaults). */
void gw_plimit_config(int per_sandbox, int per_client);
/* Admit c (its sid and peer are set): 0 counted, or -1 after answering
 * 503 (the connection then closes). */
int gw_plimit_admit(struct gw_pconn *c, const char *sid);
/* c closes: give back what it counted (safe to call more than once). */
void gw_plimit_release(struct gw_pconn *c);
/* Answer 503 {"error":{"code","message"}} and close; only while no
 * request of c is on its way to the guest (routing, first request). */
void gw_plimit_refuse(struct gw_pconn *c, const char *code, const char *msg);
/* The whole 503 response (head and JSON body) into buf; its length, or
 * -1 when it does not fit. */
int gw_plimit_response(char *buf, size_t n, const char *code, const char *msg);
#define GW_PLIMIT_BUSY_MSG "The gateway is at its connection limit; try again in a moment."
/* Preview connections counted now (for tests through /metrics). */
long gw_plimit_open(void);
#endif
