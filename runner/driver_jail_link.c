/* The loopback device of a sandbox's own network namespace, set up by the
 * child while it still holds CAP_NET_ADMIN there: up, with an MTU and a
 * GSO size of RN_LINK_SEGMENT bytes, in one rtnetlink request.
 *
 * Why the size: past the sandbox's socket budget (memory.kmem.tcp on v1)
 * the kernel still forces about one segment per socket and direction into
 * the socket's queues, so what a socket can hold past the budget is its
 * segment size. The host's loopback builds 64 KiB segments; 8 KiB ones
 * bound the forced part to about 18 KiB per socket, and with nofile tied
 * to memory_mb (RN_NOFILE_PER_MB) all of it stays within memory_mb
 * (docs/runner.md, "socket buffers"). */
#include "driver_jail.h"

#include <errno.h>
#include <net/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rn_net.h"

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
static int read_ack(int s, struct sbx_err *err)
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
		return sbx_err_sys(err, "loopback: set up, MTU and GSO size %d",
				   RN_LINK_SEGMENT);
	}
	return 0;
}

int jail_link_loopback(struct sbx_err *err)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct link_req r;
	unsigned idx = if_nametoindex("lo");
	int s, rc;

	if (idx == 0)
		return sbx_err_sys(err, "loopback: no lo in the sandbox's namespace");
	memset(&r, 0, sizeof(r));
	r.nh.nlmsg_len = NLMSG_LENGTH(sizeof(r.ifi));
	r.nh.nlmsg_type = RTM_NEWLINK;
	r.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	r.nh.nlmsg_seq = 1;
	r.ifi.ifi_family = AF_UNSPEC;
	r.ifi.ifi_index = (int)idx;
	r.ifi.ifi_flags = IFF_UP;
	r.ifi.ifi_change = IFF_UP;
	put_u32(&r, IFLA_MTU, RN_LINK_SEGMENT);
	/* also the IPv4 GSO size while it is at most 64 KiB (the kernel keeps
	 * the two together below that) */
	put_u32(&r, IFLA_GSO_MAX_SIZE, RN_LINK_SEGMENT);
	s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (s < 0)
		return sbx_err_sys(err, "loopback: rtnetlink socket");
	if (sendto(s, &r, r.nh.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		rc = sbx_err_sys(err, "loopback: send the rtnetlink request");
	else
		rc = read_ack(s, err);
	close(s);
	return rc;
}
