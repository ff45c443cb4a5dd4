/* sandbox-agent: the program inside every sandbox (usually PID 1). Parses
 * flags (agent_flags.c), listens on a UNIX socket or an AF_VSOCK port, and
 * runs the one epoll loop: connections, command pipes, signals (signalfd)
 * and a periodic timer for deadlines. Protocol: docs/protocol.md. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <linux/vm_sockets.h>

#include "agent.h"
#include "agent_flags.h"
#include "sbx_clock.h"
#include "sbx_dial.h"
#include "sbx_fs.h"
#include "sbx_log.h"
#include "sbx_net.h"

struct ag_ctx ag;

/* The listener's event and spec: SIGUSR1 closes it, SIGUSR2 opens it
 * again (quiesce/relisten below). */
static struct ag_ev *listen_ev;
static const char *listen_spec;

int64_t ag_now_ms(void)
{
	return sbx_mono_ms();
}

int64_t ag_wall_ms(void)
{
	return sbx_now_ms();
}

void ag_ev_set(struct ag_ev *e, uint32_t mask)
{
	struct epoll_event ev = { .events = mask, .data.ptr = e };

	if (e->fd < 0 || mask == e->mask)
		return;
	if (e->mask == 0 && mask != 0) {
		/* Regular files cannot be polled: EPERM is not an error here. */
		if (epoll_ctl(ag.epfd, EPOLL_CTL_ADD, e->fd, &ev) < 0)
			sbx_warn("epoll add fd %d: %s", e->fd, strerror(errno));
	} else if (mask == 0) {
		epoll_ctl(ag.epfd, EPOLL_CTL_DEL, e->fd, NULL);
	} else if (epoll_ctl(ag.epfd, EPOLL_CTL_MOD, e->fd, &ev) < 0) {
		sbx_warn("epoll mod fd %d: %s", e->fd, strerror(errno));
	}
	e->mask = mask;
}

void ag_ev_del(struct ag_ev *e)
{
	ag_ev_set(e, 0);
}

int ag_resolve(const char *path, char *out, size_t outlen)
{
	int n;

	if (path[0] == '/')
		n = snprintf(out, outlen, "%s", path);
	else
		n = snprintf(out, outlen, "%s/%s", ag.base_dir, path);
	if (n < 0 || (size_t)n >= outlen) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

static int listen_on(const char *spec)
{
	int fd;

	if (!strncmp(spec, "unix:", 5)) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		const char *p = spec + 5;

		if (!*p || strlen(p) >= sizeof(sa.sun_path)) {
			sbx_err_log("bad unix socket path \"%s\"", p);
			return -1;
		}
		/* 0600 whatever umask we inherited (a runner started under
		 * umask 000 made it 0777): it must never be connectable by
		 * others even for a moment. Peers are checked on accept as
		 * well. Bursts of hundreds of attaches at once (one per
		 * subscriber). */
		fd = sbx_unix_listen(p, SOMAXCONN);
		if (fd < 0)
			sbx_err_log("listen on %s: %s", p, strerror(errno));
		return fd;
	} else if (!strncmp(spec, "vsock:", 6)) {
		struct sockaddr_vm sa = { .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_ANY };
		char *end;
		long port = strtol(spec + 6, &end, 10);

		if (*end || port <= 0 || port > 0x7fffffff) {
			sbx_err_log("bad vsock port \"%s\"", spec + 6);
			return -1;
		}
		sa.svm_port = (unsigned)port;
		fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			sbx_err_log("vsock socket: %s", strerror(errno));
			return -1;
		}
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			sbx_err_log("bind vsock:%ld: %s", port, strerror(errno));
			close(fd);
			return -1;
		}
		ag.vsock = 1;
	} else {
		ag_usage();
	}
	/* bursts of hundreds of attaches at once (one per subscriber) */
	if (listen(fd, SOMAXCONN) < 0) {
		sbx_err_log("listen: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int setup_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -1;
	/* A vanished client must give EPIPE, not kill the agent. Commands get
	 * SIG_DFL back before exec. */
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

/* <socket path>.quiesced into out, or -1 (not a UNIX listener). */
static int quiesced_path(char *out, size_t n)
{
	if (strncmp(listen_spec, "unix:", 5) != 0 ||
	    snprintf(out, n, "%s" AG_QUIESCED_SUFFIX, listen_spec + 5) >= (int)n)
		return -1;
	return 0;
}

/* SIGUSR1, from the runner before it pauses the sandbox: every connection
 * ends, a stream or wait on a command with a `paused` error frame first
 * (as far as its socket takes it at once), and the listener closes. For
 * gvisor this is a must: gVisor cannot save a socket bound to or connected
 * through the host (the checkpoint fails and the sentry dies with it); for
 * every driver it ends streams and terminals with a reason instead of
 * leaving them silent. A dial from the host cannot tell that it is done
 * (under gVisor the host side of a closed listener still accepts into its
 * backlog), so the file <socket>.quiesced says so, made last (the runner
 * waits for it). Commands and their output stay, in memory. */
static void quiesce(void)
{
	char done[PATH_MAX];
	int fd;

	ag_conn_pause_all(NULL);
	if (listen_ev->fd >= 0) {
		ag_ev_del(listen_ev);
		close(listen_ev->fd);
		listen_ev->fd = ag.listen_fd = -1;
	}
	if (quiesced_path(done, sizeof(done)) < 0)
		return;
	fd = open(done, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		sbx_err_log("quiesce: create %s: %s", done, strerror(errno));
		return;
	}
	close(fd);
	sbx_info("quiesced: every connection closed, not listening");
}

/* SIGUSR2, after `runsc restore`: listen again at the same path. */
static void relisten(void)
{
	char done[PATH_MAX];

	if (listen_ev->fd >= 0 || ag.shutting_down)
		return;
	if (quiesced_path(done, sizeof(done)) == 0)
		unlink(done);
	listen_ev->fd = ag.listen_fd = listen_on(listen_spec);
	if (listen_ev->fd < 0)
		return;
	ag_ev_set(listen_ev, EPOLLIN);
	sbx_info("listening again on %s", listen_spec);
}

static void begin_shutdown(const char *why)
{
	if (ag.shutting_down)
		return;
	sbx_info("%s: terminating all commands", why);
	ag.shutting_down = 1;
	epoll_ctl(ag.epfd, EPOLL_CTL_DEL, ag.listen_fd, NULL);
	ag.kill_at = ag_deadline_in(AG_KILL_GRACE_MS);
	ag_cmd_kill_all(SIGTERM);
}

static void on_signal(int sfd)
{
	struct signalfd_siginfo si;

	while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		char why[32];
		if (si.ssi_signo == SIGCHLD)
			continue;
		if (si.ssi_signo == SIGUSR1 || si.ssi_signo == SIGUSR2) {
			(si.ssi_signo == SIGUSR1 ? quiesce : relisten)();
			continue;
		}
		snprintf(why, sizeof(why), "signal %u", si.ssi_signo);
		begin_shutdown(why);
	}
	ag_cmd_reap();
}

static void base_dir_init(const char *workdir)
{
	struct stat st;

	/* an image's WorkingDir, made when the image lacks it (as docker does) */
	if (workdir && workdir[0] == '/' && strlen(workdir) < sizeof(ag.base_dir) &&
	    sbx_mkdir_p(workdir, 0755, 0755) == 0) {
		snprintf(ag.base_dir, sizeof(ag.base_dir), "%s", workdir);
		return;
	}
	if (stat("/home/sandbox", &st) == 0 && S_ISDIR(st.st_mode))
		snprintf(ag.base_dir, sizeof(ag.base_dir), "/home/sandbox");
	else if (!getcwd(ag.base_dir, sizeof(ag.base_dir)))
		snprintf(ag.base_dir, sizeof(ag.base_dir), "/");
}

/* As PID 1 fds 0-2 may be closed; a pipe landing there would then keep
 * its number through dup2 in a child, and O_CLOEXEC with it. */
static int fill_stdio(void)
{
	for (int i = 0; i < 3; i++)
		if (fcntl(i, F_GETFD) < 0 && open("/dev/null", O_RDWR) < 0)
			return -1;
	return 0;
}

/* The loop's three sources: the listening socket, the signalfd and a
 * timer for deadlines, armed only while one is set. An idle agent then
 * sleeps until something happens: a 100 ms tick in every idle sandbox
 * costs the host CPU by the number of sandboxes (most under gVisor, where
 * each wake-up goes through the sentry). 0, or -1 after logging why. */
static int start_listening(const char *spec, struct ag_ev *lev, struct ag_ev *sev,
			   struct ag_ev *tev)
{
	ag.last_busy = ag_now_ms();
	ag.epfd = epoll_create1(EPOLL_CLOEXEC);
	sev->fd = setup_signals();
	listen_ev = lev;
	lev->fd = ag.listen_fd = listen_on(spec);
	tev->fd = ag.timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (ag.epfd < 0 || sev->fd < 0 || lev->fd < 0 || tev->fd < 0) {
		sbx_err_log("start-up failed: %s", strerror(errno));
		return -1;
	}
	ag_ev_set(lev, EPOLLIN);
	ag_ev_set(sev, EPOLLIN);
	ag_ev_set(tev, EPOLLIN);
	listen_spec = spec;
	return 0;
}

static void set_tick(int on)
{
	struct itimerspec its = { 0 };

	if (on) {
		its.it_interval.tv_nsec = 100000000;
		its.it_value.tv_nsec = 100000000;
	}
	if (timerfd_settime(ag.timer_fd, 0, &its, NULL) < 0) {
		/* a deadline that never fires would leave a stuck connection
		 * or command for good: exit, and the runner sees the sandbox end */
		sbx_err_log("timerfd_settime: %s", strerror(errno));
		exit(1);
	}
	ag.timer_armed = on;
}

int64_t ag_deadline_in(int64_t ms)
{
	if (!ag.timer_armed)
		set_tick(1);
	return ag_now_ms() + ms;
}

/* Whether any deadline is still set: a connection's, a command's
 * timeout_ms (or its SIGKILL repeat), or shutdown's grace. */
static int deadline_pending(void)
{
	const struct ag_conn *c;
	const struct ag_cmd *m;

	if (ag.shutting_down)
		return 1;
	for (c = ag.conns; c; c = c->next)
		if (c->deadline)
			return 1;
	for (m = ag.cmds; m; m = m->next)
		if (!m->reaped && m->kill_at)
			return 1;
	return 0;
}

static void on_timer(int tfd)
{
	uint64_t ticks;

	if (read(tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		sbx_warn("timerfd: %s", strerror(errno));
	ag_conn_sweep(ag_now_ms());
	ag_cmd_timeouts(ag_now_ms());
	if (!deadline_pending())
		set_tick(0);
}

/* One ready source, to its owner. */
static void dispatch(struct ag_ev *e, uint32_t events)
{
	switch (e->kind) {
	case AG_EV_LISTEN:
		if (!ag.shutting_down)
			ag_conn_accept();
		break;
	case AG_EV_SIGNAL:
		on_signal(e->fd);
		break;
	case AG_EV_TIMER:
		on_timer(e->fd);
		break;
	case AG_EV_POWER:
		if (ag_power_button_pressed(e->fd))
			begin_shutdown("the power button");
		break;
	case AG_EV_CONN:
		ag_conn_event(e->owner, events);
		break;
	case AG_EV_PEER:
		ag_fwd_event(e->owner, 1, events);
		break;
	case AG_EV_CMD_OUT:
	case AG_EV_CMD_ERR:
	case AG_EV_CMD_IN:
		ag_cmd_event(e, events);
		break;
	}
}

/* Shutting down: 1 once every command ended; SIGKILL for what outlived
 * its grace. */
static int shutdown_done(void)
{
	if (!ag_cmd_running()) {
		sbx_info("all commands ended; exiting");
		return 1;
	}
	if (ag_now_ms() >= ag.kill_at) {
		ag_cmd_kill_all(SIGKILL);
		ag.kill_at = ag_deadline_in(AG_KILL_GRACE_MS);
	}
	return 0;
}

/* The loop: its exit status once shutdown is done (or epoll failed). */
static int serve(void)
{
	for (;;) {
		struct epoll_event evs[64];
		int n = epoll_wait(ag.epfd, evs, 64, -1);

		if (n < 0 && errno != EINTR) {
			sbx_err_log("epoll_wait: %s", strerror(errno));
			return 1;
		}
		for (int k = 0; k < n; k++)
			dispatch(evs[k].data.ptr, evs[k].events);
		ag_conn_free_dead();
		ag_cmd_evict();
		if (ag.shutting_down && shutdown_done())
			return 0;
	}
}

int main(int argc, char **argv)
{
	struct ag_flags f;
	struct ag_ev lev = { .kind = AG_EV_LISTEN }, sev = { .kind = AG_EV_SIGNAL },
		     tev = { .kind = AG_EV_TIMER }, pev = { .kind = AG_EV_POWER };
	int rc, vm_init;

	ag_flags_parse(&f, argc, argv);
	ag.retention = f.retention;
	ag.hangup_on_eof = f.hangup_on_eof;
	sbx_log_init("sandbox-agent", f.log_level);
	if (fill_stdio() < 0)
		return 1;
	/* Orphans of our commands come to us even when not PID 1; nobody may
	 * ptrace or read our memory. */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	base_dir_init(f.workdir);
	ag_peer_init();
	/* PID 1 of a VM: the host stops it with the power button, and the
	 * guest ends with a power-off (init may not just exit). The button is
	 * open before the agent listens: the host may press it as soon as its
	 * dial is answered, and a press nobody has open is lost. */
	vm_init = f.listen && !strncmp(f.listen, "vsock:", 6) && getpid() == 1;
	if (vm_init)
		pev.fd = ag_power_button_open();
	if (start_listening(f.listen, &lev, &sev, &tev) < 0)
		return 1;
	if (f.ready_fd) {   /* before any command runs: none inherits it */
		/* one byte: "listening"; an end without it is an agent that
		 * died, and the runner dials to see */
		if (write((int)f.ready_fd, SBX_AGENT_READY_BYTE, 1) < 0) {
			/* the runner is gone or dials instead */
		}
		close((int)f.ready_fd);
	}
	/* after the ready pipe: the log line's first time stamp loads the
	 * time zone, which the runner need not wait for */
	sbx_info("listening on %s (pid %d, retention %zu bytes)", f.listen,
		 (int)getpid(), ag.retention);
	if (vm_init && pev.fd >= 0)
		ag_ev_set(&pev, EPOLLIN);
	else if (vm_init)
		sbx_warn("no power button: the host's stop will kill the VM");
	rc = serve();
	if (vm_init)
		ag_power_off();
	return rc;
}
