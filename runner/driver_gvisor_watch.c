/* The sandbox's watcher: the runner's child (sb->pid), a fork of the
 * runner that execs sandbox-gvisor-watch, a program of its own beside the
 * runner's binary (runner/gvwatch/), linked with libc alone ("gvisor-watch",
 * below): a fresh process of a few pages, instead of a copy of the
 * runner's heap that the runner's later writes make the watcher's own
 * (about 1 MiB per sandbox, measured), the runner's own binary again
 * (which it falls back to: libcrypto's relocated pages alone make that
 * about 0.6 MiB more), or a runsc process (`runsc run` in the foreground
 * holds about 4 MiB). It starts
 * `runsc run --detach`; as a subreaper it inherits the sandbox's sentry and
 * gofer when that returns, and exits when the sentry does, with the
 * sentry's status (re-raising its signal). Fresh stdio (never a regular
 * file without O_APPEND: runsc writes the sandbox's output at its own
 * offset), default signals, its own session.
 *
 * With net_fd (allow-all), it first makes the sandbox's network namespace,
 * then a private mount namespace in which /proc/sys/net is hidden under a
 * tiny tmpfs: runsc 20240729 takes the presence of
 * /proc/sys/net/core/rmem_default for "in the host's network namespace"
 * and refuses --network=sandbox, but every netns has that file since the
 * sysctl became per-namespace (gVisor issue 10704, fixed in later
 * releases). It reports 'n' on net_fd and waits for the runner's byte:
 * the runner holds the netns by a bind mount at <sandbox dir>/netns, gives
 * it its veth and addresses (runsc takes them into its netstack when it
 * starts) and writes config.json with that path. The bind mount keeps the
 * netns, its veth and its host address through a checkpoint, when no
 * process of the sandbox is left; a restore's watcher joins it (held, a
 * path) instead of making one. The netns ends when the runner unmounts it
 * at cleanup and the sandbox's processes are gone. The mount
 * namespace's copies of other sandboxes' mounts do not keep them: removing
 * a sandbox's dir on the host detaches its mount points in every
 * namespace (checked).
 *
 * After a restore (poke), it runs `runsc kill <id> USR2`: the agent, whose
 * listener was closed for the checkpoint, listens again.
 *
 * Once runsc returned, it moves the agent's socket out of the sandbox's
 * reach as soon as the agent listens (gv_sock_hide); should that fail,
 * it kills the sentry: a sandbox whose socket the runner cannot dial, or
 * its own processes can, must not run.
 *
 * Exit statuses of its own: 125 the network namespace could not be made
 * (or the runner gave up on the sandbox), 126 a step of its own failed,
 * 127 runsc could not be executed. */
#include "driver_gvisor.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rn_child.h"

/* A private mount namespace in which /proc/sys/net is hidden (runsc's
 * "host netns" test, above), once the network namespace is the sandbox's. */
static void hide_proc_sys_net(void)
{
	if (unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", "/proc/sys/net", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "size=4k,nr_inodes=2,mode=0555") < 0)
		_exit(125);
}

/* The sandbox's network namespace (allow-all), then 'n' to the runner and
 * wait for its byte: it has held the netns by a bind mount and given it its
 * veth. The mount namespace comes after, so it has the runner's bind
 * mount, which config.json names. */
static void make_netns(int net_fd)
{
	char go;
	ssize_t n;

	/* A new netns's lo is down; runsc copies it into its netstack as it
	 * finds it, and without it 127.0.0.1 inside (the agent's forward to
	 * a preview, a server talking to itself) would go out the veth. */
	if (unshare(CLONE_NEWNET) < 0 || rn_child_loopback_up(0, NULL) < 0 ||
	    write(net_fd, "n", 1) != 1)
		_exit(125);
	while ((n = read(net_fd, &go, 1)) < 0 && errno == EINTR)
		;
	if (n != 1)
		_exit(125);    /* the runner gave up on this sandbox */
	close(net_fd);
	hide_proc_sys_net();
}

/* A restore's: the namespace the runner held across the checkpoint, its
 * veth and addresses given back already. */
static void join_netns(const char *held)
{
	int fd = open(held, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || setns(fd, CLONE_NEWNET) < 0)
		_exit(125);
	close(fd);
	hide_proc_sys_net();
}

/* /dev/null for stdin and stdout, and for stderr unless the agent keeps
 * the runner's, which is then appended to; nothing else open. */
static void fresh_stdio(int agent_stderr)
{
	if (rn_child_stdio(agent_stderr) < 0)
		_exit(126);
	if (agent_stderr) {
		struct stat sst;
		int fl = fcntl(2, F_GETFL);

		if (fstat(2, &sst) == 0 && S_ISREG(sst.st_mode) && fl >= 0)
			fcntl(2, F_SETFL, fl | O_APPEND);
	}
	syscall(SYS_close_range, 3, ~0u, 0);
}

/* runsc's environment: the runner's, with GOMAXPROCS=1 first (the Go
 * runtime takes a variable's first occurrence). runsc gives its sentry an
 * environment of its own, so it reaches `runsc run` and the gofer only:
 * the gofer, idle beside every sandbox, holds about 1 MiB less with one P
 * (docs/runner.md), and with directfs it serves the sentry's opens, never
 * a command's bytes. (A GOMEMLIMIT of a few MiB as well saved little more
 * and made creates slower: runsc's start collected garbage throughout.) */
static char **runsc_env(void)
{
	static char *const ours[] = { "GOMAXPROCS=1" };
	size_t n = 0, k = sizeof(ours) / sizeof(ours[0]);
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + k + 1, sizeof(*env));
	if (!env)
		_exit(126);
	memcpy(env, ours, sizeof(ours));
	memcpy(env + k, environ, n * sizeof(*env));
	return env;
}

/* The timer slack of runsc, and so of the sentry, gofer and systrap stubs
 * it starts (each inherits it). systrap in runsc 20240729 has a goroutine
 * that sleeps 400 us in a loop for the sandbox's whole life (its fast-path
 * monitor; later gVisor releases park it while the sandbox is idle), so an
 * idle sentry's Go runtime wakes about a thousand times a second, and each
 * wake-up stirs a few of its threads. A 1 ms slack lets the host kernel
 * gather those wake-ups: an idle sentry used about a third less CPU
 * (docs/runner.md, "Measured here", the gvisor density). A timer inside
 * the sandbox with nothing else to wake the sentry may fire up to 1 ms
 * later; I/O wakes it as before. Only the runsc processes get it: the
 * watcher's own fine poll for the agent's socket keeps the default. */
#define GV_TIMER_SLACK_NS 1000000UL

/* `runsc run --detach`, waited for; the watcher ends with runsc's failure. */
static void run_runsc(char *const argv[])
{
	int st;
	pid_t runsc = fork();

	if (runsc < 0)
		_exit(126);
	if (runsc == 0) {
		/* (best effort: with the default slack the sandbox is the same,
		 * only costlier while idle) */
		(void)prctl(PR_SET_TIMERSLACK, GV_TIMER_SLACK_NS, 0, 0, 0);
		execve(argv[0], argv, runsc_env());
		_exit(127);
	}
	while (waitpid(runsc, &st, 0) < 0)
		if (errno != EINTR)
			_exit(126);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

/* The sentry's pid from runsc's --pid-file, or -1. */
static pid_t read_sentry(const char *pidfile)
{
	char buf[32];
	int fd = open(pidfile, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return (pid_t)strtol(buf, NULL, 10);
}

/* Reap every child (the sentry and the gofer are ours now) until none is
 * left; the sentry's wait status goes to *sentry_st. */
static void reap_all(pid_t sentry, int *sentry_st)
{
	pid_t p;
	int st;

	while ((p = waitpid(-1, &st, 0)) != 0) {
		if (p < 0) {
			if (errno == EINTR)
				continue;
			break;    /* ECHILD: nothing left */
		}
		if (p == sentry)
			*sentry_st = st;
	}
}

/* End as the sentry ended: by its signal, else with its exit code (1 when
 * it was never seen). */
static void __attribute__((noreturn)) exit_as(int sentry_st)
{
	if (sentry_st >= 0 && WIFSIGNALED(sentry_st)) {
		signal(WTERMSIG(sentry_st), SIG_DFL);
		kill(getpid(), WTERMSIG(sentry_st));
	}
	_exit(sentry_st >= 0 && WIFEXITED(sentry_st) ? WEXITSTATUS(sentry_st) : 1);
}

#define WATCH_ARGS_MAX 40

int gv_watch_path(char *out, size_t n)
{
	char self[PATH_MAX], *slash;
	ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (k <= 0)
		return -1;
	self[k] = 0;
	slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = 0;
	if (snprintf(out, n, "%s/" GV_WATCH_EXE, self) >= (int)n)
		return -1;
	return access(out, X_OK);
}

void gv_watch_exec(char *const argv[], char *const poke[], const char *pidfile,
		   const char *sockdir, int agent_stderr, int net_fd, const char *held)
{
	char *v[WATCH_ARGS_MAX + 1], fd[16], exe[PATH_MAX];
	int n = 0;

	snprintf(fd, sizeof fd, "%d", net_fd);
	v[n++] = GV_WATCH_EXE;
	v[n++] = GV_WATCH_CMD;
	v[n++] = (char *)pidfile;
	v[n++] = (char *)sockdir;
	v[n++] = agent_stderr ? "1" : "0";
	v[n++] = fd;
	v[n++] = (char *)(held ? held : "");
	for (int i = 0; argv[i] && n < WATCH_ARGS_MAX - 2; i++)
		v[n++] = argv[i];
	v[n++] = "--";
	for (int i = 0; poke && poke[i] && n < WATCH_ARGS_MAX; i++)
		v[n++] = poke[i];
	v[n] = NULL;
	/* the channel to the runner (allow-all) crosses the exec */
	if (n < WATCH_ARGS_MAX && (net_fd < 0 || fcntl(net_fd, F_SETFD, 0) == 0)) {
		if (gv_watch_path(exe, sizeof(exe)) == 0)
			execv(exe, v);
		/* without its own program, the runner's binary watches */
		v[0] = "sandbox-runner";
		execv("/proc/self/exe", v);
	}
	/* no exec (a binary gone): this copy watches, as it can */
	gv_watch(argv, poke, pidfile, sockdir, agent_stderr, net_fd, held);
}

int gv_watch_main(int argc, char **argv)
{
	/* GV_WATCH_CMD pidfile sockdir stderr netfd held runsc-argv... -- poke... */
	char **poke;
	int sep;

	if (argc < 8)
		return 2;
	for (sep = 6; sep < argc && strcmp(argv[sep], "--"); sep++)
		;
	if (sep == argc || sep == 6)
		return 2;
	argv[sep] = NULL;
	poke = sep + 1 < argc ? argv + sep + 1 : NULL;
	gv_watch(argv + 6, poke, argv[1], argv[2], !strcmp(argv[3], "1"),
		 (int)strtol(argv[4], NULL, 10), argv[5]);
}

void gv_watch(char *const argv[], char *const poke[], const char *pidfile,
	      const char *sockdir, int agent_stderr, int net_fd, const char *held)
{
	int sentry_st = -1;
	pid_t sentry;

	rn_child_defaults();
	setsid();
	if (net_fd >= 0)
		make_netns(net_fd);
	else if (held && held[0])
		join_netns(held);
	fresh_stdio(agent_stderr);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		_exit(126);
	run_runsc(argv);
	if (poke)
		run_runsc(poke);
	sentry = read_sentry(pidfile);
	if (gv_sock_hide(sockdir, sentry, &sentry_st) < 0 && sentry > 0)
		kill(sentry, SIGKILL);
	/* the sandbox is over when the sentry is (the gofer follows it) */
	reap_all(sentry, &sentry_st);
	exit_as(sentry_st);
}
