/* The runner's single epoll loop. Each watched fd has an rn_ev whose
 * callback receives the epoll events; no threads anywhere. */
#ifndef RN_LOOP_H
#define RN_LOOP_H

#include <stdint.h>

struct rn_ev;
typedef void (*rn_ev_cb)(struct rn_ev *ev, uint32_t events);

struct rn_ev {
	int fd;
	uint32_t want;          /* events currently registered */
	rn_ev_cb cb;
	void *owner;
};

/* Return 0 or -1 (errno set). */
int rn_loop_init(void);
int rn_loop_add(struct rn_ev *ev, uint32_t events);
int rn_loop_mod(struct rn_ev *ev, uint32_t events);
void rn_loop_del(struct rn_ev *ev);
/* Wait up to timeout_ms (-1 = forever) and dispatch. Returns -1 on a hard
 * epoll failure. */
int rn_loop_run_once(int timeout_ms);

/* Milliseconds since an arbitrary point (CLOCK_MONOTONIC), and wall clock. */
int64_t rn_now_mono(void);
int64_t rn_now_wall(void);

#endif
