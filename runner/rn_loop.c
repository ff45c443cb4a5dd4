#include "rn_loop.h"

#include <errno.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "sbx_clock.h"

/* The one epoll instance of the process. */
static int loop_fd = -1;

int rn_loop_init(void)
{
	loop_fd = epoll_create1(EPOLL_CLOEXEC);
	return loop_fd < 0 ? -1 : 0;
}

int rn_loop_add(struct rn_ev *ev, uint32_t events)
{
	struct epoll_event e = { .events = events, .data.ptr = ev };

	ev->want = events;
	return epoll_ctl(loop_fd, EPOLL_CTL_ADD, ev->fd, &e);
}

int rn_loop_mod(struct rn_ev *ev, uint32_t events)
{
	struct epoll_event e = { .events = events, .data.ptr = ev };

	if (ev->want == events)
		return 0;
	ev->want = events;
	return epoll_ctl(loop_fd, EPOLL_CTL_MOD, ev->fd, &e);
}

void rn_loop_del(struct rn_ev *ev)
{
	if (ev->fd >= 0)
		epoll_ctl(loop_fd, EPOLL_CTL_DEL, ev->fd, NULL);
	ev->want = 0;
}

int rn_loop_run_once(int timeout_ms)
{
	struct epoll_event evs[64];
	int n = epoll_wait(loop_fd, evs, 64, timeout_ms);

	if (n < 0)
		return errno == EINTR ? 0 : -1;
	/* A callback may free another rn_ev of this batch (a splice closing its
	 * peer); owners defer frees to rn_conn_reap, called after dispatch. */
	for (int i = 0; i < n; i++) {
		struct rn_ev *ev = evs[i].data.ptr;
		if (ev->fd >= 0 && ev->cb)
			ev->cb(ev, evs[i].events);
	}
	return 0;
}

int64_t rn_now_mono(void) { return sbx_mono_ms(); }
int64_t rn_now_wall(void) { return sbx_now_ms(); }
