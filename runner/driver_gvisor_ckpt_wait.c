/* The waits around a gvisor checkpoint and restore (driver_gvisor_ckpt.c):
 * the agent's host socket closed before `runsc checkpoint`, and listening
 * again (moved out of the guest's reach by the watcher) after `runsc
 * restore`. Both poll the socket the runner dials; both are bounded, and
 * the restore's wait ends early when the watcher (the restored sandbox)
 * does. Both run in a worker (rn_worker.h), off the runner's loop. */
#include "driver_gvisor.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sbx_net.h"

#define STEP_NS 5000000L        /* 5 ms between dials */

static void step(void)
{
	struct timespec ts = { 0, STEP_NS };

	nanosleep(&ts, NULL);
}

/* A dial of sockdir/agent.sock: 0 it connected (closed at once: the agent
 * drops a connection that closes before its handshake), else errno. */
static int dial(const char *sockdir)
{
	int fd = sbx_unix_connect_beneath(sockdir, GV_AGENT_SOCK_NAME);

	if (fd < 0)
		return errno ? errno : EIO;
	close(fd);
	return 0;
}

/* 1 when sockdir/GV_GUEST_DIR/GV_QUIESCED_NAME is a regular file (no
 * link followed). */
static int quiesced(const char *sockdir)
{
	char p[PATH_MAX];
	struct stat st;

	if (snprintf(p, sizeof(p), "%s/" GV_GUEST_DIR "/" GV_QUIESCED_NAME, sockdir) >=
	    (int)sizeof(p))
		return 0;
	return lstat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int gv_ckpt_wait_closed(const char *sockdir, int timeout_ms)
{
	for (long i = 0; i <= timeout_ms * 1000000L / STEP_NS; i++) {
		if (quiesced(sockdir))
			return 0;
		step();
	}
	errno = ETIMEDOUT;
	return -1;
}

void gv_ckpt_unmark(const char *sockdir)
{
	char p[PATH_MAX];

	if (snprintf(p, sizeof(p), "%s/" GV_GUEST_DIR "/" GV_QUIESCED_NAME, sockdir) <
	    (int)sizeof(p))
		unlink(p);
}

int gv_ckpt_wait_listening(const char *sockdir, pid_t watcher, int timeout_ms)
{
	for (long i = 0; i <= timeout_ms * 1000000L / STEP_NS; i++) {
		/* a worker cannot wait for the runner's child: the runner reaps
		 * the watcher that ends, and then it is gone */
		if (kill(watcher, 0) < 0 && errno == ESRCH)
			return 1;
		if (dial(sockdir) == 0)
			return 0;
		step();
	}
	errno = ETIMEDOUT;
	return -1;
}
