/* Why a firewall rule and not the kernel's socket budget alone: past
 * memory.kmem.tcp.limit_in_bytes (v1) the kernel puts the cgroup's sockets
 * under pressure (sends wait or get EAGAIN, windows shrink) but refuses
 * no socket and no connection, and forces about one segment into every
 * new one. So a sandbox at its budget could go on opening connections and
 * hold one segment more with each. The rule lives in the sandbox's own
 * network namespace, OUTPUT chain, where every connection made there
 * passes (loopback included); the sandbox cannot remove it (no
 * CAP_NET_ADMIN inside, and its seccomp policy allows only route netlink).
 * Why a reset: a connect(2) inside fails at once with ECONNREFUSED instead
 * of waiting out SYN retries. */
#include "driver_jail_refuse.h"

#include <errno.h>
#include <stdio.h>

#include "rn_net.h"

#define RULE "OUTPUT -p tcp --syn -m comment --comment sbx-sock-budget " \
	     "-j REJECT --reject-with tcp-reset"

pid_t jail_refuse_connections(struct rn_sandbox *sb, int on, struct sbx_err *err)
{
	char line[512];
	pid_t pid;

	if (sb->pid <= 0)
		return sbx_err_set(err, ESRCH, "%s has no process to find its network by",
				   sb->id);
	/* -C first: a second call changes nothing */
	if (on)
		snprintf(line, sizeof(line),
			 "exec >/dev/null 2>&1; nsenter -t %d -n sh -c '"
			 "{ iptables -w -C " RULE " || iptables -w -I " RULE "; } && "
			 "{ ip6tables -w -C " RULE " || ip6tables -w -I " RULE "; }'",
			 (int)sb->pid);
	else
		snprintf(line, sizeof(line),
			 "exec >/dev/null 2>&1; nsenter -t %d -n sh -c '"
			 "while iptables -w -D " RULE "; do :; done; "
			 "while ip6tables -w -D " RULE "; do :; done; true'",
			 (int)sb->pid);
	pid = rn_net_spawn(line, err);
	if (pid < 0)
		return sbx_err_wrap(err, "%s new connections of %s at its socket budget",
				    on ? "refuse" : "allow again", sb->id);
	return pid;
}
