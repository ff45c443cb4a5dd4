/* Preview tokens on the proxy side: a sandbox created with
 * "preview_auth":true is reachable only with its token, sent as the header
 * X-Preview-Token, or as the cookie sbx_preview_token that a ?token= link
 * sets (the link answers 302 to the same URL without the token). */
#ifndef GW_PROXY_AUTH_H
#define GW_PROXY_AUTH_H
#include "gw_proxy.h"

#define GW_PTOKEN_COOKIE "sbx_preview_token"

/* Look at the parsed head c->h in p for sid's token; sets c->tok_ok,
 * c->tok_query and c->redirect. */
void gw_proxy_auth_scan(struct gw_pconn *c, const char *p, const char *sid);
/* When c->auth: 401 without a valid token, 302 + cookie for a ?token=
 * link. Returns 0 to go on, -1 when it answered. */
int gw_proxy_auth_gate(struct gw_pconn *c);

#endif
