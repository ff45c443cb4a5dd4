/* Who may talk to the agent. The agent is root inside the sandbox and runs
 * whatever a connection asks, so a connection on its UNIX socket is served
 * only when the peer (SO_PEERCRED, taken by the kernel at connect time) is
 *  - the host side (runner or gateway): it lives outside the sandbox's
 *    user and pid namespaces, so it shows as the overflow uid (an id not
 *    mapped into our namespace, /proc/sys/kernel/overflowuid) with pid 0
 *    (not in our pid namespace). The pid tells it apart from a process of
 *    the sandbox running as the mapped uid of the same number (nobody):
 *    every process of the sandbox has a pid here; or
 *  - a process with the agent's own uid (root inside: it can do all the
 *    agent does anyway; and the agent's tests, which run it on the host).
 * Anyone else (uid 1000 inside, whatever the socket's mode) is closed
 * unserved. Refusals are logged once, then counted at most once a minute,
 * so a loop of them cannot flood the log.
 *
 * Under gVisor this check admits everyone: SO_PEERCRED there reports the
 * caller's own credentials, not the peer's. The gvisor driver therefore
 * moves the socket out of every sandbox process's reach once the agent
 * listens (runner/driver_gvisor_sock.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent.h"
#include "sbx_log.h"

#define REFUSAL_LOG_EVERY_MS 60000

static struct {
	uid_t self;
	uid_t overflow;
	int64_t logged_at;       /* 0: nothing logged yet */
	unsigned long unlogged;  /* refusals since the last log line */
} pc;

static uid_t read_overflow_uid(void)
{
	FILE *f = fopen("/proc/sys/kernel/overflowuid", "re");
	unsigned long v = 65534;

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 65534;
		fclose(f);
	}
	return (uid_t)v;
}

void ag_peer_init(void)
{
	pc.self = geteuid();
	pc.overflow = read_overflow_uid();
}

static void log_refusal(const struct ucred *cr, int got)
{
	int64_t now = ag_now_ms();

	pc.unlogged++;
	if (pc.logged_at && now - pc.logged_at < REFUSAL_LOG_EVERY_MS)
		return;
	if (!got)
		sbx_warn("refused a connection: no peer credentials (%s); %lu refused "
			 "since the last report", strerror(errno), pc.unlogged);
	else
		sbx_warn("refused a connection from uid %u gid %u pid %d (only the host "
			 "side or uid %u may use the agent); %lu refused since the last report",
			 (unsigned)cr->uid, (unsigned)cr->gid, (int)cr->pid, (unsigned)pc.self,
			 pc.unlogged);
	pc.logged_at = now ? now : 1;
	pc.unlogged = 0;
}

int ag_peer_allowed(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	int got = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 &&
		  len == sizeof(cr);

	if (got && (cr.uid == pc.self || (cr.pid == 0 && cr.uid == pc.overflow)))
		return 1;
	log_refusal(&cr, got);
	return 0;
}
