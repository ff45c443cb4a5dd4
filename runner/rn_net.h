/* allow-all networking, the jail's and gvisor's: a veth pair per sandbox
 * (sbxh<slot> on the host, eth0 inside), NAT to the host's uplink, and an
 * always-denied list no policy overrides (docs/runner.md). */
#ifndef RN_NET_H
#define RN_NET_H

#include <sys/types.h>

#include "sbx_err.h"

/* MTU and GSO size of a sandbox's loopback and GSO size of its veth
 * (rn_child.c): what one socket can force past the socket budget
 * is about two of these. */
#define RN_LINK_SEGMENT 8192

/* Give the network namespace of pid (slot's addresses) a veth with a
 * default route through the host. The first call installs the host's
 * forwarding and firewall rules. 0 or -1 with err. */
int rn_net_allow_all(pid_t pid, int slot, struct sbx_err *err);
/* Delete slot's host end of the veth now (the kernel removes it with the
 * sandbox's netns, but later, in a work queue): at cleanup, so nothing of
 * a stopped sandbox is left. Call only while holding the slot. */
void rn_net_release(int slot);

#endif
