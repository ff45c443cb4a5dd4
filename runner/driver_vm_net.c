/* The network of a VM sandbox under allow-all or an allow-list: the
 * jail's veth (rn_net_allow_all: sbxh<slot> on the host with the same
 * firewall, NAT and egress rules, keyed on that name) into the network
 * namespace of the VM's supervisor, where it is bridged with a tap that
 * QEMU's virtio-net uses. The guest owns the slot's sandbox address on
 * its eth0 (its init sets it from sbx.net= on the kernel command line),
 * so what leaves the guest meets the runner's rules exactly as a jail's
 * packets do. QEMU itself has no address anywhere: the namespace holds
 * only the bridge. Deny-all VMs get the same empty namespace and no NIC. */
#include "driver_vm.h"

#include <stdio.h>

#include "rn_egress.h"
#include "rn_net.h"

/* the slot's /30 (rn_net.c): host end +1 (the guest's gateway and
 * resolver), the sandbox +2 */
static void slot_addr(int slot, int plus, char *out, size_t n)
{
	unsigned a = ((10u << 24) | (201u << 16)) + (unsigned)slot * 4u + (unsigned)plus;

	snprintf(out, n, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

void vm_net_cmdline(int slot, char *out, size_t n)
{
	char guest[20], gw[20];

	if (slot < 0) {
		snprintf(out, n, "%s", "");
		return;
	}
	slot_addr(slot, 2, guest, sizeof(guest));
	slot_addr(slot, 1, gw, sizeof(gw));
	snprintf(out, n, " sbx.net=%s/30,%s", guest, gw);
}

int vm_net_attach(struct rn_sandbox *sb, int slot, struct sbx_err *err)
{
	char line[768];

	if (rn_net_allow_all(sb->pid, slot, err) < 0)
		return -1;
	/* eth0 gives its address to the guest and becomes a bridge port */
	snprintf(line, sizeof(line),
		 "exec >/dev/null 2>&1; nsenter -t %d -n sh -c '"
		 "ip addr flush dev eth0 && "
		 "ip link add " VM_BRIDGE " type bridge && "
		 "sysctl -qw net.ipv6.conf." VM_BRIDGE ".disable_ipv6=1 && "
		 "ip link set eth0 master " VM_BRIDGE " && "
		 "ip tuntap add dev " VM_TAP " mode tap && "
		 "sysctl -qw net.ipv6.conf." VM_TAP ".disable_ipv6=1 && "
		 "ip link set " VM_TAP " master " VM_BRIDGE " && "
		 "ip link set " VM_TAP " up && ip link set " VM_BRIDGE " up'",
		 (int)sb->pid);
	if (rn_net_run(line, err) < 0)
		return -1;
	return rn_egress_attach(sb, slot, err);
}
