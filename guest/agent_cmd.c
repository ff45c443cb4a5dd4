/* Commands: exec, output retention and fan-out to attached connections,
 * stdin, signals, status/wait, PTY resize, reaping. Output is read whenever
 * a pipe is readable, independent of readers: each read() is one chunk,
 * pushed into the command's ring and offered to every attached connection;
 * a connection takes from the ring only while its send queue is below
 * AG_OUT_HIGH, so a slow reader lags alone and costs no memory. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "agent.h"
#include "agent_spawn.h"
#include "sbx_frame.h"
#include "sbx_id.h"
#include "sbx_log.h"

static struct ag_cmd *cmd_find(const char *id)
{
	struct ag_cmd *c;

	for (c = ag.cmds; c; c = c->next)
		if (!strcmp(c->id, id))
			return c;
	return NULL;
}

static int stdin_fd(const struct ag_cmd *cmd)
{
	return cmd->in_fd_is_out ? cmd->out.fd : cmd->in.fd;
}

static cJSON *cmd_json(const struct ag_cmd *cmd)
{
	cJSON *o = cJSON_CreateObject();
	const char *sn;

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "id", cmd->id);
	cJSON_AddNumberToObject(o, "pid", cmd->pid);
	cJSON_AddStringToObject(o, "status", cmd->exited ? "exited" : "running");
	if (cmd->exited && cmd->exit_code >= 0)
		cJSON_AddNumberToObject(o, "exit_code", cmd->exit_code);
	else
		cJSON_AddNullToObject(o, "exit_code");
	if (cmd->exited && cmd->term_sig > 0) {
		sn = ag_signal_name(cmd->term_sig);
		if (sn)
			cJSON_AddStringToObject(o, "signal", sn);
		else
			cJSON_AddNumberToObject(o, "signal", cmd->term_sig);
	} else {
		cJSON_AddNullToObject(o, "signal");
	}
	if (cmd->timed_out)
		cJSON_AddTrueToObject(o, "timed_out");
	cJSON_AddNumberToObject(o, "started_at", (double)cmd->started_at);
	if (cmd->exited)
		cJSON_AddNumberToObject(o, "ended_at", (double)cmd->ended_at);
	else
		cJSON_AddNullToObject(o, "ended_at");
	cJSON_AddNumberToObject(o, "output_bytes", (double)cmd->ring.total);
	cJSON_AddBoolToObject(o, "pty", cmd->is_pty);
	return o;
}

static void reply_status(struct ag_conn *c, const struct ag_cmd *cmd)
{
	cJSON *o = ag_ok();

	cJSON_AddItemToObject(o, "command", cmd_json(cmd));
	ag_conn_json(c, o);
	ag_conn_closing(c);
	ag_conn_flush(c);
}

static void watch(struct ag_cmd *cmd, struct ag_conn *c)
{
	c->cmd = cmd;
	c->wprev = NULL;
	c->wnext = cmd->watchers;
	if (cmd->watchers)
		cmd->watchers->wprev = c;
	cmd->watchers = c;
}

/* What the PTY master (or stdout pipe) is polled for: output unless a
 * PTY is throttled, and writability while stdin waits on a PTY master. */
static void out_events(struct ag_cmd *cmd)
{
	ag_ev_set(&cmd->out, (cmd->out_throttled ? 0u : (uint32_t)EPOLLIN) |
			     (cmd->out_wr ? (uint32_t)EPOLLOUT : 0u));
}

/* A terminal is paced by its slowest attached reader: while one lags more
 * than AG_PTY_LAG behind, the master is not read, so `yes` blocks in the
 * kernel instead of overwriting what the reader has yet to see, and ^C
 * reaches a program that is not buried under megabytes of output. Pipes are
 * never paced (readers of a detached command must not slow it down). */
#define AG_PTY_LAG (256u * 1024)
static void pty_pace(struct ag_cmd *cmd)
{
	struct ag_conn *w;
	uint64_t lag = 0;
	int throttle;

	if (!cmd->is_pty || cmd->out.fd < 0)
		return;
	for (w = cmd->watchers; w; w = w->wnext)
		if (w->state == AG_ST_ATTACH && cmd->ring.total - w->cur.off > lag)
			lag = cmd->ring.total - w->cur.off;
	throttle = cmd->out_throttled ? lag > AG_PTY_LAG / 2 : lag > AG_PTY_LAG;
	if (throttle != cmd->out_throttled) {
		cmd->out_throttled = throttle;
		out_events(cmd);
	}
}

/* The terminal's user went away (c, the connection that asked for
 * hangup_on_detach): what closing a terminal does, once. */
static void hang_up(struct ag_cmd *cmd, struct ag_conn *c)
{
	if (cmd->hup_conn != c)
		return;
	cmd->hup_conn = NULL;
	if (!cmd->reaped) {
		/* a command that has not called setsid() yet (the connection
		 * closed right after the exec reply) has no group of its own:
		 * signal the process itself */
		if (kill(-cmd->pid, SIGHUP) < 0)
			kill(cmd->pid, SIGHUP);
		if (kill(-cmd->pid, SIGCONT) < 0)
			kill(cmd->pid, SIGCONT);
	}
}

void ag_cmd_detach(struct ag_conn *c)
{
	struct ag_cmd *cmd = c->cmd;

	if (!cmd)
		return;
	if (c->wprev)
		c->wprev->wnext = c->wnext;
	else if (cmd->watchers == c)
		cmd->watchers = c->wnext;
	if (c->wnext)
		c->wnext->wprev = c->wprev;
	c->wnext = c->wprev = NULL;
	if (cmd->stdin_conn == c) {
		cmd->stdin_conn = NULL;
		if (cmd->in_fd_is_out && cmd->out.fd >= 0) {
			cmd->out_wr = 0;
			out_events(cmd);
		} else {
			ag_ev_set(&cmd->in, 0);
		}
	}
	c->cmd = NULL;
	hang_up(cmd, c);
	pty_pace(cmd);   /* a lagging reader left */
}

void ag_cmd_hangup(struct ag_conn *c)
{
	if (c->cmd)
		hang_up(c->cmd, c);
}

static void close_ev(struct ag_ev *e)
{
	if (e->fd < 0)
		return;
	ag_ev_del(e);
	close(e->fd);
	e->fd = -1;
}

static void close_stdin(struct ag_cmd *cmd)
{
	if (cmd->in_fd_is_out) {
		/* PTY: end of input is the terminal's EOF character */
		if (cmd->out.fd >= 0 && write(cmd->out.fd, "\x04", 1) < 0)
			sbx_debug("%s: pty eof: %s", cmd->id, strerror(errno));
		cmd->in_fd_is_out = 0;
		return;
	}
	close_ev(&cmd->in);
}

/* Offer new output (or the exit) to every attached connection. */
static void fan_out(struct ag_cmd *cmd)
{
	struct ag_conn *w, *next;

	for (w = cmd->watchers; w; w = next) {
		next = w->wnext;
		/* a full queue or socket waits for EPOLLOUT; no point trying now */
		if (w->state == AG_ST_ATTACH && w->out.len < AG_OUT_HIGH && !w->ring_wait)
			ag_conn_flush(w);     /* may close w, never next */
	}
}

/* Whole records go to c's socket from where they lie in the ring (each is
 * the frame of its chunk), with nothing queued before them: no copy. The
 * rest of a record the socket took only part of is queued in c->out.
 * 1 sent some, 0 nothing to send, -1 the socket is full (c->ring_wait:
 * EPOLLOUT brings c back), -2 it failed. */
static int send_from_ring(struct ag_conn *c, struct ag_cmd *cmd)
{
	struct iovec iov[2];
	struct msghdr m = { .msg_iov = iov };
	int niov;
	size_t n = ag_ring_span(&cmd->ring, &c->cur, AG_OUT_HIGH, iov, &niov);
	unsigned char *rest;
	ssize_t k;

	if (!n)
		return 0;
	m.msg_iovlen = (size_t)niov;
	k = sendmsg(c->ev.fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (k <= 0) {
		if (k < 0 && errno != EAGAIN && errno != EINTR)
			return -2;
		c->ring_wait = 1;
		return -1;
	}
	if ((size_t)k == n) {
		ag_ring_sent(&cmd->ring, &c->cur, n, NULL);
		return 1;
	}
	/* c->out is empty: a record's worth fits under its cap */
	rest = sbx_buf_reserve(&c->out, SBX_FRAME_HDR + AG_CHUNK);
	if (!rest)
		return -2;
	sbx_buf_commit(&c->out, ag_ring_sent(&cmd->ring, &c->cur, (size_t)k, rest));
	return -1;
}

int ag_cmd_pump(struct ag_conn *c)
{
	struct ag_cmd *cmd = c->cmd;
	int rounds;

	if (!cmd)
		return 0;
	c->ring_wait = 0;
	for (rounds = 0; rounds < 64 && c->out.len < AG_OUT_HIGH; rounds++) {
		uint64_t lost = ag_ring_catch(&cmd->ring, &c->cur);
		unsigned char *dst;
		unsigned tag;
		size_t n;
		int rc;

		if (lost) {
			cJSON *o = cJSON_CreateObject();

			cJSON_AddStringToObject(o, "type", "truncated");
			cJSON_AddNumberToObject(o, "bytes", (double)lost);
			ag_conn_json(c, o);
			continue;
		}
		if (!c->cur.skip) {
			/* what is queued goes first, then records from the ring */
			if (c->out.len)
				break;
			rc = send_from_ring(c, cmd);
			if (rc == -2)
				return -1;
			if (rc < 0)
				break;
			if (rc)
				continue;
		}
		/* an attach inside a record: its rest is copied, once */
		dst = sbx_buf_reserve(&c->out, SBX_FRAME_HDR + AG_CHUNK);
		if (!dst)
			break;
		n = ag_ring_read(&cmd->ring, &c->cur, &tag, dst + SBX_FRAME_HDR, AG_CHUNK, &lost);
		if (!n)
			break;
		sbx_frame_header(dst, (enum sbx_frame_type)tag, (uint32_t)n);
		sbx_buf_commit(&c->out, SBX_FRAME_HDR + n);
	}
	if (cmd->out_throttled)
		pty_pace(cmd);   /* this reader caught up */
	if (!cmd->exited && c->until >= 0 && !c->exit_sent &&
	    c->cur.off >= (uint64_t)c->until && c->out.len < AG_OUT_HIGH) {
		/* attach without follow: what existed at attach time, then end */
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "type", "end");
		cJSON_AddNumberToObject(o, "offset", (double)c->cur.off);
		ag_conn_json(c, o);
		c->exit_sent = 1;
		ag_conn_closing(c);
		return 0;
	}
	if (cmd->exited && !c->exit_sent && c->cur.off == cmd->ring.total &&
	    c->out.len < AG_OUT_HIGH) {
		cJSON *o = cJSON_CreateObject();
		const char *sn = cmd->term_sig > 0 ? ag_signal_name(cmd->term_sig) : NULL;

		cJSON_AddStringToObject(o, "type", "exit");
		if (cmd->exit_code >= 0)
			cJSON_AddNumberToObject(o, "exit_code", cmd->exit_code);
		else
			cJSON_AddNullToObject(o, "exit_code");
		if (sn)
			cJSON_AddStringToObject(o, "signal", sn);
		else if (cmd->term_sig > 0)
			cJSON_AddNumberToObject(o, "signal", cmd->term_sig);
		else
			cJSON_AddNullToObject(o, "signal");
		if (cmd->timed_out)
			cJSON_AddTrueToObject(o, "timed_out");
		ag_conn_json(c, o);
		c->exit_sent = 1;
		ag_conn_closing(c);
	}
	return 0;
}

/* One read of a command's output into its ring. What the pipe (or PTY)
 * holds is read straight into the ring (FIONREAD says how much, so the
 * oldest records make room for exactly that); with nothing there, a read
 * of its own tells the end or EAGAIN. */
static ssize_t read_chunk(struct ag_cmd *cmd, int fd, unsigned tag)
{
	static unsigned char buf[AG_CHUNK];
	struct iovec iov[2];
	int avail = 0, niov;
	ssize_t n;

	if (ioctl(fd, FIONREAD, &avail) == 0 && avail > 0) {
		size_t want = (size_t)avail < AG_CHUNK ? (size_t)avail : AG_CHUNK;

		if ((niov = ag_ring_reserve(&cmd->ring, want, iov)) > 0) {
			n = readv(fd, iov, niov);
			if (n > 0)
				ag_ring_commit(&cmd->ring, tag, (size_t)n);
			return n;
		}
	}
	n = read(fd, buf, sizeof(buf));
	if (n > 0 && ag_ring_push(&cmd->ring, tag, buf, (size_t)n) < 0)
		sbx_err_log("%s: retention push failed", cmd->id);
	return n;
}

/* Read up to max chunks from one stream. Returns 1 if the stream ended.
 * With drain, reads on until the pipe is empty or ends (the command has
 * exited); without, a short read ends the turn: epoll is level-triggered,
 * so what comes after wakes the loop again, and the read that would only
 * have found the pipe empty (two syscalls, each a trap into the sentry
 * under gVisor) is not made. */
static int read_stream(struct ag_cmd *cmd, struct ag_ev *e, unsigned tag, int max, int drain)
{
	int i, got = 0;

	for (i = 0; i < max && e->fd >= 0; i++) {
		ssize_t n = read_chunk(cmd, e->fd, tag);

		if (n > 0) {
			got = 1;
			/* A short read means the pipe is drained: deliver now.
			 * Full reads are batched (each still its own chunk and
			 * frame) so a flood costs fewer sends. */
			if ((size_t)n < AG_CHUNK || i % 4 == 3) {
				fan_out(cmd);
				got = 0;
			}
			if ((size_t)n < AG_CHUNK && !drain)
				break;
			continue;
		}
		if (got) {
			fan_out(cmd);
			got = 0;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		/* EOF, or EIO on a PTY master once the slave side is gone */
		if (cmd->in_fd_is_out) {
			cmd->in_fd_is_out = 0;
			if (cmd->stdin_conn)
				cmd->stdin_conn->accept_stdin = 0;
		}
		close_ev(e);
		return 1;
	}
	if (got)
		fan_out(cmd);
	pty_pace(cmd);
	return 0;
}

/* Finished commands are kept for replay, at most AG_MAX_FINISHED of them
 * and at most a budget of retained bytes (4 x --retention, at least
 * 64 MiB) in total; the oldest go first, except those with readers. */
void ag_cmd_evict(void)
{
	for (;;) {
		struct ag_cmd *c, **pp, **victim = NULL;
		size_t bytes = 0, budget = 4 * ag.retention;
		int n = 0;

		if (budget < (64u << 20))
			budget = 64u << 20;
		for (pp = &ag.cmds; *pp; pp = &(*pp)->next)
			if ((*pp)->exited) {
				n++;
				bytes += (*pp)->ring.cap;
				if (!(*pp)->watchers)
					victim = pp;   /* last = oldest */
			}
		if ((n <= AG_MAX_FINISHED && bytes <= budget) || !victim)
			return;
		c = *victim;
		*victim = c->next;
		sbx_debug("%s: dropped from the finished list", c->id);
		ag_ring_free(&c->ring);
		free(c);
	}
}

static void finish(struct ag_cmd *cmd)
{
	struct ag_conn *w, *next;

	/* Whatever the command wrote before it exited is in the pipes now:
	 * take it (bounded, in case a background child keeps writing), then
	 * close. Output of such children after this point is not kept. */
	read_stream(cmd, &cmd->out, SBX_FRAME_STDOUT, 64, 1);
	read_stream(cmd, &cmd->err, SBX_FRAME_STDERR, 64, 1);
	if (cmd->stdin_conn && cmd->stdin_conn->state == AG_ST_STDIN) {
		struct ag_conn *s = cmd->stdin_conn;

		ag_cmd_detach(s);
		ag_conn_fail(s, "conflict", "command %s exited", cmd->id);
	}
	close_ev(&cmd->in);
	cmd->in_fd_is_out = 0;
	close_ev(&cmd->out);
	close_ev(&cmd->err);
	cmd->exited = 1;
	cmd->ended_at = ag_wall_ms();
	ag.last_busy = ag_now_ms();
	/* no more output: keep only what is retained (small for most) */
	if (ag_ring_shrink(&cmd->ring) < 0)
		sbx_warn("%s: cannot shrink retention", cmd->id);
	sbx_info("%s: exited (code %d, signal %d, %llu output bytes)", cmd->id,
		 cmd->exit_code, cmd->term_sig, (unsigned long long)cmd->ring.total);
	for (w = cmd->watchers; w; w = next) {
		next = w->wnext;
		if (w->state == AG_ST_WAIT) {
			ag_cmd_detach(w);
			reply_status(w, cmd);
		} else if (w->state == AG_ST_ATTACH) {
			ag_conn_flush(w);
		}
	}
}

void ag_cmd_reap(void)
{
	int i, st;

	for (i = 0; i < 4096; i++) {
		pid_t pid = waitpid(-1, &st, WNOHANG);
		struct ag_cmd *cmd;

		if (pid <= 0)
			return;
		for (cmd = ag.cmds; cmd; cmd = cmd->next)
			if (cmd->pid == pid && !cmd->reaped)
				break;
		if (!cmd) {
			sbx_debug("reaped orphan %d", (int)pid);
			continue;
		}
		cmd->reaped = 1;
		if (WIFEXITED(st)) {
			cmd->exit_code = WEXITSTATUS(st);
			cmd->term_sig = 0;
		} else {
			cmd->exit_code = -1;
			cmd->term_sig = WTERMSIG(st);
		}
		finish(cmd);
	}
}

int ag_cmd_running(void)
{
	struct ag_cmd *c;
	int n = 0;

	for (c = ag.cmds; c; c = c->next)
		n += !c->reaped;
	return n;
}

/* A command past its timeout_ms: SIGKILL to its process group (the command
 * is a session and group leader, so that is everything it started that did
 * not make a session of its own) and to the command itself, again every
 * second until it is reaped. SIGKILL because a command may ignore SIGTERM,
 * and the timeout is the caller's hard bound. A child that called setsid()
 * left the group; only the sandbox's lifetime (the runner kills the whole
 * cgroup) bounds it (docs/security.md, probe 46). */
void ag_cmd_timeouts(int64_t now)
{
	struct ag_cmd *c;

	for (c = ag.cmds; c; c = c->next) {
		if (c->reaped || !c->kill_at || now < c->kill_at)
			continue;
		if (!c->timed_out)
			sbx_info("%s: timeout_ms reached, killing its process group", c->id);
		c->timed_out = 1;
		kill(-c->pid, SIGKILL);
		kill(c->pid, SIGKILL);
		c->kill_at = now + 1000;
	}
}

void ag_cmd_kill_all(int sig)
{
	struct ag_cmd *c;

	for (c = ag.cmds; c; c = c->next)
		if (!c->reaped && kill(-c->pid, sig) < 0)
			kill(c->pid, sig);
}

/* Write the head STDIN frame (from stdin_done on). Returns 1 when the whole
 * frame is written, 0 when the pipe is full (wait for EPOLLOUT), -1 when
 * stdin is gone. */
static int write_stdin(struct ag_conn *c, struct ag_cmd *cmd, const unsigned char *p, uint32_t n)
{
	int fd = stdin_fd(cmd);

	if (fd < 0)
		return -1;
	while (c->stdin_done < n) {
		ssize_t w = write(fd, p + c->stdin_done, n - c->stdin_done);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			return -1;
		}
		c->stdin_done += (uint32_t)w;
	}
	c->stdin_done = 0;
	return 1;
}

void ag_cmd_frame(struct ag_conn *c, int type, const unsigned char *p, uint32_t n, int *consumed)
{
	struct ag_cmd *cmd = c->cmd;
	int rc;

	*consumed = 1;
	if (!c->accept_stdin || !cmd || (type != SBX_FRAME_STDIN && type != SBX_FRAME_EOF)) {
		*consumed = -1;
		ag_conn_fail(c, "bad_request", "unexpected frame type %d here", type);
		return;
	}
	if (type == SBX_FRAME_EOF) {
		close_stdin(cmd);
		c->accept_stdin = 0;
		if (c->state == AG_ST_STDIN) {
			*consumed = -1;
			ag_cmd_detach(c);
			ag_conn_ok(c);
		} else {
			cmd->stdin_conn = NULL;
		}
		return;
	}
	rc = write_stdin(c, cmd, p, n);
	if (rc == 1)
		return;
	if (rc == 0) {
		*consumed = 0;
		c->in_paused = 1;
		ag_conn_update(c);
		if (cmd->in_fd_is_out) {
			cmd->out_wr = 1;
			out_events(cmd);
		} else {
			ag_ev_set(&cmd->in, EPOLLOUT);
		}
		return;
	}
	c->stdin_done = 0;
	if (c->state == AG_ST_STDIN) {
		*consumed = -1;
		ag_conn_fail(c, "conflict", "stdin of %s is closed", cmd->id);
	}
	/* attached: input after the command closed its stdin is dropped */
}

void ag_cmd_stdin_writable(struct ag_cmd *cmd)
{
	struct ag_conn *c = cmd->stdin_conn;

	if (cmd->in_fd_is_out) {
		cmd->out_wr = 0;
		out_events(cmd);
	} else {
		ag_ev_set(&cmd->in, 0);
	}
	if (!c)
		return;
	c->in_paused = 0;
	ag_conn_update(c);
	ag_conn_process(c);
}

void ag_cmd_event(struct ag_ev *e, uint32_t events)
{
	struct ag_cmd *cmd = e->owner;

	if (e->kind == AG_EV_CMD_IN) {
		ag_cmd_stdin_writable(cmd);
		return;
	}
	if ((events & EPOLLOUT) && e->kind == AG_EV_CMD_OUT) {
		ag_cmd_stdin_writable(cmd);
		if (e->fd < 0)
			return;
	}
	if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
		read_stream(cmd, e, e->kind == AG_EV_CMD_OUT ? SBX_FRAME_STDOUT : SBX_FRAME_STDERR, 16,
			    0);
}

static void start_attach(struct ag_conn *c, struct ag_cmd *cmd, int64_t offset,
			 int want_stdin, int follow, cJSON *reply)
{
	uint64_t lost;

	c->until = follow ? -1 : (int64_t)cmd->ring.total;

	if (want_stdin) {
		if (cmd->exited || stdin_fd(cmd) < 0) {
			cJSON_Delete(reply);
			ag_conn_fail(c, "conflict", "stdin of %s is closed", cmd->id);
			return;
		}
		if (cmd->stdin_conn) {
			cJSON_Delete(reply);
			ag_conn_fail(c, "conflict", "stdin of %s is in use by another connection", cmd->id);
			return;
		}
		cmd->stdin_conn = c;
		c->accept_stdin = 1;
	}
	lost = ag_ring_seek(&cmd->ring, (uint64_t)offset, &c->cur);
	cJSON_AddNumberToObject(reply, "offset", (double)c->cur.off);
	ag_conn_json(c, reply);
	if (lost) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "type", "truncated");
		cJSON_AddNumberToObject(o, "bytes", (double)lost);
		ag_conn_json(c, o);
	}
	c->state = AG_ST_ATTACH;
	watch(cmd, c);
	ag_conn_flush(c);
	ag_conn_process(c);   /* STDIN frames sent along with the request */
}

static void do_exec(struct ag_conn *c, struct ag_req *r)
{
	char cwd[PATH_MAX];
	struct ag_spawn s = {
		.argv = r->argv, .env = r->env, .uid = r->uid, .gid = r->gid,
		.want_stdin = r->want_stdin, .pty = r->pty, .cols = r->cols, .rows = r->rows,
	};
	struct ag_spawned sp;
	struct ag_cmd *cmd;
	cJSON *o;

	if (ag.shutting_down) {
		ag_conn_fail(c, "conflict", "the agent is shutting down");
		return;
	}
	if (r->id && cmd_find(r->id)) {
		ag_conn_fail(c, "conflict", "command %s already exists", r->id);
		return;
	}
	if (ag_resolve(r->cwd ? r->cwd : ag.base_dir, cwd, sizeof(cwd)) < 0) {
		ag_conn_fail(c, "bad_request", "cwd too long");
		return;
	}
	if (s.uid >= 0 && s.gid < 0)
		s.gid = s.uid;
	s.cwd = cwd;
	cmd = calloc(1, sizeof(*cmd));
	if (!cmd || ag_ring_init(&cmd->ring, ag.retention) < 0) {
		free(cmd);
		ag_conn_fail(c, "internal", "out of memory");
		return;
	}
	if (r->id)
		snprintf(cmd->id, sizeof(cmd->id), "%s", r->id);
	else if (sbx_id_new("cmd_", cmd->id, sizeof(cmd->id)) < 0)
		goto fail_internal;
	if (ag_spawn(&s, &sp) < 0) {
		int e = errno;

		ag_ring_free(&cmd->ring);
		free(cmd);
		ag_conn_fail(c, "io", "cannot start: %s", strerror(e));
		return;
	}
	cmd->pid = sp.pid;
	cmd->is_pty = r->pty;
	cmd->started_at = ag_wall_ms();
	cmd->exit_code = -1;
	cmd->out = (struct ag_ev){ .kind = AG_EV_CMD_OUT, .owner = cmd, .fd = sp.out };
	cmd->err = (struct ag_ev){ .kind = AG_EV_CMD_ERR, .owner = cmd, .fd = sp.err };
	cmd->in = (struct ag_ev){ .kind = AG_EV_CMD_IN, .owner = cmd, .fd = sp.in };
	cmd->in_fd_is_out = r->pty;
	if (r->timeout_ms > 0)
		cmd->kill_at = ag_deadline_in(r->timeout_ms);
	out_events(cmd);
	ag_ev_set(&cmd->err, EPOLLIN);
	cmd->next = ag.cmds;
	ag.cmds = cmd;
	sbx_info("%s: started pid %d: %s", cmd->id, (int)cmd->pid, r->cmd);

	o = ag_ok();
	cJSON_AddStringToObject(o, "id", cmd->id);
	cJSON_AddNumberToObject(o, "pid", cmd->pid);
	cJSON_AddNumberToObject(o, "started_at", (double)cmd->started_at);
	if (r->attach) {
		start_attach(c, cmd, 0, r->want_stdin || r->pty, 1, o);
		if (r->hangup && c->cmd == cmd && !c->dead)
			cmd->hup_conn = c;
		return;
	}
	ag_conn_json(c, o);
	ag_conn_closing(c);
	ag_conn_flush(c);
	return;
fail_internal:
	ag_ring_free(&cmd->ring);
	free(cmd);
	ag_conn_fail(c, "internal", "cannot make an id");
}

void ag_cmd_request(struct ag_conn *c, struct ag_req *r)
{
	struct ag_cmd *cmd = NULL;
	cJSON *o, *arr;

	if (r->op == AG_OP_EXEC) {
		do_exec(c, r);
		return;
	}
	if (r->op == AG_OP_COMMANDS) {
		o = ag_ok();
		arr = cJSON_AddArrayToObject(o, "commands");
		for (cmd = ag.cmds; cmd; cmd = cmd->next)
			cJSON_AddItemToArray(arr, cmd_json(cmd));
		ag_conn_json(c, o);
		ag_conn_closing(c);
		ag_conn_flush(c);
		return;
	}
	cmd = cmd_find(r->id);
	if (!cmd) {
		ag_conn_fail(c, "not_found", "no command %s", r->id);
		return;
	}
	switch (r->op) {
	case AG_OP_ATTACH:
		start_attach(c, cmd, r->offset, r->want_stdin, r->follow, ag_ok());
		return;
	case AG_OP_STDIN:
		if (cmd->exited || stdin_fd(cmd) < 0) {
			ag_conn_fail(c, "conflict", "stdin of %s is closed", cmd->id);
			return;
		}
		if (cmd->stdin_conn) {
			ag_conn_fail(c, "conflict", "stdin of %s is in use by another connection", cmd->id);
			return;
		}
		cmd->stdin_conn = c;
		c->accept_stdin = 1;
		c->state = AG_ST_STDIN;
		watch(cmd, c);
		ag_conn_process(c);
		return;
	case AG_OP_STDIN_EOF:
		if (!cmd->exited)
			close_stdin(cmd);
		ag_conn_ok(c);
		return;
	case AG_OP_SIGNAL:
		if (cmd->reaped) {
			ag_conn_fail(c, "conflict", "command %s has exited", cmd->id);
			return;
		}
		if (kill(-cmd->pid, r->sig) < 0 && kill(cmd->pid, r->sig) < 0) {
			ag_conn_fail_errno(c, errno, "kill");
			return;
		}
		ag_conn_ok(c);
		return;
	case AG_OP_STATUS:
		reply_status(c, cmd);
		return;
	case AG_OP_WAIT:
		if (cmd->exited) {
			reply_status(c, cmd);
			return;
		}
		c->state = AG_ST_WAIT;
		watch(cmd, c);
		ag_conn_update(c);
		return;
	case AG_OP_RESIZE: {
		struct winsize ws = { .ws_col = (unsigned short)r->cols, .ws_row = (unsigned short)r->rows };

		if (!cmd->is_pty || cmd->out.fd < 0) {
			ag_conn_fail(c, "invalid", "command %s has no open terminal", cmd->id);
			return;
		}
		if (ioctl(cmd->out.fd, TIOCSWINSZ, &ws) < 0) {
			ag_conn_fail_errno(c, errno, "resize");
			return;
		}
		ag_conn_ok(c);
		return;
	}
	default:
		ag_conn_fail(c, "internal", "unhandled op");
		return;
	}
}
