/* allow-all networking, the jail's and gvisor's: a veth pair per sandbox
 * (sbxh<slot> on the host, eth0 inside), NAT to the host's uplink, and an
 * always-denied list no policy overrides (docs/runner.md). */
#ifndef RN_NET_H
#define RN_NET_H

#include <sys/types.h>

#include "rn_spec.h"
#include "sbx_err.h"

/* MTU and GSO size of a sandbox's loopback and GSO size of its veth
 * (rn_child.c): what one socket can force past the socket budget
 * is about two of these. */
#define RN_LINK_SEGMENT 8192

/* The destinations no sandbox reaches whatever its policy (SECURITY.md
 * 0.5), as CIDR strings, NULL-terminated: the firewall's and the egress
 * proxy's (rn_policy.c) one list. */
extern const char *const rn_net_denied[];

/* Give the network namespace of pid (slot's addresses) a veth with a
 * default route through the host. The first call installs the host's
 * forwarding and firewall rules. 0 or -1 with err. */
int rn_net_allow_all(pid_t pid, int slot, struct sbx_err *err);
/* Give eth0 of the network namespace held at netns (a path) slot's
 * address and default route again: runsc takes them off the interface
 * into its netstack, and `runsc restore` into that namespace reads them
 * from it as a start does. The veth and host end are untouched. 0 or -1
 * with err. */
int rn_net_readdress(const char *netns, int slot, struct sbx_err *err);
/* Run a shell line of ip/iptables commands (the runner's own text, never
 * a sandbox's), waiting for it: 0 when it exited 0, else -1 with err. */
int rn_net_run(const char *line, struct sbx_err *err);
/* The same line started and not waited for: its pid (the runner's reaper
 * collects it), or -1 with err. */
pid_t rn_net_spawn(const char *line, struct sbx_err *err);

/* resolv.conf for a sandbox of mode on slot: the runner's resolver on its
 * gateway (rn_dns.c), or deny-all's comment (slot -1: no veth). */
void rn_net_resolv_conf(enum rn_network mode, int slot, char *buf, size_t n);

/* Delete slot's host end of the veth now (the kernel removes it with the
 * sandbox's netns, but later, in a work queue): at cleanup, so nothing of
 * a stopped sandbox is left. Call only while holding the slot. */
void rn_net_release(int slot);

#endif
