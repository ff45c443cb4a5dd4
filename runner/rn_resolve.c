#include "rn_resolve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rn_dns_wire.h"
#include "rn_loop.h"
#include "sbx_log.h"

#define RESEND_MS 1000
#define GIVE_UP_MS 4000
#define MAX_PENDING 1024

struct rn_lookup {
	uint16_t id;
	char name[256];
	rn_lookup_cb cb;
	void *ctx;
	int64_t sent_at, started_at;
	struct rn_lookup *next;
};

static struct {
	int ready;                  /* 1 set up, -1 failed (logged once) */
	struct sockaddr_in up;
	struct rn_ev ev;
	struct rn_lookup *pending;
	int n_pending;
} rs = { .ev.fd = -1 };

/* The upstream: SANDBOX_DNS_UPSTREAM, else resolv.conf's first IPv4. */
static int find_upstream(struct sockaddr_in *a, struct sbx_err *err)
{
	const char *env = getenv("SANDBOX_DNS_UPSTREAM");
	char line[512], ip[64] = "";
	long port = 53;

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	if (env && *env) {
		const char *colon = strchr(env, ':');
		size_t n = colon ? (size_t)(colon - env) : strlen(env);
		if (n >= sizeof(ip))
			return sbx_err_set(err, EINVAL, "SANDBOX_DNS_UPSTREAM: expected IP[:PORT]");
		memcpy(ip, env, n);
		ip[n] = '\0';
		if (colon) {
			char *end;
			port = strtol(colon + 1, &end, 10);
			if (*end || port < 1 || port > 65535)
				return sbx_err_set(err, EINVAL, "SANDBOX_DNS_UPSTREAM: bad port");
		}
	} else {
		FILE *f = fopen("/etc/resolv.conf", "re");
		if (!f)
			return sbx_err_sys(err, "open /etc/resolv.conf");
		while (!ip[0] && fgets(line, sizeof(line), f)) {
			char cand[64];
			struct in_addr t;
			if (sscanf(line, " nameserver %63s", cand) == 1 &&
			    inet_pton(AF_INET, cand, &t) == 1)
				strcpy(ip, cand);
		}
		fclose(f);
		if (!ip[0])
			return sbx_err_set(err, ENOENT, "/etc/resolv.conf names no IPv4 nameserver "
					   "(the sandboxes' resolver asks the host's)");
	}
	if (inet_pton(AF_INET, ip, &a->sin_addr) != 1)
		return sbx_err_set(err, EINVAL, "DNS upstream %s: not an IPv4 address", ip);
	a->sin_port = htons((uint16_t)port);
	return 0;
}

static void finish(struct rn_lookup *l, int rcode, const uint32_t *addrs, int n, uint32_t ttl)
{
	struct rn_lookup **pp;

	for (pp = &rs.pending; *pp && *pp != l; pp = &(*pp)->next)
		;
	if (*pp) {
		*pp = l->next;
		rs.n_pending--;
	}
	l->cb(l->ctx, rcode, addrs, n, ttl);
	free(l);
}

static void on_reply(struct rn_ev *ev, uint32_t events)
{
	unsigned char buf[4096];
	struct sockaddr_in from;
	socklen_t fl;
	ssize_t n;

	(void)events;
	for (;;) {
		fl = sizeof(from);
		n = recvfrom(ev->fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
		if (n < 0)
			return;
		/* only the upstream's answers count: anyone else's are dropped */
		if (fl != sizeof(from) || from.sin_addr.s_addr != rs.up.sin_addr.s_addr ||
		    from.sin_port != rs.up.sin_port || n < 2)
			continue;
		uint16_t id = (uint16_t)(buf[0] << 8 | buf[1]);
		for (struct rn_lookup *l = rs.pending; l; l = l->next) {
			uint32_t addrs[RN_DNS_MAX_ADDRS], ttl;
			int na, rc;
			if (l->id != id)
				continue;
			rc = rn_dns_parse_a_reply(buf, (size_t)n, id, l->name, addrs, &na, &ttl);
			if (rc >= 0)
				finish(l, rc, addrs, na, ttl);
			break;
		}
	}
}

static int set_up(struct sbx_err *err)
{
	if (rs.ready > 0)
		return 0;
	if (find_upstream(&rs.up, err) < 0)
		return -1;
	rs.ev.fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (rs.ev.fd < 0)
		return sbx_err_sys(err, "DNS upstream socket");
	rs.ev.cb = on_reply;
	if (rn_loop_add(&rs.ev, EPOLLIN) < 0) {
		close(rs.ev.fd);
		rs.ev.fd = -1;
		return sbx_err_sys(err, "DNS upstream socket: epoll");
	}
	rs.ready = 1;
	sbx_info("sandbox DNS: names are resolved by %s:%d", inet_ntoa(rs.up.sin_addr),
		 ntohs(rs.up.sin_port));
	return 0;
}

static void send_query(struct rn_lookup *l)
{
	unsigned char q[RN_DNS_MSG_MAX];
	size_t n = rn_dns_build_a_query(l->id, l->name, q);

	l->sent_at = rn_now_mono();
	if (n)
		sendto(rs.ev.fd, q, n, MSG_NOSIGNAL, (struct sockaddr *)&rs.up, sizeof(rs.up));
}

struct rn_lookup *rn_resolve_a(const char *name, rn_lookup_cb cb, void *ctx,
			       struct sbx_err *err)
{
	struct rn_lookup *l;
	uint16_t id;

	if (set_up(err) < 0)
		return NULL;
	if (rs.n_pending >= MAX_PENDING) {
		sbx_err_set(err, EAGAIN, "too many DNS lookups in flight");
		return NULL;
	}
	if (strlen(name) > 253) {
		sbx_err_set(err, EINVAL, "name too long");
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		sbx_err_set(err, ENOMEM, "out of memory");
		return NULL;
	}
	/* a random id (a spoofed answer must guess it), unique among ours */
	for (int again = 1; again; ) {
		if (getrandom(&id, sizeof(id), 0) != sizeof(id))
			id = (uint16_t)rand();
		again = 0;
		for (struct rn_lookup *o = rs.pending; o; o = o->next)
			again |= o->id == id;
	}
	l->id = id;
	strcpy(l->name, name);
	l->cb = cb;
	l->ctx = ctx;
	l->started_at = rn_now_mono();
	l->next = rs.pending;
	rs.pending = l;
	rs.n_pending++;
	send_query(l);
	return l;
}

void rn_resolve_cancel(struct rn_lookup *l)
{
	struct rn_lookup **pp;

	for (pp = &rs.pending; *pp && *pp != l; pp = &(*pp)->next)
		;
	if (*pp) {
		*pp = l->next;
		rs.n_pending--;
		free(l);
	}
}

int rn_resolve_sweep(void)
{
	int64_t now = rn_now_mono();
	int next = -1;

	for (struct rn_lookup *l = rs.pending, *nx; l; l = nx) {
		int64_t due;
		nx = l->next;
		if (now - l->started_at >= GIVE_UP_MS) {
			finish(l, -1, NULL, 0, 0);
			nx = rs.pending;    /* the callback may have cancelled others */
			continue;
		}
		if (now - l->sent_at >= RESEND_MS)
			send_query(l);
		due = l->sent_at + RESEND_MS - now;
		if (l->started_at + GIVE_UP_MS - now < due)
			due = l->started_at + GIVE_UP_MS - now;
		if (due < 0)
			due = 0;
		if (next < 0 || due < next)
			next = (int)due;
	}
	return next;
}
