/* Preview connection caps (gw_plimit.h). Counts live in small hash tables
 * keyed by sandbox id and by client address, each entry freed when its
 * count drops to zero, so memory follows the connections that exist. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gw_plimit.h"
#include "gw_proxy_up.h"
#include "../core/gw_fdguard.h"
#include "sbx_log.h"

#define NBUCKETS 1024

struct gw_plimit_ent {
	struct gw_plimit_ent *next;
	int count;
	char key[80];
};

static struct gw_plimit_ent *by_sid[NBUCKETS], *by_peer[NBUCKETS];
static int max_sid = GW_PREVIEW_MAX_PER_SANDBOX, max_peer = GW_PREVIEW_MAX_PER_CLIENT;
static long nopen;

void gw_plimit_config(int per_sandbox, int per_client)
{
	max_sid = per_sandbox > 0 ? per_sandbox : GW_PREVIEW_MAX_PER_SANDBOX;
	max_peer = per_client > 0 ? per_client : GW_PREVIEW_MAX_PER_CLIENT;
}

static unsigned bucket(const char *k)
{
	unsigned h = 2166136261u;   /* FNV-1a */
	for (; *k; k++)
		h = (h ^ (unsigned char)*k) * 16777619u;
	return h % NBUCKETS;
}

static struct gw_plimit_ent *find(struct gw_plimit_ent **tab, const char *k, int make)
{
	struct gw_plimit_ent **pp = &tab[bucket(k)];
	for (struct gw_plimit_ent *e = *pp; e; e = e->next)
		if (!strcmp(e->key, k))
			return e;
	if (!make)
		return NULL;
	struct gw_plimit_ent *e = calloc(1, sizeof *e);
	if (!e)
		return NULL;
	snprintf(e->key, sizeof e->key, "%s", k);
	e->next = *pp;
	*pp = e;
	return e;
}

static void put(struct gw_plimit_ent **tab, struct gw_plimit_ent *e)
{
	if (!e || --e->count > 0)
		return;
	for (struct gw_plimit_ent **pp = &tab[bucket(e->key)]; *pp; pp = &(*pp)->next)
		if (*pp == e) {
			*pp = e->next;
			free(e);
			return;
		}
}

int gw_plimit_response(char *buf, size_t n, const char *code, const char *msg)
{
	char body[512];
	int bn = snprintf(body, sizeof body, "{\"error\":{\"code\":\"%s\",\"message\":\"%s\"}}\n",
			  code, msg);
	if (bn < 0 || (size_t)bn >= sizeof body)
		return -1;
	int hn = snprintf(buf, n, "HTTP/1.1 503 Service Unavailable\r\n"
			  "Content-Type: application/json\r\nContent-Length: %d\r\n"
			  "Retry-After: 1\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n%s",
			  bn, body);
	return hn < 0 || (size_t)hn >= n ? -1 : hn;
}

void gw_plimit_refuse(struct gw_pconn *c, const char *code, const char *msg)
{
	char resp[1024];
	int n = gw_plimit_response(resp, sizeof resp, code, msg);
	c->f->vh->m.proxy_errors++;
	c->state = GW_P_ERROR;
	c->close_after = 1;
	gw_proxy_pause_client(c, 1);
	gw_proxy_up_close(c);
	sbx_buf_reset(&c->cin);
	sbx_buf_reset(&c->to_cl);
	if (n < 0 || sbx_buf_append(&c->to_cl, resp, (size_t)n))
		sbx_buf_reset(&c->to_cl);
	if (c->wsi)
		lws_callback_on_writable(c->wsi);
}

int gw_plimit_admit(struct gw_pconn *c, const char *sid)
{
	char msg[200], pk[80];
	if (c->lim_sid || c->lim_peer)
		return 0;   /* counted already */
	if (!gw_fd_preview_ok()) {
		gw_fd_exhausted(GW_FDX_RESERVE, EMFILE);
		gw_plimit_refuse(c, "no_capacity", GW_PLIMIT_BUSY_MSG);
		return -1;
	}
	gw_peer_key(c->peer, pk, sizeof pk);
	struct gw_plimit_ent *es = find(by_sid, sid, 0), *ep = find(by_peer, pk, 0);
	if (es && es->count >= max_sid) {
		snprintf(msg, sizeof msg, "This sandbox has %d open preview connections, the most "
			 "the gateway allows; try again when some have closed.", max_sid);
		gw_plimit_refuse(c, "too_many_connections", msg);
		return -1;
	}
	if (ep && ep->count >= max_peer) {
		snprintf(msg, sizeof msg, "Your address has %d open preview connections, the most "
			 "the gateway allows; try again when some have closed.", max_peer);
		gw_plimit_refuse(c, "too_many_connections", msg);
		return -1;
	}
	if (!(es = find(by_sid, sid, 1))) {
		gw_plimit_refuse(c, "no_capacity", "out of memory");
		return -1;
	}
	es->count++;
	if (!(ep = find(by_peer, pk, 1))) {
		put(by_sid, es);
		gw_plimit_refuse(c, "no_capacity", "out of memory");
		return -1;
	}
	ep->count++;
	c->lim_sid = es;
	c->lim_peer = ep;
	nopen++;
	return 0;
}

void gw_plimit_release(struct gw_pconn *c)
{
	if (!c->lim_sid)
		return;
	put(by_sid, c->lim_sid);
	put(by_peer, c->lim_peer);
	c->lim_sid = c->lim_peer = NULL;
	nopen--;
}

long gw_plimit_open(void)
{
	return nopen;
}
