/* A sandbox's egress under its network policy (docs/runner.md "Network"):
 * the resolver on its gateway address (rn_dns.c), the proxy that TCP 80
 * and 443 are redirected to under an allow-list (rn_egress_conn.c), the
 * firewall rules of its slot (rn_egress_fw.c) and its egress log
 * (rn_egress_log.c). The jail and gvisor drivers attach it once the veth
 * exists (rn_net_allow_all) and detach it before the veth goes. */
#ifndef RN_EGRESS_H
#define RN_EGRESS_H

#include <cJSON.h>

#include "runner.h"

/* Ports on the sandbox's gateway address (the host end of its veth) that
 * the slot's DNAT rules send its DNS, HTTP and TLS to. */
#define RN_EGRESS_DNS_PORT 15053
#define RN_EGRESS_HTTP_PORT 15080
#define RN_EGRESS_TLS_PORT 15443

/* Listen on slot's gateway address and install its rules for sb's
 * policy. 0, or -1 with err (nothing left behind). */
int rn_egress_attach(struct rn_sandbox *sb, int slot, struct sbx_err *err);
/* Close everything of sb's egress and remove its rules (no-op if none). */
void rn_egress_detach(struct rn_sandbox *sb);

/* Remove the firewall rules of slot, whose sandbox is gone with no egress
 * attached in this runner (a restart's reconcile of a lost one). */
void rn_egress_drop_slot(int slot);

/* Replace sb's policy (spec.network, spec.policy; ownership of policy
 * moves here, also on failure): new connections and DNS queries follow it
 * at once, the firewall follows a change of mode, and open proxied
 * connections the new policy refuses are closed. -1 with err: EBUSY when
 * sb has no network to change (deny-all at create, or not running). */
int rn_egress_set_policy(struct rn_sandbox *sb, enum rn_network mode,
			 struct rn_policy *policy, struct sbx_err *err);

/* The egress log entries after seq `since`, oldest first, as an array. */
cJSON *rn_egress_log_json(const struct rn_sandbox *sb, unsigned long long since);

/* Deadlines of every sandbox's connections and lookups; ms until it
 * wants to run again (-1: none). */
int rn_egress_sweep(void);

#endif
