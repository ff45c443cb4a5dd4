/* The gvisor agent's socket, moved out of the sandbox's reach.
 *
 * The agent serves whoever connects to its socket as root, and under
 * gVisor it cannot tell who that is: SO_PEERCRED on a UNIX socket reports
 * the caller's own credentials there (gVisor answers for the peer), so the
 * jail's check (guest/agent_peer.c) lets every connection through. Had
 * root inside opened the socket's mode, uid 1000 would run commands as
 * root through the agent. So under gVisor no process of the sandbox may
 * reach the socket at all.
 *
 * With --host-uds=create only a socket the agent binds inside becomes a
 * host socket, so it binds in GV_GUEST_DIR (a dir of the sandbox's socket
 * tmpfs, bound rw at /run/sbx). Once it listens, the watcher renames it up
 * into the tmpfs's root, which no mount shows inside: the runner dials it
 * there, and inside the name is gone (runsc revalidates the bind mount
 * against the host on every lookup: --file-access-mounts=shared). The move
 * happens before the sandbox's first command: the agent runs commands only
 * when asked through this very socket, which nothing on the host dials
 * before the move. Nothing else of the sandbox runs until then. */
#include "driver_gvisor.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sbx_net.h"

/* The agent listens within a few hundred ms of runsc's return; the first
 * second is polled finely (the move delays readiness by at most one
 * step), then every 20 ms until the sentry ends or the runner gives up on
 * the sandbox (its ready timeout kills this watcher). */
#define FINE_STEPS 500
#define FINE_NS 2000000L
#define COARSE_NS 20000000L

/* 1 when the agent accepts connections at guest/agent.sock: bound,
 * chmod'ed 0600 and listening (sbx_unix_listen does them in that order;
 * a rename before its chmod would fail the agent's start). Connected
 * without following a link, and closed at once: the agent drops a
 * connection that closes before its handshake. */
static int agent_listens(const char *guest)
{
	int fd = sbx_unix_connect_beneath(guest, GV_AGENT_SOCK_NAME);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static int move_up(const char *sockdir)
{
	int dfd = open(sockdir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), gfd, rc, e;

	if (dfd < 0)
		return -1;
	gfd = openat(dfd, GV_GUEST_DIR, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (gfd < 0) {
		e = errno;
		close(dfd);
		errno = e;
		return -1;
	}
	rc = renameat2(gfd, GV_AGENT_SOCK_NAME, dfd, GV_AGENT_SOCK_NAME, RENAME_NOREPLACE);
	e = errno;
	close(gfd);
	close(dfd);
	errno = e;
	return rc;
}

int gv_sock_hide(const char *sockdir, pid_t sentry, int *sentry_st)
{
	char guest[PATH_MAX];
	pid_t p;
	int st;

	if (snprintf(guest, sizeof(guest), "%s/" GV_GUEST_DIR, sockdir) >= (int)sizeof(guest)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (long step = 0; !agent_listens(guest); step++) {
		struct timespec ts = { 0, step < FINE_STEPS ? FINE_NS : COARSE_NS };

		/* children reaped here (the sentry, the gofer) are the
		 * caller's: only the sentry's status matters to it */
		while ((p = waitpid(-1, &st, WNOHANG)) > 0)
			if (p == sentry) {
				*sentry_st = st;
				return 1;
			}
		if (p < 0 && errno == ECHILD)
			return 1;
		nanosleep(&ts, NULL);
	}
	return move_up(sockdir);
}

int gv_sock_rehide(const char *sockdir, int timeout_ms)
{
	char guest[PATH_MAX];

	if (snprintf(guest, sizeof(guest), "%s/" GV_GUEST_DIR, sockdir) >= (int)sizeof(guest)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (long i = 0; !agent_listens(guest); i++) {
		struct timespec ts = { 0, FINE_NS };

		if (i * FINE_NS >= timeout_ms * 1000000L) {
			errno = ETIMEDOUT;
			return -1;
		}
		nanosleep(&ts, NULL);
	}
	return move_up(sockdir);
}
