/* The child preamble both drivers share (rn_child.h).
 *
 * The loopback: the jail's parent sets it up through an rtnetlink socket
 * it made in the sandbox's network namespace (the runner, root on the
 * host, holds CAP_NET_ADMIN over it), before the child runs anything of
 * the sandbox's; up with an MTU and a
 * GSO size of RN_LINK_SEGMENT bytes. Why the size: past the sandbox's
 * socket budget (memory.kmem.tcp on v1) the kernel still forces about one
 * segment per socket and direction into the socket's queues, so what a
 * socket can hold past the budget is its segment size. The host's loopback
 * builds 64 KiB segments; 8 KiB ones bound the forced part to about 18 KiB
 * per socket, and with nofile tied to memory_mb (RN_NOFILE_PER_MB) all of
 * it stays within memory_mb (docs/runner.md, "socket buffers"). gvisor's
 * watcher only brings it up: runsc copies it into its own netstack as it
 * finds it. */
#include "rn_child.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx_fs.h"

void rn_child_defaults(void)
{
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	umask(022);
	/* raising it back needs no privilege; best effort like the rest */
	sbx_write_file("/proc/self/oom_score_adj", "0", 0, 0);
}

int rn_child_stdio(int keep_stderr)
{
	int nul = open("/dev/null", O_RDWR);

	if (nul < 0)
		return -1;
	dup2(nul, 0);
	dup2(nul, 1);
	if (!keep_stderr)
		dup2(nul, 2);
	return 0;
}

struct link_req {
	struct nlmsghdr nh;
	struct ifinfomsg ifi;
	char attrs[64];
};

static void put_u32(struct link_req *r, unsigned short type, unsigned v)
{
	struct rtattr *a = (struct rtattr *)((char *)r + NLMSG_ALIGN(r->nh.nlmsg_len));

	a->rta_type = type;
	a->rta_len = RTA_LENGTH(sizeof(v));
	memcpy(RTA_DATA(a), &v, sizeof(v));
	r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/* The kernel's answer to our one request: 0 or its errno. */
static int read_ack(int s, int segment, struct sbx_err *err)
{
	char buf[512];
	ssize_t n = recv(s, buf, sizeof(buf), 0);
	struct nlmsghdr *h = (struct nlmsghdr *)buf;

	if (n < 0)
		return sbx_err_sys(err, "loopback: read the rtnetlink answer");
	if (!NLMSG_OK(h, (size_t)n) || h->nlmsg_type != NLMSG_ERROR ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
		return sbx_err_set(err, EPROTO, "loopback: no rtnetlink acknowledgement");
	if (((struct nlmsgerr *)NLMSG_DATA(h))->error != 0) {
		errno = -((struct nlmsgerr *)NLMSG_DATA(h))->error;
		return segment > 0 ? sbx_err_sys(err, "loopback: set up, MTU and GSO size %d",
						 segment) : sbx_err_sys(err, "loopback: set up");
	}
	return 0;
}

int rn_loopback_up(int s, int segment, struct sbx_err *err)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct ifreq ifr;
	struct link_req r;

	/* lo's index in the socket's namespace (SIOCGIFINDEX answers for the
	 * namespace the socket belongs to, not the caller's) */
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFINDEX, &ifr) < 0)
		return sbx_err_sys(err, "loopback: no lo in the sandbox's namespace");
	memset(&r, 0, sizeof(r));
	r.nh.nlmsg_len = NLMSG_LENGTH(sizeof(r.ifi));
	r.nh.nlmsg_type = RTM_NEWLINK;
	r.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	r.nh.nlmsg_seq = 1;
	r.ifi.ifi_family = AF_UNSPEC;
	r.ifi.ifi_index = ifr.ifr_ifindex;
	r.ifi.ifi_flags = IFF_UP;
	r.ifi.ifi_change = IFF_UP;
	if (segment > 0) {
		put_u32(&r, IFLA_MTU, (unsigned)segment);
		/* also the IPv4 GSO size while it is at most 64 KiB (the
		 * kernel keeps the two together below that) */
		put_u32(&r, IFLA_GSO_MAX_SIZE, (unsigned)segment);
	}
	if (sendto(s, &r, r.nh.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return sbx_err_sys(err, "loopback: send the rtnetlink request");
	return read_ack(s, segment, err);
}

int rn_child_loopback_up(int segment, struct sbx_err *err)
{
	int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	int rc;

	if (s < 0)
		return sbx_err_sys(err, "loopback: rtnetlink socket");
	rc = rn_loopback_up(s, segment, err);
	close(s);
	return rc;
}
