/* The vm driver's supervisor: the runner's child (sb->pid) that owns one
 * VM's two processes, sandbox-vsockd and QEMU. Its exit is the sandbox's
 * end, whichever of the two ended first: a VM whose vsock backend died
 * cannot be reached, and a backend without its VM has nothing to serve. */
#include "driver_vm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rn_child.h"
#include "sbx_clock.h"

static pid_t spawn(char *const argv[], int fd3, const char *log, int keep_stderr)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	if (log) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			if (!keep_stderr)
				dup2(fd, 2);
		}
	}
	if (fd3 >= 0) {
		dup2(fd3, 3);
	}
	execv(argv[0], argv);
	_exit(127);
}

/* ACPI power button through QMP; best effort (a guest that does not
 * listen for it is killed after VM_POWERDOWN_MS). */
static void powerdown(const char *dir)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	static const char caps[] = "{\"execute\":\"qmp_capabilities\"}\n";
	static const char down[] = "{\"execute\":\"system_powerdown\"}\n";
	char buf[4096];
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct timeval tv = { 1, 0 };

	if (fd < 0)
		return;
	if (snprintf(a.sun_path, sizeof(a.sun_path), "%s/qmp.sock", dir) >= (int)sizeof(a.sun_path)) {
		close(fd);
		return;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    read(fd, buf, sizeof(buf)) > 0 &&
	    write(fd, caps, sizeof(caps) - 1) > 0 && read(fd, buf, sizeof(buf)) > 0 &&
	    write(fd, down, sizeof(down) - 1) > 0 && read(fd, buf, sizeof(buf)) < 0)
		buf[0] = 0;   /* the answer says nothing we act on */
	close(fd);
}

#define VM_PRESS_AGAIN_MS 1000

static void reap(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGKILL);
		while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	*pid = -1;
}

static void end(pid_t other, int code)
{
	reap(&other);
	_exit(code);
}

/* sandbox-vsockd, and QEMU once the backend listens: 0, or -1 (the
 * caller ends what was started) */
static int start_pair(struct vm_launch *l, pid_t *vsockd, pid_t *qemu)
{
	char log[PATH_MAX + 16], go;
	int ready[2];
	struct pollfd pfd;

	*vsockd = *qemu = -1;
	if (pipe2(ready, O_CLOEXEC) < 0)
		return -1;
	snprintf(log, sizeof(log), "%s/vsockd.log", l->dir);
	*vsockd = spawn(l->vsockd_argv, ready[1], log, 0);
	close(ready[1]);
	if (*vsockd < 0) {
		close(ready[0]);
		return -1;
	}
	pfd = (struct pollfd){ .fd = ready[0], .events = POLLIN };
	if (poll(&pfd, 1, 10000) != 1 || read(ready[0], &go, 1) != 1) {
		close(ready[0]);
		return -1;
	}
	close(ready[0]);
	snprintf(log, sizeof(log), "%s/qemu.log", l->dir);
	*qemu = spawn(l->qemu_argv, -1, log, 0);
	return *qemu < 0 ? -1 : 0;
}

/* QEMU truncates its console file at start: the dead boot's logs are
 * kept aside */
static void keep_first_logs(const char *dir, int qemu_status)
{
	char a[PATH_MAX + 32], b[PATH_MAX + 32];
	int fd;

	snprintf(a, sizeof(a), "%s/console.log", dir);
	snprintf(b, sizeof(b), "%s/" VM_FIRST_CONSOLE, dir);
	rename(a, b);
	/* (made if QEMU died before it wrote one: the runner's sign) */
	fd = open(b, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		dprintf(fd, "\n[QEMU %s %d]\n", WIFSIGNALED(qemu_status) ? "died of signal" :
			"exited with", WIFSIGNALED(qemu_status) ? WTERMSIG(qemu_status) :
			WEXITSTATUS(qemu_status));
		close(fd);
	}
	snprintf(a, sizeof(a), "%s/qemu.log", dir);
	snprintf(b, sizeof(b), "%s/qemu.1.log", dir);
	rename(a, b);
}

void vm_supervise(struct vm_launch *l)
{
	char go;
	int st, dead_status = 0, booted = 0, stopping = 0, tries = 1;
	pid_t vsockd, qemu;
	sigset_t set;
	int64_t kill_at = 0, press_at = 0, backend_dead_at = 0;

	setsid();
	rn_child_defaults();
	/* the runner's VM_SIG_READY comes seconds later, once the guest's
	 * agent answered: blocked long before */
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, VM_SIG_READY);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (rn_child_stdio(l->keep_stderr) < 0)
		_exit(1);
	/* a network namespace of our own, QEMU's: empty, or the veth the
	 * runner bridges with its tap; then in the sandbox's cgroup before
	 * anything is started */
	if (unshare(CLONE_NEWNET) < 0 || write(l->go_fd, "n", 1) != 1 ||
	    read(l->go_fd, &go, 1) != 1 || go != 'g')
		_exit(1);
	close(l->go_fd);
	if (start_pair(l, &vsockd, &qemu) < 0)
		end(vsockd, VM_END_FAILED);
	for (;;) {
		struct timespec ts = { 0, 200 * 1000000 };
		int sig = sigtimedwait(&set, NULL, &ts), died = 0;
		pid_t p;

		if (sig == VM_SIG_READY)
			booted = 1;
		if (sig == SIGTERM)
			stopping = 1;
		if (sig == SIGTERM && !kill_at) {
			powerdown(l->dir);
			kill_at = sbx_mono_ms() + VM_POWERDOWN_MS;
			press_at = sbx_mono_ms() + VM_PRESS_AGAIN_MS;
		}
		/* again while it runs: a press before the agent has the button
		 * open (a stop during the boot) is lost; the agent takes one */
		if (press_at && sbx_mono_ms() >= press_at && sbx_mono_ms() < kill_at) {
			powerdown(l->dir);
			press_at = sbx_mono_ms() + VM_PRESS_AGAIN_MS;
		}
		if (kill_at && sbx_mono_ms() >= kill_at && qemu > 0)
			kill(qemu, SIGKILL);
		while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
			if (p == qemu && WIFEXITED(st) && WEXITSTATUS(st) == 0)
				end(vsockd, VM_END_POWEROFF);
			if (p == qemu && kill_at && sbx_mono_ms() >= kill_at)
				end(vsockd, VM_END_KILLED);
			if (p == qemu && !booted && !stopping && tries < VM_BOOT_TRIES) {
				qemu = -1;
				dead_status = st;
				died = 1;
				continue;
			}
			/* a panic (pvpanic) is an exit 1; a signal is QEMU's own crash */
			if (p == qemu)
				end(vsockd, WIFSIGNALED(st) ? VM_END_QEMU_SIGNAL : VM_END_QEMU);
			/* the backend ends by itself (status 0) when QEMU hangs
			 * up its vhost-user socket, i.e. as QEMU exits: QEMU's own
			 * status, due any moment, says how the VM ended */
			if (p == vsockd && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
				vsockd = -1;
				if (!kill_at)
					kill_at = sbx_mono_ms() + VM_POWERDOWN_MS;
			} else if (p == vsockd) {
				/* it fails when QEMU dies under it (a guest
				 * panic): QEMU's status, if it comes within a
				 * second, says what happened first */
				vsockd = -1;
				backend_dead_at = sbx_mono_ms();
			}
		}
		if (died) {
			tries++;
			reap(&vsockd);
			keep_first_logs(l->dir, dead_status);
			kill_at = backend_dead_at = 0;
			if (start_pair(l, &vsockd, &qemu) < 0)
				end(vsockd, VM_END_FAILED);
			continue;
		}
		if (backend_dead_at && sbx_mono_ms() - backend_dead_at >= 1000)
			end(qemu, VM_END_BACKEND);
	}
}
