/* The parts of a sandbox's egress (rn_egress.h) and what they share. */
#ifndef RN_EGRESS_INT_H
#define RN_EGRESS_INT_H

#include <pthread.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/epoll.h>

#include "rn_egress.h"
#include "rn_loop.h"
#include "rn_policy.h"
#include "sbx_buf.h"
#include "sbx_sni.h"
#include "sbx_splice.h"

#define EG_LOG_MAX 256          /* entries kept per sandbox */
#define EG_MAX_CONNS 256        /* proxied connections per sandbox */
#define EG_MAX_DNSQ 64          /* sandbox queries waiting on the upstream */
#define EG_MITM_MAX 64          /* decrypted connections per sandbox (a thread each) */

struct eg_entry {
	unsigned long long seq;
	int64_t time_ms;
	char name[SBX_PEEK_NAME_MAX];
	uint16_t port;
	uint8_t allowed;
	char rule[128];
	unsigned long long bytes_out, bytes_in;
};

struct eg_conn;
struct eg_dnsq;

struct rn_egress {
	struct rn_sandbox *sb;
	int slot;
	uint32_t host_ip;               /* host byte order: the gateway */
	enum rn_network fw_mode;        /* the mode the firewall rules are for */
	struct rn_ev dns, l80, l443;
	struct eg_conn *conns;
	int n_conns;
	struct eg_dnsq *dnsq;
	int n_dnsq;
	struct eg_entry *log;           /* EG_LOG_MAX ring, allocated at first use */
	unsigned long long log_next;    /* seq of the next entry (from 1) */
	struct rn_egress *next;         /* every attached egress (the sweep) */
};

/* The sandbox's current policy. */
static inline enum rn_network eg_mode(const struct rn_egress *e)
{
	return e->sb->spec.network;
}

/* The pattern that allows name now ("allow-all" under allow-all), or NULL. */
const char *eg_allowed(const struct rn_egress *e, const char *name);

/* Guards the egress logs and the decrypting threads' links to their
 * egress (rn_egress_mitm.c). */
extern pthread_mutex_t eg_mx;

/* rn_egress_log.c: eg_log_add takes eg_mx; _locked under it. */
void eg_log_add(struct rn_egress *e, const char *name, int port, int allowed,
		const char *rule, unsigned long long out, unsigned long long in);
void eg_log_add_locked(struct rn_egress *e, const char *name, int port, int allowed,
		       const char *rule, unsigned long long out, unsigned long long in);

/* rn_egress_mitm.c: a connection to a name with rules, decrypted and
 * served by a thread of its own, which takes in_fd and rules (rules stay
 * the caller's on failure). up: the name's address, reached only when a
 * request needs the server. pre: the bytes already read from the sandbox.
 * 0 or -1 with err. */
int eg_mitm_start(struct rn_egress *e, int in_fd, const struct sockaddr_in *up, int port,
		  const char *name, const char *pattern, struct rn_rules *rules,
		  const unsigned char *pre, size_t pre_len, struct sbx_err *err);
/* The sandbox's egress goes: its threads end without it. */
void eg_mitm_detach_all(struct rn_egress *e);
/* Close the decrypted connections whose name the current policy refuses. */
void eg_mitm_recheck(struct rn_egress *e);

/* rn_dns.c: a datagram on e->dns; the sweep; detach. */
void eg_dns_on_query(struct rn_ev *ev, uint32_t events);
void eg_dns_close_all(struct rn_egress *e);

/* rn_egress_conn.c */
void eg_conn_on_accept(struct rn_ev *ev, uint32_t events);
int eg_conn_sweep(struct rn_egress *e, int64_t now);
void eg_conn_close_all(struct rn_egress *e);
/* Free the connections closed since the last call (between loop passes). */
void eg_conn_reap(void);
/* Close the open connections whose name the current policy refuses. */
void eg_conn_recheck(struct rn_egress *e);

/* rn_egress_fw.c: slot's rules for mode (replacing its old ones), or
 * none (mode RN_NET_DENY_ALL). 0 or -1 with err. */
int eg_fw_apply(int slot, uint32_t host_ip, enum rn_network mode, struct sbx_err *err);

#endif
