/* A sandbox's resolver, on its gateway address (every UDP 53 datagram it
 * sends is DNAT'ed here, rn_egress_fw.c). It answers A queries for the
 * names its policy allows by resolving them itself through the host's
 * resolver (rn_resolve.c), without the addresses no sandbox may reach;
 * AAAA for those names gets an empty answer (the veth has no IPv6); any
 * other name is NXDOMAIN and any other type REFUSED. The sandbox's own
 * query never leaves the host: what goes upstream is a query the runner
 * built, for an allowed name, so DNS tunnelling has no way out. */
#include "rn_egress_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "rn_dns_wire.h"
#include "rn_resolve.h"
#include "sbx_log.h"

struct eg_dnsq {
	struct rn_egress *e;
	struct sockaddr_in from;
	unsigned char q[RN_DNS_MSG_MAX];
	size_t qlen;
	struct rn_lookup *lookup;
	struct eg_dnsq *next;
};

static void answer(struct rn_egress *e, const struct sockaddr_in *to,
		   const struct rn_dns_query *q, int rcode, const uint32_t *addrs, int n,
		   uint32_t ttl)
{
	unsigned char out[RN_DNS_MSG_MAX];
	size_t len = rn_dns_answer(q, rcode, addrs, n, ttl, out);

	sendto(e->dns.fd, out, len, MSG_NOSIGNAL, (const struct sockaddr *)to, sizeof(*to));
}

static void unlink_q(struct eg_dnsq *d)
{
	struct eg_dnsq **pp;

	for (pp = &d->e->dnsq; *pp && *pp != d; pp = &(*pp)->next)
		;
	if (*pp) {
		*pp = d->next;
		d->e->n_dnsq--;
	}
}

static void resolved(void *ctx, int rcode, const uint32_t *addrs, int n, uint32_t ttl)
{
	struct eg_dnsq *d = ctx;
	struct rn_egress *e = d->e;
	struct rn_dns_query q;
	uint32_t keep[RN_DNS_MAX_ADDRS];
	const char *why = NULL, *rule;
	int k = 0;

	d->lookup = NULL;
	unlink_q(d);
	if (rn_dns_parse_query(d->q, d->qlen, &q) < 0) {
		free(d);
		return;
	}
	/* the policy may have changed while the upstream answered */
	rule = eg_allowed(e, q.name);
	if (!rule) {
		answer(e, &d->from, &q, RN_DNS_NXDOMAIN, NULL, 0, 0);
		eg_log_add(e, q.name, 53, 0, "not allowed", 0, 0);
		free(d);
		return;
	}
	for (int i = 0; i < n; i++) {
		const char *w = rn_policy_addr_denied(eg_mode(e) == RN_NET_POLICY ?
						      e->sb->spec.policy : NULL, ntohl(addrs[i]));
		if (w)
			why = w;
		else
			keep[k++] = addrs[i];
	}
	if (rcode < 0)
		answer(e, &d->from, &q, RN_DNS_SERVFAIL, NULL, 0, 0);
	else
		answer(e, &d->from, &q, rcode, keep, k, ttl > 300 ? 300 : ttl);
	if (why && k == 0)
		eg_log_add(e, q.name, 53, 0, why, 0, 0);
	else
		eg_log_add(e, q.name, 53, 1, rcode < 0 ? "upstream failed" : rule, 0, 0);
	free(d);
}

static void one_query(struct rn_egress *e, const unsigned char *p, size_t n,
		      const struct sockaddr_in *from)
{
	struct sbx_err err = { 0, "" };
	struct rn_dns_query q;
	struct eg_dnsq *d;
	const char *rule;

	if (rn_dns_parse_query(p, n, &q) < 0 || n > RN_DNS_MSG_MAX)
		return;         /* not a query we answer: no reply at all */
	rule = q.name[0] ? eg_allowed(e, q.name) : NULL;
	if (!rule) {
		answer(e, from, &q, RN_DNS_NXDOMAIN, NULL, 0, 0);
		eg_log_add(e, q.name, 53, 0, "not allowed", 0, 0);
		return;
	}
	if (q.qclass != 1 || (q.qtype != RN_DNS_T_A && q.qtype != RN_DNS_T_AAAA)) {
		answer(e, from, &q, RN_DNS_REFUSED, NULL, 0, 0);
		eg_log_add(e, q.name, 53, 0, "query type", 0, 0);
		return;
	}
	if (q.qtype == RN_DNS_T_AAAA) {
		answer(e, from, &q, RN_DNS_NOERROR, NULL, 0, 60);
		return;
	}
	if (e->n_dnsq >= EG_MAX_DNSQ || !(d = calloc(1, sizeof(*d)))) {
		answer(e, from, &q, RN_DNS_SERVFAIL, NULL, 0, 0);
		return;
	}
	d->e = e;
	d->from = *from;
	memcpy(d->q, p, n);
	d->qlen = n;
	d->next = e->dnsq;
	e->dnsq = d;
	e->n_dnsq++;
	d->lookup = rn_resolve_a(q.name, resolved, d, &err);
	if (!d->lookup) {
		sbx_warn("sandbox %s: DNS: %s", e->sb->id, err.msg);
		unlink_q(d);
		free(d);
		answer(e, from, &q, RN_DNS_SERVFAIL, NULL, 0, 0);
	}
}

void eg_dns_on_query(struct rn_ev *ev, uint32_t events)
{
	struct rn_egress *e = ev->owner;
	unsigned char buf[4096];

	(void)events;
	/* a bounded batch per wakeup: one sandbox cannot hold the loop */
	for (int i = 0; i < 64; i++) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(ev->fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
		if (n < 0)
			return;
		if (fl == sizeof(from) && from.sin_family == AF_INET)
			one_query(e, buf, (size_t)n, &from);
	}
}

void eg_dns_close_all(struct rn_egress *e)
{
	while (e->dnsq) {
		struct eg_dnsq *d = e->dnsq;
		e->dnsq = d->next;
		if (d->lookup)
			rn_resolve_cancel(d->lookup);
		free(d);
	}
	e->n_dnsq = 0;
}
