#include "rn_net.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sbx_log.h"

extern char **environ;

/* Sandboxes' /30s come from 10.201.0.0/18: slot s owns 10.201.0.0 + 4s,
 * the host end is +1, the sandbox +2. */
#define NET_POOL "10.201.0.0/18"

/* Destinations a sandbox never reaches (SECURITY.md 0.5): the host is
 * covered by the INPUT rule, these by FORWARD. */
const char *const rn_net_denied[] = {
	"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
	"172.16.0.0/12", "192.168.0.0/16", "224.0.0.0/4", "240.0.0.0/4", NULL
};

/* The rules a sandbox's isolation depends on. Checked before every
 * allow-all sandbox (someone may have flushed the firewall since), and
 * reinstalled when one is missing: fail closed, never open. */
static const char check_line[] =
	"exec >/dev/null 2>&1; "
	"[ \"$(cat /proc/sys/net/ipv4/ip_forward)\" = 1 ] && "
	"iptables -C FORWARD -i sbxh+ -j SBX-FWD && iptables -C FORWARD -o sbxh+ -j SBX-IN && "
	"iptables -C INPUT -i sbxh+ -j DROP && "
	"iptables -C SBX-FWD -d 169.254.0.0/16 -j REJECT --reject-with icmp-net-prohibited && "
	"iptables -C SBX-FWD -d 10.0.0.0/8 -j REJECT --reject-with icmp-net-prohibited && "
	"iptables -C SBX-IN -j DROP && "
	"iptables -t nat -C POSTROUTING -s " NET_POOL " ! -o sbxh+ -j MASQUERADE";

pid_t rn_net_spawn(const char *line, struct sbx_err *err)
{
	char *argv[] = { "/bin/sh", "-c", (char *)line, NULL };
	posix_spawnattr_t attr;
	sigset_t none;
	pid_t pid;
	int rc;

	posix_spawnattr_init(&attr);
	sigemptyset(&none);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
	rc = posix_spawn(&pid, "/bin/sh", NULL, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	if (rc != 0) {
		errno = rc;
		return sbx_err_sys(err, "spawn /bin/sh");
	}
	return pid;
}

/* Run a shell line of ip/iptables commands (our own text, no user input),
 * waiting for it. 0 when it exited 0. */
static int run(const char *line, struct sbx_err *err)
{
	pid_t pid = rn_net_spawn(line, err);
	int st;

	if (pid < 0)
		return -1;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return sbx_err_sys(err, "waitpid");
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return sbx_err_set(err, EIO, "network setup failed: %.300s", line);
	return 0;
}

static int setup_host(struct sbx_err *err)
{
	char line[4096];
	size_t n;
	int fd;

	/* Dedicated chains, rebuilt at each runner start; the hooks into the
	 * built-in chains are added once (-C checks first). */
	n = (size_t)snprintf(line, sizeof(line),
		"exec >/dev/null 2>&1; "
		"iptables -N SBX-FWD; iptables -F SBX-FWD; "
		"iptables -N SBX-IN; iptables -F SBX-IN; ");
	for (int i = 0; rn_net_denied[i]; i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n,
			"iptables -A SBX-FWD -d %s -j REJECT --reject-with icmp-net-prohibited && ",
			rn_net_denied[i]);
	snprintf(line + n, sizeof(line) - n,
		"iptables -A SBX-FWD -j ACCEPT && "
		"iptables -A SBX-IN -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT && "
		"iptables -A SBX-IN -j DROP && "
		"{ iptables -C FORWARD -i sbxh+ -j SBX-FWD || iptables -I FORWARD 1 -i sbxh+ -j SBX-FWD; } && "
		"{ iptables -C FORWARD -o sbxh+ -j SBX-IN || iptables -I FORWARD 1 -o sbxh+ -j SBX-IN; } && "
		"{ iptables -C INPUT -i sbxh+ -j DROP || iptables -I INPUT 1 -i sbxh+ -j DROP; } && "
		"{ iptables -t nat -C POSTROUTING -s " NET_POOL " ! -o sbxh+ -j MASQUERADE || "
		"  iptables -t nat -I POSTROUTING 1 -s " NET_POOL " ! -o sbxh+ -j MASQUERADE; }");
	if (run(line, err) < 0)
		return sbx_err_wrap(err, "install the sandbox firewall (iptables)");
	fd = open("/proc/sys/net/ipv4/ip_forward", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "1", 1) != 1) {
		if (fd >= 0)
			close(fd);
		return sbx_err_sys(err, "enable ip_forward");
	}
	close(fd);
	sbx_info("allow-all networking: forwarding on, firewall chains SBX-FWD/SBX-IN installed");
	return 0;
}

/* slot's host end (+1) and sandbox end (+2) addresses */
static void slot_addrs(int slot, char host[20], char guest[20])
{
	unsigned base = (10u << 24) | (201u << 16) | ((unsigned)slot * 4u);

	snprintf(host, 20, "%u.%u.%u.%u", base >> 24, (base >> 16) & 255, (base >> 8) & 255,
		 (base & 255) + 1);
	snprintf(guest, 20, "%u.%u.%u.%u", base >> 24, (base >> 16) & 255, (base >> 8) & 255,
		 (base & 255) + 2);
}

int rn_net_allow_all(pid_t pid, int slot, struct sbx_err *err)
{
	char host[20], guest[20], line[1024];

	if (run(check_line, NULL) < 0 && setup_host(err) < 0)
		return -1;
	slot_addrs(slot, host, guest);
	/* IPv6 off on both ends: no link-local path to the host. Strict
	 * reverse-path filtering on the host end: a packet from the sandbox
	 * whose source address is not its own /30 is dropped (a second layer
	 * behind "no raw sockets, no CAP_NET_ADMIN"; security probe 40). The
	 * veth goes away with the sandbox's network namespace. Both ends
	 * carry segments of at most RN_LINK_SEGMENT bytes, as the loopback
	 * does (rn_child.c): the sandbox's sends are built that size,
	 * and a larger (GRO-merged) packet forwarded to it is split on the
	 * host end. */
	snprintf(line, sizeof(line),
		 "exec >/dev/null 2>&1; ip link del sbxh%d; "
		 "ip link add sbxh%d type veth peer name eth0 netns %d && "
		 "sysctl -qw net.ipv6.conf.sbxh%d.disable_ipv6=1 && "
		 "sysctl -qw net.ipv4.conf.sbxh%d.rp_filter=1 && "
		 "ip link set sbxh%d gso_max_size %d && "
		 "ip addr add %s/30 dev sbxh%d && ip link set sbxh%d up && "
		 "nsenter -t %d -n sh -c 'sysctl -qw net.ipv6.conf.eth0.disable_ipv6=1 && "
		 "ip link set eth0 gso_max_size %d && "
		 "ip addr add %s/30 dev eth0 && ip link set eth0 up && "
		 "ip route add default via %s'",
		 slot, slot, (int)pid, slot, slot, slot, RN_LINK_SEGMENT, host, slot, slot,
		 (int)pid, RN_LINK_SEGMENT, guest, host);
	return run(line, err);
}

int rn_net_readdress(const char *netns, int slot, struct sbx_err *err)
{
	char host[20], guest[20], line[PATH_MAX + 512];

	/* the path is the runner's own (the sandbox's dir), never quoted by
	 * a sandbox; the shared rules are checked as for a new veth */
	if (strchr(netns, '\''))
		return sbx_err_set(err, EINVAL, "netns path %.200s has a quote", netns);
	if (run(check_line, NULL) < 0 && setup_host(err) < 0)
		return -1;
	slot_addrs(slot, host, guest);
	snprintf(line, sizeof(line),
		 "exec >/dev/null 2>&1; nsenter --net='%s' sh -c 'ip link set eth0 up && "
		 "ip addr replace %s/30 dev eth0 && ip route replace default via %s'",
		 netns, guest, host);
	return run(line, err);
}

void rn_net_resolv_conf(enum rn_network mode, int slot, char *buf, size_t n)
{
	unsigned g = (10u << 24 | 201u << 16) + (unsigned)slot * 4u + 1u;

	if (mode == RN_NET_DENY_ALL || slot < 0)
		snprintf(buf, n, "# network: deny-all (no resolver)\n");
	else
		snprintf(buf, n, "nameserver %u.%u.%u.%u\n", g >> 24, (g >> 16) & 255,
			 (g >> 8) & 255, g & 255);
}

int rn_net_run(const char *line, struct sbx_err *err)
{
	return run(line, err);
}

void rn_net_release(int slot)
{
	char line[96];

	snprintf(line, sizeof(line), "exec >/dev/null 2>&1; ip link del sbxh%d; true", slot);
	run(line, NULL);
}
