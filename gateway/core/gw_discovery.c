/* --runners-dns NAME: the runners are whatever NAME resolves to, every
 * --discovery-interval-ms: A/AAAA records (each address with
 * --runner-port), or SRV records when NAME starts with '_' (each target's
 * addresses with the record's port), as a Kubernetes headless Service or
 * Consul gives them. The lookups block, so they run in a thread of their
 * own; each result is handed to the loop under a mutex and announced
 * with lws_cancel_service, and the loop (LWS_CALLBACK_EVENT_WAIT_CANCELLED,
 * gw_discovery_collect) merges it into the table: new addresses are
 * added (asked their status at once), an address no longer there is
 * taken out of placement at once but kept for routing while it answers.
 * A failed lookup changes nothing (a DNS outage must not empty the
 * table); it is logged once per streak. */
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <resolv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gw.h"
#include "sbx_log.h"

#define ADDR_LEN 64

struct result {
	int n;
	char addr[GW_RUNNERS_MAX][ADDR_LEN];
	char why[400];   /* a failed lookup: why ("" on success) */
};

static struct {
	pthread_t th;
	int running;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
	char name[256];
	int port, interval_ms;
	struct lws_context *ctx;
	int ready;                 /* res holds a result the loop has not taken */
	struct result res;
	int failing;               /* the loop's side: the last lookup failed */
} d = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

/* Each address of host as "a.b.c.d:port" / "[v6]:port", appended to r. */
static int add_host(struct result *r, const char *host, int port, char *why, size_t whylen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai, *p;
	int rc = getaddrinfo(host, NULL, &hints, &ai);

	if (rc) {
		snprintf(why, whylen, "%.200s: %s", host, gai_strerror(rc));
		return -1;
	}
	for (p = ai; p && r->n < GW_RUNNERS_MAX; p = p->ai_next) {
		char ip[INET6_ADDRSTRLEN];
		if (p->ai_family == AF_INET &&
		    inet_ntop(AF_INET, &((struct sockaddr_in *)p->ai_addr)->sin_addr, ip, sizeof ip))
			snprintf(r->addr[r->n++], ADDR_LEN, "%s:%d", ip, port);
		else if (p->ai_family == AF_INET6 &&
			 inet_ntop(AF_INET6, &((struct sockaddr_in6 *)p->ai_addr)->sin6_addr, ip, sizeof ip))
			snprintf(r->addr[r->n++], ADDR_LEN, "[%s]:%d", ip, port);
	}
	freeaddrinfo(ai);
	return 0;
}

/* SRV records of name: each target's addresses with its port. */
static int add_srv(struct result *r, const char *name, char *why, size_t whylen)
{
	unsigned char ans[8192];
	struct __res_state st;
	ns_msg msg;
	int n, ok = 0;

	memset(&st, 0, sizeof st);
	if (res_ninit(&st)) {
		snprintf(why, whylen, "cannot read the resolver configuration");
		return -1;
	}
	n = res_nquery(&st, name, ns_c_in, ns_t_srv, ans, sizeof ans);
	if (n < 0) {
		snprintf(why, whylen, "%.200s: no SRV records (%s)", name, hstrerror(st.res_h_errno));
		res_nclose(&st);
		return -1;
	}
	if (ns_initparse(ans, n, &msg)) {
		snprintf(why, whylen, "%.200s: a malformed DNS answer", name);
		res_nclose(&st);
		return -1;
	}
	for (int i = 0; i < ns_msg_count(msg, ns_s_an); i++) {
		ns_rr rr;
		char target[NS_MAXDNAME];
		if (ns_parserr(&msg, ns_s_an, i, &rr) || ns_rr_type(rr) != ns_t_srv ||
		    ns_rr_rdlen(rr) < 7)
			continue;
		const unsigned char *rd = ns_rr_rdata(rr);
		int port = (rd[4] << 8) | rd[5];   /* priority, weight, port, target */
		if (dn_expand(ns_msg_base(msg), ns_msg_end(msg), rd + 6, target, sizeof target) < 0 ||
		    !port)
			continue;
		if (add_host(r, target, port, why, whylen) == 0)
			ok = 1;
	}
	res_nclose(&st);
	if (!ok && !why[0])
		snprintf(why, whylen, "%.200s: no usable SRV record", name);
	return ok ? 0 : -1;
}

static void *thread_main(void *arg)
{
	static struct result r;   /* only this thread writes it */
	(void)arg;

	pthread_mutex_lock(&d.mu);
	while (!d.stop) {
		pthread_mutex_unlock(&d.mu);
		memset(&r, 0, sizeof r);
		if (d.name[0] == '_')
			add_srv(&r, d.name, r.why, sizeof r.why);
		else
			add_host(&r, d.name, d.port, r.why, sizeof r.why);
		if (r.why[0] && r.n)
			r.why[0] = '\0';   /* some SRV targets resolved: use those */
		pthread_mutex_lock(&d.mu);
		d.res = r;
		d.ready = 1;
		pthread_mutex_unlock(&d.mu);
		lws_cancel_service(d.ctx);

		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += d.interval_ms / 1000;
		until.tv_nsec += (long)(d.interval_ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&d.mu);
		while (!d.stop && pthread_cond_timedwait(&d.cv, &d.mu, &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&d.mu);
	return NULL;
}

int gw_discovery_start(struct gw_vh *vh, const char *name, int port, int interval_ms)
{
	snprintf(d.name, sizeof d.name, "%s", name);
	d.port = port;
	d.interval_ms = interval_ms;
	d.ctx = vh->ctx;
	d.stop = 0;
	if (pthread_create(&d.th, NULL, thread_main, NULL)) {
		sbx_err_log("--runners-dns: cannot start the resolver thread");
		return -1;
	}
	d.running = 1;
	sbx_info("runners from DNS %s (%s), every %d ms", name,
		 name[0] == '_' ? "SRV" : "A/AAAA", interval_ms);
	return 0;
}

/* On the loop: merge a result the thread handed over, if any. */
void gw_discovery_collect(struct gw_vh *vh)
{
	static struct result r;
	const char *have[GW_RUNNERS_MAX], *got[GW_RUNNERS_MAX];
	int keep[GW_RUNNERS_MAX], add[GW_RUNNERS_MAX];

	if (!d.running)
		return;
	pthread_mutex_lock(&d.mu);
	int ready = d.ready;
	if (ready)
		r = d.res;
	d.ready = 0;
	pthread_mutex_unlock(&d.mu);
	if (!ready)
		return;
	if (r.why[0]) {
		if (!d.failing)
			sbx_warn("runners from DNS: %s (keeping the runners known)", r.why);
		d.failing = 1;
		return;
	}
	if (d.failing)
		sbx_info("runners from DNS: %s resolves again", d.name);
	d.failing = 0;
	for (int i = 0; i < vh->nrunners; i++)
		have[i] = vh->runners[i].addr;
	for (int j = 0; j < r.n; j++)
		got[j] = r.addr[j];
	gw_discovery_merge(have, vh->nrunners, got, r.n, keep, add);
	for (int i = 0; i < vh->nrunners; i++) {
		struct gw_runner *rn = &vh->runners[i];
		if (!rn->from_dns || rn->gone == !keep[i])
			continue;
		rn->gone = !keep[i];
		sbx_info("runner %s (%s) %s", rn->name[0] ? rn->name : "?", rn->addr, rn->gone ?
			 "left DNS: no new sandboxes there" : "is in DNS again");
	}
	for (int j = 0; j < r.n; j++) {
		char why[200];
		struct gw_runner *rn;
		if (!add[j])
			continue;
		if (!(rn = gw_runners_add(vh, r.addr[j], why, sizeof why))) {
			sbx_warn("runners from DNS: %s", why);
			continue;
		}
		rn->from_dns = 1;
		sbx_info("runner at %s discovered", rn->addr);
	}
}

void gw_discovery_stop(void)
{
	if (!d.running)
		return;
	pthread_mutex_lock(&d.mu);
	d.stop = 1;
	pthread_cond_signal(&d.cv);
	pthread_mutex_unlock(&d.mu);
	/* a lookup in progress finishes first (the resolver's own timeout) */
	pthread_join(d.th, NULL);
	d.running = 0;
}
