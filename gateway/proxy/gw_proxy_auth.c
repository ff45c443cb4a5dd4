/* Preview tokens in requests (gw_proxy_auth.h). Only the token's own
 * header is removed before forwarding; the cookie goes on with the other
 * cookies (the guest is the owner's code, and the token opens nothing but
 * this sandbox's previews). */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "gw_proxy_auth.h"
#include "gw_proxy_up.h"

/* Whether a "; "-separated cookie list holds the token cookie with a
 * valid token. Every cookie of that name counts: a page of the guest can
 * set one of the same name itself (document.cookie, with a longer path,
 * which the browser then sends first), and must not shadow the real one
 * (the proxy drops such a Set-Cookie from the guest: gw_presp.h). */
static int cookie_token_ok(struct gw_vh *vh, const char *sid, const char *v, size_t n)
{
	size_t nl = strlen(GW_PTOKEN_COOKIE), i = 0;
	while (i < n) {
		while (i < n && (v[i] == ' ' || v[i] == ';'))
			i++;
		size_t e = i;
		while (e < n && v[e] != ';')
			e++;
		if (e - i > nl && !memcmp(v + i, GW_PTOKEN_COOKIE, nl) && v[i + nl] == '=' &&
		    gw_ptoken_check(vh, sid, v + i + nl + 1, e - i - nl - 1))
			return 1;
		i = e;
	}
	return 0;
}

/* token= in the query of target t; builds the target without it. */
static const char *query_token(struct gw_pconn *c, const char *t, size_t n, size_t *len)
{
	const char *q = memchr(t, '?', n), *tok = NULL;
	if (!q)
		return NULL;
	size_t out = (size_t)(q - t), i = out + 1;
	if (out >= sizeof c->redirect)
		return NULL;
	memcpy(c->redirect, t, out);
	char sep = '?';
	while (i <= n) {
		size_t e = i;
		while (e < n && t[e] != '&')
			e++;
		if (e - i >= 6 && !memcmp(t + i, "token=", 6) && !tok) {
			tok = t + i + 6;
			*len = e - i - 6;
		} else if (e > i) {
			if (out + 1 + (e - i) >= sizeof c->redirect)
				return NULL;
			c->redirect[out++] = sep;
			memcpy(c->redirect + out, t + i, e - i);
			out += e - i;
			sep = '&';
		}
		i = e + 1;
	}
	c->redirect[out] = '\0';
	return tok;
}

void gw_proxy_auth_scan(struct gw_pconn *c, const char *p, const char *sid)
{
	const struct gw_h1_head *h = &c->h;
	struct gw_vh *vh = c->f->vh;
	size_t len = 0;
	c->tok_ok = c->tok_query = 0;
	c->redirect[0] = '\0';
	const char *q = query_token(c, p + h->target.off, h->target.len, &len);
	if (q && gw_ptoken_check(vh, sid, q, len)) {
		c->tok_ok = c->tok_query = 1;
		return;
	}
	c->redirect[0] = '\0';
	for (int k = 0; k < h->nhdr && !c->tok_ok; k++) {
		const struct gw_h1_hdr *hd = &h->hdr[k];
		const char *v = p + hd->value.off;
		if (gw_h1_name_is(p, hd, "x-preview-token"))
			c->tok_ok = gw_ptoken_check(vh, sid, v, hd->value.len);
		else if (gw_h1_name_is(p, hd, "cookie"))
			c->tok_ok = cookie_token_ok(vh, sid, v, hd->value.len);
	}
}

int gw_proxy_auth_gate(struct gw_pconn *c)
{
	char extra[sizeof c->redirect + sizeof c->host + 200], tok[33];
	if (!c->auth)
		return 0;
	if (!c->tok_ok) {
		gw_proxy_fail(c, 401, "This preview is private: open it with the link "
			      "(?token=...) its owner has, or send X-Preview-Token.");
		return -1;
	}
	if (!c->tok_query || !c->redirect[0] || !c->host[0] || c->sent_reqs ||
	    gw_ptoken(c->f->vh, c->sid, tok))
		return 0;
	/* a link with the token: keep it in a cookie of this host only and
	 * drop it from the address bar (and from what the guest sees). The
	 * Location is absolute, on this preview's own host (checked by
	 * gw_phost_parse: a name and digits), so a target such as
	 * //evil.example/ stays a path here and never reads as another host. */
	snprintf(extra, sizeof extra, "Location: %s://%s%s\r\nSet-Cookie: " GW_PTOKEN_COOKIE
		 "=%s; Path=/; HttpOnly; SameSite=Lax%s\r\n", c->f->tls ? "https" : "http",
		 c->host, c->redirect, tok, c->f->tls ? "; Secure" : "");
	gw_proxy_answer(c, 302, extra, "Redirecting.");
	return -1;
}
