#include "rn_worker.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rn_child.h"
#include "sbx_log.h"

struct worker {
	pid_t pid;
	int fd;                     /* the child's message, read once it exited */
	struct rn_sandbox *sb;      /* kept while it runs (sb->transition is set) */
	rn_worker_done_fn done;
	struct worker *next;
};

static struct worker *workers;

int rn_worker_start(struct runner *r, struct rn_sandbox *sb, rn_worker_fn fn, void *arg,
		    rn_worker_done_fn done, struct sbx_err *err)
{
	struct worker *w = calloc(1, sizeof *w);
	int fds[2];

	(void)r;
	if (!w)
		return sbx_err_set(err, ENOMEM, "out of memory");
	/* non-blocking: the message is read once the worker exited, and a
	 * process it left behind holding the pipe must not stall the loop */
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0) {
		free(w);
		return sbx_err_sys(err, "worker pipe");
	}
	w->pid = fork();
	if (w->pid == 0) {
		char msg[400] = "";
		int rc;

		/* the message pipe at 3 and nothing else of the runner's: its
		 * sockets must close when the runner closes them */
		if (dup2(fds[1], 3) < 0 || fcntl(3, F_SETFD, FD_CLOEXEC) < 0)
			_exit(126);   /* (runsc, its child, must not hold it open) */
		syscall(SYS_close_range, 4, ~0u, 0);
		rn_child_defaults();
		rc = fn(sb, arg, msg, sizeof msg);
		if (rc < 0 && write(3, msg[0] ? msg : "failed", strlen(msg[0] ? msg : "failed")) < 0)
			_exit(2);
		_exit(rc < 0 ? 1 : 0);
	}
	close(fds[1]);
	if (w->pid < 0) {
		close(fds[0]);
		free(w);
		return sbx_err_sys(err, "fork a worker");
	}
	w->fd = fds[0];
	w->sb = sb;
	w->done = done;
	w->next = workers;
	workers = w;
	return 0;
}

int rn_worker_reaped(struct runner *r, pid_t pid, int st)
{
	struct worker **pp, *w;
	char msg[400] = "";
	ssize_t k;

	for (pp = &workers; *pp && (*pp)->pid != pid; pp = &(*pp)->next)
		;
	if (!(w = *pp))
		return 0;
	*pp = w->next;
	/* far below a pipe's buffer: all there once it exited */
	k = read(w->fd, msg, sizeof msg - 1);
	msg[k > 0 ? k : 0] = 0;
	close(w->fd);
	if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0) && !msg[0])
		snprintf(msg, sizeof msg, "its worker ended with status %d",
			 WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	w->done(r, w->sb, WIFEXITED(st) && WEXITSTATUS(st) == 0 ? NULL : msg);
	free(w);
	return 1;
}
