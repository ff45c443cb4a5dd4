/* The embedded default: with no --runner-socket the gateway runs its own
 * sandbox-runner (jail driver) from the directory of its own binary, on a
 * socket in a private runtime directory; gw_runner_watch.c checks it once a
 * second: a runner that died is started again (it reconciles what the dead
 * one left).
 * On shutdown the runner gets SIGTERM (it stops every sandbox) and the
 * runtime directory is removed, so nothing is left behind. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "core/gw.h"
#include "gw_local_runner.h"
#include "sbx_fs.h"
#include "sbx_log.h"

static struct {
	char bin[PATH_MAX];
	char dir[64];            /* private runtime dir */
	char sock[PATH_MAX];
	char state[PATH_MAX];
	char images[PATH_MAX];
	char drivers[128];       /* --drivers for the runner ("": its default) */
	char isolation[32];      /* --default-isolation ("": its default) */
	pid_t pid;
	int restarts;
} lr;

/* Start the runner; with stop, until it listens or *stop is set (at
 * start-up, before the loop runs). A restart does not wait: requests
 * meanwhile get 503. */
static int spawn(struct sbx_err *err, const volatile sig_atomic_t *stop)
{
	pid_t pid = fork();

	if (pid < 0)
		return sbx_err_set(err, errno, "fork: %s", strerror(errno));
	if (pid == 0) {
		char *argv[16];
		int n = 0;

		argv[n++] = lr.bin;
		argv[n++] = "--socket";
		argv[n++] = lr.sock;
		argv[n++] = "--state-dir";
		argv[n++] = lr.state;
		argv[n++] = "--image-dir";
		argv[n++] = lr.images;
		argv[n++] = "--name";
		argv[n++] = "local";
		if (lr.drivers[0]) {
			argv[n++] = "--drivers";
			argv[n++] = lr.drivers;
		}
		if (lr.isolation[0]) {
			argv[n++] = "--default-isolation";
			argv[n++] = lr.isolation;
		}
		argv[n] = NULL;
		execv(lr.bin, argv);
		fprintf(stderr, "sandbox-gateway: exec %s: %s\n", lr.bin, strerror(errno));
		_exit(127);
	}
	lr.pid = pid;
	if (!stop)
		return 0;
	for (int i = 0; i < 300; i++) {   /* up to 30 s: the first start reconciles */
		struct stat st;
		int status;
		if (stat(lr.sock, &st) == 0 && S_ISSOCK(st.st_mode))
			return 0;
		if (*stop)   /* the caller stops the runner on its way out */
			return sbx_err_set(err, EINTR, "stopped while the local runner started");
		if (waitpid(pid, &status, WNOHANG) == pid) {
			lr.pid = 0;
			return sbx_err_set(err, EIO, "the local runner exited at start (status %d); "
					   "see its messages above", status), -1;
		}
		nanosleep(&(struct timespec){ 0, 100 * 1000 * 1000 }, NULL);
	}
	return sbx_err_set(err, ETIMEDOUT, "the local runner did not listen within 30 s");
}

/* Called once a second (gw_runner_watch.c): a runner that died is
 * started again. */
void gw_local_runner_check(void)
{
	struct sbx_err err = { 0 };
	int status;

	if (lr.pid > 0 && waitpid(lr.pid, &status, WNOHANG) == lr.pid) {
		sbx_err_log("the local runner died (status %d); starting it again", status);
		lr.pid = 0;
		if (++lr.restarts > 20 || spawn(&err, NULL))
			sbx_err_log("local runner: %s", err.msg[0] ? err.msg : "too many restarts");
	}
}

int gw_local_runner_start(const char *state_dir, const char *image_dir,
			  const char *drivers, const char *default_isolation,
			  const volatile sig_atomic_t *stop,
			  const char **socket_path, struct sbx_err *err)
{
	char self[PATH_MAX];

	if (sbx_self_dir(self, sizeof self) < 0)
		return sbx_err_set(err, errno, "cannot find my own binary");
	/* passed through as they are: the runner checks the names */
	if ((drivers && snprintf(lr.drivers, sizeof lr.drivers, "%s", drivers) >=
		       (int)sizeof lr.drivers) ||
	    (default_isolation && snprintf(lr.isolation, sizeof lr.isolation, "%s",
					   default_isolation) >= (int)sizeof lr.isolation))
		return sbx_err_set(err, EINVAL, "--drivers or --default-isolation too long");
	if (snprintf(lr.bin, sizeof lr.bin, "%s/sandbox-runner", self) >= (int)sizeof lr.bin ||
	    access(lr.bin, X_OK))
		return sbx_err_set(err, ENOENT, "no sandbox-runner beside the gateway (%s); build it "
				   "or give --runner-socket", lr.bin), -1;
	snprintf(lr.dir, sizeof lr.dir, "/tmp/sandbox-gateway.XXXXXX");
	if (!mkdtemp(lr.dir))
		return sbx_err_set(err, errno, "mkdtemp: %s", strerror(errno));
	chmod(lr.dir, 0711);   /* sandboxes' unprivileged roots walk the state dir */
	snprintf(lr.sock, sizeof lr.sock, "%s/runner.sock", lr.dir);
	if (state_dir)
		snprintf(lr.state, sizeof lr.state, "%s", state_dir);
	else
		snprintf(lr.state, sizeof lr.state, "%s/state", lr.dir);
	snprintf(lr.images, sizeof lr.images, "%s", image_dir);
	sbx_info("starting the local runner %s (state %s, images %s)", lr.bin, lr.state, lr.images);
	unlink(lr.sock);
	if (spawn(err, stop))
		return -1;   /* gw_local_runner_stop cleans up */
	*socket_path = lr.sock;
	return 0;
}

void gw_local_runner_stop(void)
{
	if (lr.pid > 0) {
		int status;
		kill(lr.pid, SIGTERM);
		for (int i = 0; i < 300 && waitpid(lr.pid, &status, WNOHANG) == 0; i++)
			nanosleep(&(struct timespec){ 0, 100 * 1000 * 1000 }, NULL);
		if (waitpid(lr.pid, &status, WNOHANG) == 0) {
			sbx_warn("the local runner did not stop in 30 s: killing it");
			kill(lr.pid, SIGKILL);
			waitpid(lr.pid, &status, 0);
		}
		lr.pid = 0;
	}
	/* never descends into a mount a sandbox might have left (that one
	 * stays, with the directories above it) */
	if (lr.dir[0] && sbx_rmtree(lr.dir) < 0)
		sbx_warn("local runner: removing %s: %s", lr.dir, strerror(errno));
}
