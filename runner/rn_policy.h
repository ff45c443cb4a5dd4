/* A sandbox's network policy (docs/runner.md "Network"): deny-all,
 * allow-all, or an allow-list of names with the addresses it must never
 * reach. Parsed from the create request's or a set_network request's
 * "network", matched by the egress proxy and the DNS resolver
 * (rn_egress.c, rn_dns.c). A pure module: no sockets, no state. */
#ifndef RN_POLICY_H
#define RN_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "rn_rules.h"
#include "rn_spec.h"
#include "sbx_err.h"

#define RN_POLICY_MAX_ALLOW 256
#define RN_POLICY_MAX_CIDRS 64

struct rn_cidr {
	uint32_t net, mask;     /* host byte order */
};

struct rn_policy {
	int n_allow;
	char *allow[RN_POLICY_MAX_ALLOW];   /* "name", "*.suffix" or "*" */
	int n_cidrs;
	struct rn_cidr cidrs[RN_POLICY_MAX_CIDRS];   /* deny_cidrs */
	int rules_form;         /* allow came as an object name -> rules */
	struct rn_rules *rules[RN_POLICY_MAX_ALLOW];   /* allow[i]'s, or NULL: spliced */
};

/* The "network" value v (NULL: absent, deny-all) as a mode and, for an
 * allow-list, a policy to free with rn_policy_free (*out NULL for the
 * two modes). 0, or -1 with err naming the field (EINVAL). */
int rn_policy_parse(const cJSON *v, enum rn_network *mode, struct rn_policy **out,
		    struct sbx_err *err);
void rn_policy_free(struct rn_policy *p);

/* The policy as the API shows it: "deny-all", "allow-all" or the object. */
cJSON *rn_policy_json(enum rn_network mode, const struct rn_policy *p);

/* The pattern of p that allows name (a name sbx_peek_name_ok accepts),
 * or NULL. An IPv4 literal matches nothing. */
const char *rn_policy_match(const struct rn_policy *p, const char *name);

/* The rules of the pattern that allows name, or NULL (none: spliced). */
const struct rn_rules *rn_policy_rules(const struct rn_policy *p, const char *name);

/* Why a connection to addr (host byte order) is refused whatever the
 * name: "always-denied" (the ranges of rn_net.c, SECURITY.md 0.5),
 * "deny_cidrs", or NULL when it may go. p may be NULL. */
const char *rn_policy_addr_denied(const struct rn_policy *p, uint32_t addr);

/* "a.b.c.d/len" (or "a.b.c.d", a /32) into c. 0 or -1. */
int rn_cidr_parse(const char *s, struct rn_cidr *c);

#endif
