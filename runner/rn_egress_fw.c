/* The firewall rules of one sandbox's egress, beside rn_net.c's shared
 * ones (which stay as they are: the always-denied ranges, the host
 * unreachable, replies only inbound). Three chains of our own hold one
 * group of rules per slot, each matching only -i sbxh<slot>:
 *   filter SBX-SVC (hooked first in INPUT): the slot's resolver port on
 *     its gateway, and under an allow-list the proxy's, are reachable;
 *     nothing else of the host;
 *   nat SBX-DNAT (hooked first in PREROUTING): UDP 53 to the gateway to
 *     the resolver; under an allow-list UDP 53 to any address too (no
 *     other server is reachable), and TCP 80/443 to the proxy;
 *   filter SBX-POL (hooked first in FORWARD, ahead of SBX-FWD's ACCEPT):
 *     under an allow-list, everything else is refused at once (TCP with a
 *     reset, the rest with ICMP): other ports, UDP (QUIC), addresses
 *     typed in by hand.
 * The hooks are put back in first place at every change when they are not
 * there, so a reinstall of rn_net.c's hooks ahead of them cannot leave an
 * allow-list open past the next change. */
#include "rn_egress_int.h"

#include <stdio.h>

#include "rn_net.h"

/* Delete every rule of slot in CHAIN (table T). */
#define DROP_SLOT(T, CHAIN) \
	"iptables -t " T " -S " CHAIN " 2>/dev/null | grep -e '-i sbxh%d ' | " \
	"sed 's/^-A /-D /' | while read -r l; do iptables -t " T " $l; done; "

/* CHAIN's hook first in BUILTIN, added when it is not there; never
 * deleted and added again, which would leave the other sandboxes'
 * allow-lists open for a moment. */
#define FIRST(T, BUILTIN, CHAIN) \
	"{ [ \"$(iptables -t " T " -S " BUILTIN " 1)\" = \"-A " BUILTIN " -i sbxh+ -j " CHAIN "\" ] || " \
	"iptables -t " T " -I " BUILTIN " 1 -i sbxh+ -j " CHAIN "; } && "

/* Rules of slots whose veth is gone: left by a runner that was killed
 * (its sandboxes' veths went with their namespaces). A slot in use has its
 * veth before it has rules, so a concurrent runner's are never touched. */
static const char prune[] =
	"for tc in filter:SBX-SVC filter:SBX-POL nat:SBX-DNAT; do "
	"t=${tc%%:*}; c=${tc#*:}; "
	"iptables -t $t -S $c 2>/dev/null | grep -e '-i sbxh' | while read -r l; do "
	"d=$(echo \"$l\" | sed -n 's/.*-i \\(sbxh[0-9]*\\) .*/\\1/p'); "
	"ip link show \"$d\" >/dev/null 2>&1 || iptables -t $t $(echo \"$l\" | sed 's/^-A /-D /'); "
	"done; done; true";

int eg_fw_apply(int slot, uint32_t host_ip, enum rn_network mode, struct sbx_err *err)
{
	static int pruned;
	char line[4096], ip[20];
	size_t n;

	if (!pruned) {
		pruned = 1;
		rn_net_run(prune, NULL);
	}

	snprintf(ip, sizeof(ip), "%u.%u.%u.%u", host_ip >> 24, (host_ip >> 16) & 255,
		 (host_ip >> 8) & 255, host_ip & 255);
	n = (size_t)snprintf(line, sizeof(line),
		"exec >/dev/null 2>&1; "
		"iptables -N SBX-SVC; iptables -N SBX-POL; iptables -t nat -N SBX-DNAT; "
		DROP_SLOT("filter", "SBX-SVC") DROP_SLOT("filter", "SBX-POL")
		DROP_SLOT("nat", "SBX-DNAT"), slot, slot, slot);
	if (mode == RN_NET_DENY_ALL)
		return rn_net_run(line, err);
	n += (size_t)snprintf(line + n, sizeof(line) - n,
		FIRST("filter", "INPUT", "SBX-SVC") FIRST("filter", "FORWARD", "SBX-POL")
		FIRST("nat", "PREROUTING", "SBX-DNAT")
		"iptables -A SBX-SVC -i sbxh%d -d %s -p udp --dport %d -j ACCEPT && "
		"iptables -t nat -A SBX-DNAT -i sbxh%d %s%s -p udp --dport 53 -j DNAT "
		"--to-destination %s:%d",
		slot, ip, RN_EGRESS_DNS_PORT,
		slot, mode == RN_NET_POLICY ? "" : "-d ", mode == RN_NET_POLICY ? "" : ip,
		ip, RN_EGRESS_DNS_PORT);
	if (mode == RN_NET_POLICY)
		snprintf(line + n, sizeof(line) - n,
			 " && iptables -A SBX-SVC -i sbxh%d -d %s -p tcp -m multiport --dports %d,%d -j ACCEPT"
			 " && iptables -A SBX-POL -i sbxh%d -p tcp -j REJECT --reject-with tcp-reset"
			 " && iptables -A SBX-POL -i sbxh%d -j REJECT --reject-with icmp-net-prohibited"
			 " && iptables -t nat -A SBX-DNAT -i sbxh%d -p tcp --dport 80 -j DNAT "
			 "--to-destination %s:%d"
			 " && iptables -t nat -A SBX-DNAT -i sbxh%d -p tcp --dport 443 -j DNAT "
			 "--to-destination %s:%d",
			 slot, ip, RN_EGRESS_HTTP_PORT, RN_EGRESS_TLS_PORT,
			 slot, slot, slot, ip, RN_EGRESS_HTTP_PORT, slot, ip, RN_EGRESS_TLS_PORT);
	return rn_net_run(line, err);
}
