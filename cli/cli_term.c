/* sbx sh: an interactive terminal over the gateway's /pty WebSocket. The
 * local terminal goes raw for the session and is put back on every way
 * out: the shell's exit, a dropped connection, a signal, an error. */
#include "cli_ws.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

static struct termios saved_tio;
static int tio_saved, fl0 = -1, fl1 = -1;

/* Idempotent; also run at exit, so no return path can skip it. */
static void restore_terminal(void)
{
	if (tio_saved) {
		tcsetattr(0, TCSAFLUSH, &saved_tio);
		tio_saved = 0;
	}
	/* lws made the shared file description non-blocking */
	if (fl0 >= 0)
		fcntl(0, F_SETFL, fl0);
	if (fl1 >= 0)
		fcntl(1, F_SETFL, fl1);
}

static void window_size(int *cols, int *rows)
{
	struct winsize ws;

	*cols = 80;
	*rows = 24;
	if (!ioctl(0, TIOCGWINSZ, &ws) && ws.ws_col && ws.ws_row) {
		*cols = ws.ws_col > 1000 ? 1000 : ws.ws_col;
		*rows = ws.ws_row > 1000 ? 1000 : ws.ws_row;
	}
}

static const int handled[] = { SIGWINCH, SIGTERM, SIGHUP, SIGINT, SIGQUIT, 0 };

static void term_signal(struct cli_ws *s, int sig)
{
	int cols, rows;

	if (sig == SIGWINCH) {
		window_size(&cols, &rows);
		cli_ws_resize(s, cols, rows);
		return;
	}
	cli_ws_close(s); /* the remote shell gets SIGHUP, as a closed window gives */
}

int cli_cmd_sh(const struct cli_cfg *c, int argc, char **argv)
{
	char path[512];
	struct cli_ws s;
	int cols, rows, rc;

	if (argc != 2 || argv[1][0] == '-') {
		cli_errf("usage: sbx sh ID");
		return CLI_EXIT_USAGE;
	}
	if (strlen(argv[1]) > 100 || strpbrk(argv[1], "/?#%&")) {
		cli_errf("'%s' is not a sandbox id", argv[1]);
		return CLI_EXIT_USAGE;
	}
	/* a clear error for an unknown or stopped sandbox, before the upgrade */
	snprintf(path, sizeof(path), "/v1/sandboxes/%s", argv[1]);
	rc = cli_api_json(c, "GET", path, NULL, NULL);
	if (rc)
		return rc;
	window_size(&cols, &rows);
	snprintf(path, sizeof(path), "/v1/sandboxes/%s/pty?cols=%d&rows=%d", argv[1], cols, rows);
	fl0 = fcntl(0, F_GETFL);
	fl1 = fcntl(1, F_GETFL);
	atexit(restore_terminal);
	if (isatty(0)) {
		struct termios raw;

		if (tcgetattr(0, &saved_tio)) {
			cli_errf("cannot read the terminal's settings");
			return CLI_EXIT_LOCAL;
		}
		tio_saved = 1;
		raw = saved_tio;
		cfmakeraw(&raw);
		if (tcsetattr(0, TCSADRAIN, &raw)) { /* typed-ahead input is kept */
			restore_terminal();
			cli_errf("cannot put the terminal in raw mode");
			return CLI_EXIT_LOCAL;
		}
	}
	memset(&s, 0, sizeof(s));
	s.mode = CLI_WS_PTY;
	s.cfg = c;
	s.path = path;
	s.forward_stdin = 1;
	s.signals = handled;
	s.on_signal = term_signal;
	rc = cli_ws_run(&s);
	restore_terminal();
	if (rc) {
		cli_errf("%s", s.error);
		return CLI_EXIT_CONN;
	}
	if (!s.got_exit) {
		cli_errf("connection to the sandbox lost%s%s", s.error[0] ? ": " : "", s.error);
		return CLI_EXIT_CONN;
	}
	return s.exit_status;
}
