/* Starting a command: pipes or a PTY, then fork; the child makes its own
 * session, switches identity and directory, and searches PATH itself so
 * that "not found" (127) and "not executable" (126, incl. ENOEXEC: no
 * implicit /bin/sh fallback) are reported the same way for every cause,
 * with the reason written to the command's own stderr. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "agent_spawn.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static int env_has(char **env, const char *name)
{
	size_t l = strlen(name), i;

	for (i = 0; env && env[i]; i++)
		if (!strncmp(env[i], name, l) && env[i][l] == '=')
			return 1;
	return 0;
}

static const char *env_get(char **env, const char *name)
{
	size_t l = strlen(name), i;

	for (i = 0; env && env[i]; i++)
		if (!strncmp(env[i], name, l) && env[i][l] == '=')
			return env[i] + l + 1;
	return NULL;
}

/* Child side only: write "sandbox-agent: what: reason\n" to fd 2, exit. */
static void die(const char *what, const char *arg, int e)
{
	char msg[PATH_MAX + 256];
	int n = snprintf(msg, sizeof(msg), "sandbox-agent: %s%s%s: %s\n", what,
			 arg ? " " : "", arg ? arg : "", strerror(e));

	if (n > 0 && write(2, msg, (size_t)n) < 0)
		n = 0;
	_exit(e == ENOENT ? 127 : 126);
}

static void child_exec(const struct ag_spawn *s, char **envp)
{
	const char *path = env_get(envp, "PATH"), *p, *colon;
	char full[PATH_MAX];
	int saw_eacces = 0, e = ENOENT;

	if (strchr(s->argv[0], '/')) {
		execve(s->argv[0], s->argv, envp);
		die("exec", s->argv[0], errno);
	}
	for (p = path ? path : DEFAULT_PATH; ; p = colon + 1) {
		size_t dl;

		colon = strchr(p, ':');
		dl = colon ? (size_t)(colon - p) : strlen(p);
		if (snprintf(full, sizeof(full), "%.*s%s%s", (int)dl, p, dl ? "/" : "",
			     s->argv[0]) < (int)sizeof(full)) {
			execve(full, s->argv, envp);
			if (errno == EACCES)
				saw_eacces = 1;
			else if (errno != ENOENT && errno != ENOTDIR)
				e = errno;   /* e.g. ENOEXEC: found but cannot run */
		}
		if (!colon)
			break;
	}
	if (e == ENOENT && saw_eacces)
		e = EACCES;
	die("exec", s->argv[0], e);
}

static void child(const struct ag_spawn *s, char **envp, int in, int out, int err,
		  int slave)
{
	sigset_t all;
	int i;

	for (i = 1; i < NSIG; i++)
		signal(i, SIG_DFL);
	/* glibc refuses signal() for its reserved real-time signals (32, 33),
	 * and an ignored disposition inherited from whoever started the agent
	 * would survive exec: reset them with the raw system call. */
	for (i = 32; i < SIGRTMIN; i++) {
		struct { void *handler; unsigned long flags; void *restorer;
			 unsigned long mask; } ksa = { SIG_DFL, 0, NULL, 0 };
		syscall(SYS_rt_sigaction, i, &ksa, NULL, sizeof(ksa.mask));
	}
	/* unblocked only now: a signal sent to the new process before this
	 * (a hangup of a terminal closed at once) acts as it would on the
	 * command, not through a disposition inherited from the agent */
	sigfillset(&all);
	sigprocmask(SIG_UNBLOCK, &all, NULL);
	setsid();
	if (slave >= 0) {
		ioctl(slave, TIOCSCTTY, 0);
		in = out = err = slave;
	}
	/* dup2 to distinct targets; err first so failures can be reported */
	if (dup2(err, 2) < 0 || dup2(out, 1) < 0 || dup2(in, 0) < 0)
		_exit(126);
	if (s->gid >= 0) {
		gid_t g = (gid_t)s->gid;

		if (setgroups(1, &g) < 0 || setgid(g) < 0)
			die("setgid", NULL, errno);
	}
	if (s->uid >= 0 && setuid((uid_t)s->uid) < 0)
		die("setuid", NULL, errno);
	if (s->cwd && chdir(s->cwd) < 0)
		die("cwd", s->cwd, errno);
	child_exec(s, envp);
}

/* 1 if the NAME=value entry e names a variable set in env. */
static int env_overrides(char **env, const char *e)
{
	char name[256];
	const char *eq = strchr(e, '=');
	size_t l = eq ? (size_t)(eq - e) : strlen(e);

	if (l >= sizeof(name))
		return 0;
	memcpy(name, e, l);
	name[l] = '\0';
	return env_has(env, name);
}

/* A command's environment: the agent's own (the sandbox's env, set by the
 * runner when it started the agent with a cleared environment), overridden
 * by the exec request's env, plus defaults for PATH, HOME and TERM. */
static char **build_env(const struct ag_spawn *s)
{
	size_t n = 0, m = 0, i, k = 0;
	char **env;

	while (s->env && s->env[n])
		n++;
	while (environ && environ[m])
		m++;
	env = calloc(n + m + 4, sizeof(char *));
	if (!env)
		return NULL;
	for (i = 0; i < n; i++)
		env[k++] = s->env[i];
	for (i = 0; i < m; i++)
		if (!env_overrides(s->env, environ[i]))
			env[k++] = environ[i];
	if (!env_has(env, "PATH"))
		env[k++] = (char *)"PATH=" DEFAULT_PATH;
	if (!env_has(env, "HOME"))
		env[k++] = (char *)((s->uid == 0 || (s->uid < 0 && geteuid() == 0)) ?
				    "HOME=/root" : "HOME=/home/sandbox");
	if (s->pty && !env_has(env, "TERM"))
		env[k++] = (char *)"TERM=xterm-256color";
	return env;
}

static int nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* vfork: the child borrows the agent's memory until its exec (or _exit),
 * so nothing of the agent's address space is copied or write-protected
 * for each command, and the agent resumes once the command runs. child()
 * writes only its own stack frames and makes raw-ish calls (no malloc; the
 * agent is single-threaded, so setuid is the plain system call). Its own
 * function, so that no variable of the caller's lives across the vfork. */
static pid_t __attribute__((noinline))
start_child(const struct ag_spawn *s, char **envp, int in, int out, int err, int slave)
{
	pid_t pid = vfork();

	if (pid == 0)
		child(s, envp, in, out, err, slave);
	return pid;
}

int ag_spawn(const struct ag_spawn *s, struct ag_spawned *r)
{
	int pin[2] = { -1, -1 }, pout[2] = { -1, -1 }, perr[2] = { -1, -1 };
	int master = -1, slave = -1, e;
	char slave_path[128];
	char **envp = build_env(s);
	pid_t pid;

	r->out = r->err = r->in = -1;
	if (!envp)
		return -1;
	if (s->pty) {
		struct winsize ws = { .ws_col = (unsigned short)(s->cols ? s->cols : 80),
				      .ws_row = (unsigned short)(s->rows ? s->rows : 24) };

		master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 ||
		    ptsname_r(master, slave_path, sizeof(slave_path)) != 0)
			goto fail;
		/* The slave is opened here, before the master is ever polled
		 * (as openpty does): gVisor reports EIO on a master whose
		 * slave nobody has opened yet, and the output of a command
		 * that raced it was lost. The child makes it its terminal. */
		slave = open(slave_path, O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (slave < 0)
			goto fail;
		ioctl(master, TIOCSWINSZ, &ws);
	} else {
		if (pipe2(pout, O_CLOEXEC) < 0 || pipe2(perr, O_CLOEXEC) < 0)
			goto fail;
		if (s->want_stdin) {
			if (pipe2(pin, O_CLOEXEC) < 0)
				goto fail;
		} else if ((pin[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
			goto fail;
		}
		/* Bigger pipes: fewer wake-ups for a flooding command. */
		fcntl(pout[1], F_SETPIPE_SZ, 1 << 20);
	}
	pid = start_child(s, envp, pin[0], pout[1], perr[1], slave);
	if (pid < 0)
		goto fail;
	free(envp);
	r->pid = pid;
	if (s->pty) {
		close(slave);
		nonblock(master);
		r->out = master;
		return 0;
	}
	close(pin[0]);
	close(pout[1]);
	close(perr[1]);
	nonblock(pout[0]);
	nonblock(perr[0]);
	r->out = pout[0];
	r->err = perr[0];
	if (pin[1] >= 0) {
		nonblock(pin[1]);
		r->in = pin[1];
	}
	return 0;
fail:
	e = errno;
	free(envp);
	if (master >= 0)
		close(master);
	if (slave >= 0)
		close(slave);
	for (int i = 0; i < 2; i++) {
		if (pin[i] >= 0) close(pin[i]);
		if (pout[i] >= 0) close(pout[i]);
		if (perr[i] >= 0) close(perr[i]);
	}
	errno = e;
	return -1;
}
