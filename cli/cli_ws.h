/* One WebSocket session of sbx on libwebsockets' client: a command's stream
 * (exec) or a terminal (sh). Signals come through a signalfd adopted into
 * the lws loop; stdin (when forwarded) is read by a second thread that
 * hands each chunk to the loop (see stdin_reader). */
#ifndef CLI_WS_H
#define CLI_WS_H

#include <pthread.h>
#include <stddef.h>

#include "cli.h"

struct lws;

enum cli_ws_mode {
	CLI_WS_STREAM,   /* binary = 1-byte tag + bytes (tag 0 stdin out, 1/2 in) */
	CLI_WS_PTY,      /* binary = bare terminal bytes */
};

struct cli_ws {
	/* set by the caller */
	enum cli_ws_mode mode;
	const struct cli_cfg *cfg;
	const char *path;         /* /v1/... with query, URL-encoded */
	int forward_stdin;        /* read fd 0 and send it */
	const int *signals;       /* 0-terminated: delivered to on_signal */
	void (*on_signal)(struct cli_ws *s, int sig);
	void (*on_open)(struct cli_ws *s);

	/* the result */
	int got_exit;             /* an exit message came */
	int output_gone;          /* stdout or stderr was closed (EPIPE) */
	int exit_status;          /* its code, or 128 + signal */
	int close_code;           /* the peer's close code, 0 if none */
	char error[512];          /* an error message from the gateway or lws */

	/* internal */
	struct lws_context *ctx;
	struct lws *wsi;
	pthread_t reader;         /* reads stdin (forward_stdin) */
	pthread_mutex_t lock;     /* guards out, out_len, in_eof, stop_reader */
	pthread_cond_t cond;      /* out became free, or stop_reader */
	unsigned char *out;       /* LWS_PRE + tag + stdin bytes waiting */
	size_t out_len;
	int in_eof, stop_reader;
	int in_tag;               /* tag of the binary message being received */
	char text[65536];         /* a text message being received */
	size_t text_len;
	int eof_pending, eof_sent, close_pending, done, opened;
	char kill_pending[16];
	int resize_pending, cols, rows;
};

/* Run the session until the WebSocket closes. 0 when it opened and closed;
 * -1 when it could not open (s->error says why). */
int cli_ws_run(struct cli_ws *s);

/* From on_signal / on_open: queue a message to the gateway. */
void cli_ws_kill(struct cli_ws *s, const char *signame);
void cli_ws_resize(struct cli_ws *s, int cols, int rows);
void cli_ws_stdin_eof(struct cli_ws *s);
void cli_ws_close(struct cli_ws *s);

#endif
