/* sandbox-agent internals shared by its modules: the event loop's handles,
 * connections, commands. One thread, one epoll set; every fd is
 * non-blocking and O_CLOEXEC. */
#ifndef AGENT_H
#define AGENT_H

#include <stdint.h>
#include <sys/types.h>

#include <cJSON.h>

#include "agent_req.h"
#include "agent_ring.h"
#include "sbx_buf.h"
#include "sbx_splice.h"

#define AG_PROTO_PORT 1024
#define AG_CHUNK 65536u              /* one read() of a pipe, one file DATA frame */
#define AG_OUT_HIGH (256u * 1024)    /* stop filling a connection's send queue here */
#define AG_OUT_CAP (2u * 1024 * 1024)
#define AG_IN_CAP (2u * (1024 * 1024 + 5))
#define AG_MAX_CONNS 1024
#define AG_MAX_FINISHED 64           /* exited commands kept for replay */
#define AG_HANDSHAKE_MS 5000
#define AG_FIRST_FRAME_MS 30000
#define AG_LINGER_MS 2000
#define AG_KILL_GRACE_MS 3000

enum ag_kind { AG_EV_LISTEN, AG_EV_SIGNAL, AG_EV_TIMER, AG_EV_CONN, AG_EV_PEER,
	       AG_EV_CMD_OUT, AG_EV_CMD_ERR, AG_EV_CMD_IN, AG_EV_POWER };

/* epoll_event.data.ptr points at one of these, embedded in its owner. */
struct ag_ev {
	enum ag_kind kind;
	void *owner;
	int fd;
	uint32_t mask;          /* events currently registered (0 = not) */
};

enum ag_state {
	AG_ST_DETECT,           /* first byte decides: 'C' handshake or a frame */
	AG_ST_HANDSHAKE,        /* reading "CONNECT <port>\n" */
	AG_ST_REQUEST,          /* waiting for the first frame */
	AG_ST_ATTACH,           /* streaming a command's output */
	AG_ST_STDIN,            /* feeding a command's stdin */
	AG_ST_WAIT,             /* waiting for a command to exit */
	AG_ST_WRITE_FILE,
	AG_ST_READ_FILE,
	AG_ST_FORWARD,          /* raw splice to 127.0.0.1:port */
	AG_ST_CLOSING           /* flushing the last frame, then linger */
};

struct ag_cmd;

struct ag_conn {
	struct ag_ev ev;
	enum ag_state state;
	struct sbx_buf in, out;
	int64_t deadline;       /* ms (monotonic) or 0 */
	int rd_closed;          /* peer half-closed or we stopped reading */
	int in_paused;          /* stop reading (backpressure) */
	int wr_shut;
	int dead;               /* closed; freed after the current loop round */
	struct ag_conn *next, *prev;

	/* attach / stdin / wait */
	struct ag_cmd *cmd;
	struct ag_conn *wnext, *wprev;  /* on cmd->watchers */
	struct ag_cursor cur;
	int ring_wait;          /* a send from the retention ring found the socket full */
	int accept_stdin;
	uint32_t stdin_done;    /* bytes of the head STDIN frame already written */
	int exit_sent;
	int quiet;              /* an idle probe: its coming and going is no activity */
	int64_t until;          /* attach without follow: stop here; -1 follows */

	/* files */
	int fd;
	char *tmp_path, *final_path;
	uint64_t size;
	int64_t mode, uid, gid;

	/* forward */
	struct ag_ev peer;
	struct sbx_buf up, down;       /* client->peer, peer->client */
	struct sbx_splice fwd;         /* A: the client (ev), B: the peer */
	int connecting, handshake_port;
};

struct ag_cmd {
	char id[72];
	pid_t pid;
	int64_t started_at, ended_at;
	int reaped, exited;
	int exit_code, term_sig;       /* exit_code -1 when killed by term_sig */
	int is_pty;
	struct ag_ev out, err, in;     /* fd -1 when closed */
	int in_fd_is_out;              /* PTY: stdin is the master too */
	int out_wr;                    /* PTY: stdin waits for the master */
	int out_throttled;             /* PTY: not read while a reader lags */
	struct ag_ring ring;
	struct ag_conn *watchers;
	struct ag_conn *stdin_conn;
	struct ag_conn *hup_conn;      /* its leaving hangs the command up */
	int64_t kill_at;               /* monotonic ms: timeout_ms reached; 0 = none */
	int timed_out;
	struct ag_cmd *next;
};

struct ag_ctx {
	int epfd;
	int listen_fd;
	int vsock;
	/* --hangup-on-eof: the transport cannot tell a peer's full close from
	 * its half-close (gVisor's host sockets report no HUP): EOF on a
	 * terminal's connection is its hang-up */
	int hangup_on_eof;
	size_t retention;
	char base_dir[4096];
	struct ag_conn *conns;
	int nconns;
	struct ag_cmd *cmds;
	int shutting_down;
	int64_t kill_at;
	int64_t last_busy;      /* ms (monotonic): a command or connection ended */
	int timer_fd;           /* the deadlines' 100 ms tick, armed only while one is set */
	int timer_armed;
};

extern struct ag_ctx ag;

/* Beside the agent's UNIX socket once SIGUSR1 closed every connection and
 * the listener (agent_main.c, for the gvisor driver's checkpoint). */
#define AG_QUIESCED_SUFFIX ".quiesced"

/* agent_cmd.c: SIGKILL the process group of every command past its
 * timeout_ms (called from the 100 ms timer) */
void ag_cmd_timeouts(int64_t now);

/* agent_main.c */
int64_t ag_now_ms(void);
/* now + ms, and the 100 ms tick that enforces deadlines runs until none
 * is left: every deadline and kill_at is set through it */
int64_t ag_deadline_in(int64_t ms);
int64_t ag_wall_ms(void);
void ag_ev_set(struct ag_ev *e, uint32_t mask);
void ag_ev_del(struct ag_ev *e);
/* Resolve a request path against the base directory into out (PATH_MAX). */
int ag_resolve(const char *path, char *out, size_t outlen);

/* agent_peer.c: read our uid and the overflow uid once; then whether the
 * peer of an accepted UNIX connection may be served (logs refusals) */
void ag_peer_init(void);
int ag_peer_allowed(int fd);

/* agent_conn.c */
void ag_conn_accept(void);
void ag_conn_event(struct ag_conn *c, uint32_t events);
void ag_conn_sweep(int64_t now);
void ag_conn_close(struct ag_conn *c);
/* End every connection but keep (may be NULL): a stream or wait on a
 * command with a `paused` error frame first, as far as its socket takes it
 * at once. The commands and their output stay. Before a pause. */
void ag_conn_pause_all(struct ag_conn *keep);
void ag_conn_free_dead(void);
int ag_conn_json(struct ag_conn *c, cJSON *o);   /* consumes o */
void ag_conn_fail(struct ag_conn *c, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void ag_conn_fail_errno(struct ag_conn *c, int e, const char *what);
void ag_conn_ok(struct ag_conn *c);
/* Stop the operation: flush what is queued, then half-close and linger. */
void ag_conn_closing(struct ag_conn *c);
void ag_conn_flush(struct ag_conn *c);
void ag_conn_update(struct ag_conn *c);
void ag_conn_process(struct ag_conn *c);
cJSON *ag_ok(void);
const char *ag_errno_code(int e);

/* agent_cmd.c */
void ag_cmd_request(struct ag_conn *c, struct ag_req *r);
void ag_cmd_event(struct ag_ev *e, uint32_t events);
void ag_cmd_reap(void);
void ag_cmd_frame(struct ag_conn *c, int type, const unsigned char *p, uint32_t n, int *consumed);
void ag_cmd_detach(struct ag_conn *c);
/* The hang-up a closed terminal gives its program, when c holds one
 * (hangup_on_detach) that still runs; c stays attached. */
void ag_cmd_hangup(struct ag_conn *c);
/* Send or queue what c's command has for it (from ag_conn_flush): 0, or
 * -1 when its socket failed (close c). */
int ag_cmd_pump(struct ag_conn *c);
void ag_cmd_stdin_writable(struct ag_cmd *cmd);
void ag_cmd_kill_all(int sig);
int ag_cmd_running(void);
/* Drop the oldest finished commands past AG_MAX_FINISHED; called between
 * loop rounds so no queued event can point at a freed command. */
void ag_cmd_evict(void);

/* agent_fs.c */
void ag_fs_request(struct ag_conn *c, struct ag_req *r);
void ag_fs_frame(struct ag_conn *c, int type, const unsigned char *p, uint32_t n);
void ag_fs_pump(struct ag_conn *c);
void ag_fs_abort(struct ag_conn *c);

/* agent_power.c: the guest's ACPI power button (an input device with
 * KEY_POWER; -1 when there is none); whether a read of it saw a press;
 * and the guest's power-off (sync first), for PID 1 of a VM */
int ag_power_button_open(void);
int ag_power_button_pressed(int fd);
void ag_power_off(void);

/* agent_fwd.c */
void ag_fwd_start(struct ag_conn *c, int port, int handshake);
void ag_fwd_event(struct ag_conn *c, int from_peer, uint32_t events);
void ag_fwd_close(struct ag_conn *c);

#endif
