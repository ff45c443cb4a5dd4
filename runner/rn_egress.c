#include "rn_egress_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rn_resolve.h"
#include "sbx_log.h"

/* Every attached egress, for the sweep (the loop has no timers), and the
 * detached ones whose memory waits for the next loop pass (an epoll batch
 * may still hold their listeners' events). */
static struct rn_egress *all, *dead;

/* Slot s's gateway: 10.201.0.0 + 4s + 1 (rn_net.c). */
static uint32_t gateway_of(int slot)
{
	return ((10u << 24) | (201u << 16)) + (uint32_t)slot * 4u + 1u;
}

const char *eg_allowed(const struct rn_egress *e, const char *name)
{
	switch (eg_mode(e)) {
	case RN_NET_ALLOW_ALL:
		return "allow-all";
	case RN_NET_POLICY:
		return rn_policy_match(e->sb->spec.policy, name);
	default:
		return NULL;
	}
}

static int listen_on(struct rn_ev *ev, int type, uint32_t ip, int port, rn_ev_cb cb,
		     struct rn_egress *e, struct sbx_err *err)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(ip) };
	int one = 1;

	ev->fd = socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (ev->fd < 0)
		return sbx_err_sys(err, "egress socket");
	setsockopt(ev->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ev->fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    (type == SOCK_STREAM && listen(ev->fd, 64) < 0)) {
		sbx_err_sys(err, "egress: bind %s:%d", inet_ntoa(a.sin_addr), port);
		close(ev->fd);
		ev->fd = -1;
		return -1;
	}
	ev->cb = cb;
	ev->owner = e;
	if (rn_loop_add(ev, EPOLLIN) < 0) {
		sbx_err_sys(err, "egress: epoll");
		close(ev->fd);
		ev->fd = -1;
		return -1;
	}
	return 0;
}

static void unlisten(struct rn_ev *ev)
{
	if (ev->fd < 0)
		return;
	rn_loop_del(ev);
	close(ev->fd);
	ev->fd = -1;
}

static void free_egress(struct rn_egress *e)
{
	struct rn_egress **pp;

	eg_conn_close_all(e);
	eg_mitm_detach_all(e);
	eg_dns_close_all(e);
	unlisten(&e->dns);
	unlisten(&e->l80);
	unlisten(&e->l443);
	for (pp = &all; *pp && *pp != e; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = e->next;
	pthread_mutex_lock(&eg_mx);
	free(e->log);
	e->log = NULL;
	pthread_mutex_unlock(&eg_mx);
	e->next = dead;
	dead = e;
}

int rn_egress_attach(struct rn_sandbox *sb, int slot, struct sbx_err *err)
{
	struct rn_egress *e = calloc(1, sizeof(*e));

	if (!e)
		return sbx_err_set(err, ENOMEM, "out of memory");
	e->sb = sb;
	e->slot = slot;
	e->host_ip = gateway_of(slot);
	e->dns.fd = e->l80.fd = e->l443.fd = -1;
	e->log_next = 1;
	e->fw_mode = RN_NET_DENY_ALL;
	e->next = all;
	all = e;
	sb->egress = e;
	if (listen_on(&e->dns, SOCK_DGRAM, e->host_ip, RN_EGRESS_DNS_PORT, eg_dns_on_query,
		      e, err) < 0 ||
	    listen_on(&e->l80, SOCK_STREAM, e->host_ip, RN_EGRESS_HTTP_PORT, eg_conn_on_accept,
		      e, err) < 0 ||
	    listen_on(&e->l443, SOCK_STREAM, e->host_ip, RN_EGRESS_TLS_PORT, eg_conn_on_accept,
		      e, err) < 0 ||
	    eg_fw_apply(slot, e->host_ip, eg_mode(e), err) < 0) {
		eg_fw_apply(slot, e->host_ip, RN_NET_DENY_ALL, NULL);
		sb->egress = NULL;
		free_egress(e);
		return -1;
	}
	e->fw_mode = eg_mode(e);
	return 0;
}

void rn_egress_detach(struct rn_sandbox *sb)
{
	struct rn_egress *e = sb->egress;

	if (!e)
		return;
	eg_fw_apply(e->slot, e->host_ip, RN_NET_DENY_ALL, NULL);
	sb->egress = NULL;
	free_egress(e);
}

void rn_egress_drop_slot(int slot)
{
	eg_fw_apply(slot, gateway_of(slot), RN_NET_DENY_ALL, NULL);
}

int rn_egress_set_policy(struct rn_sandbox *sb, enum rn_network mode,
			 struct rn_policy *policy, struct sbx_err *err)
{
	struct rn_egress *e = sb->egress;
	struct rn_policy *old;

	if (!e && sb->status == RN_RUNNING && mode == RN_NET_DENY_ALL &&
	    sb->spec.network == RN_NET_DENY_ALL)
		return 0;       /* what it has: nothing to change */
	if (!e || sb->status != RN_RUNNING) {
		rn_policy_free(policy);
		return sbx_err_set(err, EBUSY, sb->status != RN_RUNNING ?
				   "sandbox %s is not running" :
				   "sandbox %s was created with network deny-all: it has no "
				   "network interface to apply a policy to (create it with "
				   "a policy, e.g. {\"allow\":[]}, to change it later)", sb->id);
	}
	/* deny-all for a sandbox that has a veth: an allow-list of nothing */
	if (mode == RN_NET_DENY_ALL) {
		rn_policy_free(policy);
		policy = calloc(1, sizeof(*policy));
		if (!policy)
			return sbx_err_set(err, ENOMEM, "out of memory");
		mode = RN_NET_POLICY;
	}
	if (mode != e->fw_mode && eg_fw_apply(e->slot, e->host_ip, mode, err) < 0) {
		/* the old rules may be half gone: fail closed */
		eg_fw_apply(e->slot, e->host_ip, RN_NET_POLICY, NULL);
		e->fw_mode = RN_NET_POLICY;
		rn_policy_free(policy);
		return -1;
	}
	e->fw_mode = mode;
	old = sb->spec.policy;
	sb->spec.policy = policy;
	sb->spec.network = mode;
	rn_policy_free(old);
	eg_conn_recheck(e);
	eg_mitm_recheck(e);
	return 0;
}

int rn_egress_sweep(void)
{
	int64_t now = rn_now_mono();
	int next;

	/* between loop passes: nothing of the last batch is pending */
	eg_conn_reap();
	while (dead) {
		struct rn_egress *e = dead;
		dead = e->next;
		free(e);
	}
	next = rn_resolve_sweep();

	for (struct rn_egress *e = all; e; e = e->next) {
		int t = eg_conn_sweep(e, now);
		if (t >= 0 && (next < 0 || t < next))
			next = t;
	}
	return next;
}
