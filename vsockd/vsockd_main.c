/* sandbox-vsockd: the vhost-user vsock device of one VM (vs_dev.h).
 *
 *   sandbox-vsockd --vhost-user PATH --uds PATH [--cid N] [--ready-fd N]
 *                  [--user UID:GID] [--relay-port R]
 *
 * Listens on both UNIX sockets (0600): PATH of --vhost-user for the one
 * front end (QEMU's -chardev socket,path=PATH), PATH of --uds for hybrid
 * vsock clients ("CONNECT <port>\n"). Once both listen it writes "ready\n"
 * to --ready-fd and closes it, so whoever starts QEMU knows the socket is
 * there. It ends, closing every client, when the front end disconnects
 * (the VM is gone) or on SIGTERM/SIGINT; exit status 0 then, 1 on a
 * setup error, 2 on a protocol error of the front end. With --user it
 * drops to UID:GID (no groups, no new privileges) once both sockets
 * listen, before anything is read from either: the guest's bytes are then
 * parsed without root, and the socket files are left for the owner of
 * their directory to remove.
 *
 * A program of its own rather than a runner module: every byte it parses
 * comes from a guest, so it runs as its own process (one per VM) that a
 * broken guest can at worst crash, and a crash or kill -9 of it is seen
 * by the VM's owner as the socket closing (the sandbox fails cleanly). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sbx_log.h"
#include "sbx_net.h"
#include "vs_dev.h"

struct opts {
	const char *vhost_path, *uds_path;
	unsigned long long cid;
	int ready_fd;
	long uid, gid;          /* -1: keep who we are */
	unsigned relay_port;    /* 0: none (vs_dev.h) */
};

static int usage(void)
{
	fprintf(stderr, "usage: sandbox-vsockd --vhost-user PATH --uds PATH [--cid N] [--ready-fd N] "
	        "[--user UID:GID] [--relay-port R]\n");
	return 1;
}

static int parse(int argc, char **argv, struct opts *o)
{
	o->cid = 3;
	o->ready_fd = -1;
	o->uid = o->gid = -1;
	for (int i = 1; i < argc; i++) {
		char *end;
		if (i + 1 >= argc)
			return -1;
		if (!strcmp(argv[i], "--vhost-user")) {
			o->vhost_path = argv[++i];
		} else if (!strcmp(argv[i], "--uds")) {
			o->uds_path = argv[++i];
		} else if (!strcmp(argv[i], "--cid")) {
			errno = 0;
			o->cid = strtoull(argv[++i], &end, 10);
			/* 0-2 are reserved, -1U is VMADDR_CID_ANY */
			if (errno || *end || o->cid < 3 || o->cid >= 0xffffffffull)
				return -1;
		} else if (!strcmp(argv[i], "--user")) {
			errno = 0;
			o->uid = strtol(argv[++i], &end, 10);
			if (errno || *end != ':' || o->uid < 0)
				return -1;
			o->gid = strtol(end + 1, &end, 10);
			if (errno || *end || o->gid < 0)
				return -1;
		} else if (!strcmp(argv[i], "--relay-port")) {
			unsigned long v;
			errno = 0;
			v = strtoul(argv[++i], &end, 10);
			if (errno || *end || v < 1 || v > 65535)
				return -1;
			o->relay_port = (unsigned)v;
		} else if (!strcmp(argv[i], "--ready-fd")) {
			o->ready_fd = atoi(argv[++i]);
		} else {
			return -1;
		}
	}
	return o->vhost_path && o->uds_path ? 0 : -1;
}

static int drop_privileges(const struct opts *o)
{
	if (o->uid < 0)
		return 0;
	if (setgroups(0, NULL) < 0 || setresgid((gid_t)o->gid, (gid_t)o->gid, (gid_t)o->gid) < 0 ||
	    setresuid((uid_t)o->uid, (uid_t)o->uid, (uid_t)o->uid) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		sbx_err_log("--user %ld:%ld: %s", o->uid, o->gid, strerror(errno));
		return -1;
	}
	return 0;
}

static enum vs_ev_kind tag_vhost = VS_EV_VHOST, tag_listen = VS_EV_LISTEN;
static int tag_signal, tag_vhost_listen;

static int watch(int epfd, int fd, void *tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = tag };
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

static int accept_front_end(struct vs_dev *d, int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return errno == EAGAIN ? 0 : -1;
	if (d->vu.sock >= 0) {
		close(fd);   /* one front end per device */
		return 0;
	}
	d->vu.sock = fd;   /* blocking: a message is read whole */
	return watch(d->epfd, fd, &tag_vhost);
}

static void accept_clients(struct vs_dev *d, int lfd)
{
	int fd;

	while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0)
		vs_dev_client(d, fd);
}

static int loop(struct vs_dev *d, int vfd, int ufd)
{
	struct epoll_event evs[64];

	for (;;) {
		int n = epoll_wait(d->epfd, evs, 64, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return 1;
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;
			if (p == &tag_signal)
				return 0;
			if (p == &tag_vhost_listen) {
				if (accept_front_end(d, vfd) < 0)
					return 1;
				continue;
			}
			if (p == &tag_listen) {
				accept_clients(d, ufd);
				continue;
			}
			switch (*(enum vs_ev_kind *)p) {
			case VS_EV_VHOST:
				if (vu_dev_handle(&d->vu) < 0) {
					/* a front end that hung up is the VM ending */
					return d->vu.mem.n || d->vu.sock < 0 ? 0 : 2;
				}
				break;
			case VS_EV_KICK_RX:
				vs_dev_kick(d, VU_RX);
				break;
			case VS_EV_KICK_TX:
				vs_dev_kick(d, VU_TX);
				break;
			case VS_EV_CLIENT:
				vs_dev_client_event(d, p, evs[i].events);
				/* the event list may name a client just freed: the
				 * next wait reports what is still there */
				goto next;
			default:
				break;
			}
		}
	next:;
	}
}

int main(int argc, char **argv)
{
	struct opts o;
	struct vs_dev d;
	sigset_t mask;
	int epfd, vfd, ufd, sfd, rc;

	sbx_log_init("sandbox-vsockd", getenv("SBX_DEBUG") ? SBX_LOG_DEBUG : SBX_LOG_INFO);
	memset(&o, 0, sizeof o);
	if (parse(argc, argv, &o) < 0)
		return usage();
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	vfd = sbx_unix_listen(o.vhost_path, 1);
	ufd = sbx_unix_listen(o.uds_path, 128);
	if (epfd < 0 || sfd < 0 || vfd < 0 || ufd < 0) {
		sbx_err_log("listen on %s and %s: %s", o.vhost_path, o.uds_path, strerror(errno));
		return 1;
	}
	if (drop_privileges(&o) < 0)
		return 1;
	vs_dev_init(&d, epfd, o.cid);
	d.relay_port = o.relay_port;
	if (watch(epfd, sfd, &tag_signal) < 0 || watch(epfd, vfd, &tag_vhost_listen) < 0 ||
	    watch(epfd, ufd, &tag_listen) < 0)
		return 1;
	if (o.ready_fd >= 0) {
		if (write(o.ready_fd, "ready\n", 6) != 6)
			sbx_warn("--ready-fd %d: %s", o.ready_fd, strerror(errno));
		close(o.ready_fd);
	}
	rc = loop(&d, vfd, ufd);
	vs_dev_close_all(&d);
	vu_dev_free(&d.vu);
	if (o.uid < 0) {
		unlink(o.vhost_path);
		unlink(o.uds_path);
	}
	sbx_info("ended (%llu guest packets dropped)", d.dropped);
	return rc;
}
