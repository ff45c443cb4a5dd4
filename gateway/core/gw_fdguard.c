/* File descriptor accounting and the EMFILE log limiter (gw_fdguard.h).
 * Why count: a flood of preview connections takes descriptors two or
 * three at a time (client, runner socket, guest socket); without a
 * reserve the last ones go to whoever asks first, and the operator's
 * /healthz and API calls then fail to be accepted at all. */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include "gw_fdguard.h"
#include "sbx_log.h"

#define RECOUNT_US (1 * LWS_US_PER_SEC)

static struct {
	struct lws_context *ctx;
	lws_sorted_usec_list_t sul;
	long limit, reserve;
	long in_use;          /* descriptors open: the last recount, plus the
			       * wsis created less those destroyed since */
	unsigned long ex_count[GW_FDX_N];   /* failures not yet logged */
	unsigned long ex_total;
	int ex_errno;
	int64_t ex_last_log_us;
} g;

long gw_fd_raise_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 1024;
	rlim_t want = rl.rlim_max;
	if (want == RLIM_INFINITY || want > (rlim_t)1 << 20)
		want = (rlim_t)1 << 20;   /* the kernel's default nr_open */
	if (rl.rlim_cur < want) {
		rl.rlim_cur = want;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			sbx_warn("setrlimit NOFILE %lu: %s", (unsigned long)want, strerror(errno));
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	return (long)rl.rlim_cur;
}

/* Open descriptors, from /proc/self/fd; -1 when that cannot be read (it
 * needs a descriptor itself). */
static long count_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	long n = 0;
	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d)); )
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;   /* not the directory's own */
}

static const char *const fdx_names[GW_FDX_N] = {
	"accept", "idle connections closed for new ones", "connections refused at accept",
	"hand-over", "previews refused for the reserve",
	"preview runner sockets", "lws adoption",
};

static void flush_log(int64_t now)
{
	char by[256];
	unsigned long n = 0;
	size_t off = 0;
	by[0] = '\0';
	for (int i = 0; i < GW_FDX_N; i++) {
		if (!g.ex_count[i])
			continue;
		n += g.ex_count[i];
		int k = snprintf(by + off, sizeof by - off, "%s%s %lu", off ? ", " : "",
				 fdx_names[i], g.ex_count[i]);
		if (k > 0 && (size_t)k < sizeof by - off)
			off += (size_t)k;
		g.ex_count[i] = 0;
	}
	if (!n)
		return;
	sbx_warn("out of file descriptors (%s): %lu times in the last %ds: %s; "
		 "limit %ld, about %ld in use, %lu times since start",
		 strerror(g.ex_errno), n, GW_FD_LOG_INTERVAL_S, by, g.limit, g.in_use, g.ex_total);
	g.ex_last_log_us = now;
}

static void recount(lws_sorted_usec_list_t *sul)
{
	long n = count_open();
	if (n >= 0)
		g.in_use = n;
	int64_t now = (int64_t)lws_now_usecs();
	if (now - g.ex_last_log_us >= (int64_t)GW_FD_LOG_INTERVAL_S * LWS_US_PER_SEC)
		flush_log(now);
	lws_sul_schedule(g.ctx, 0, sul, recount, RECOUNT_US);
}

void gw_fd_init(struct lws_context *ctx, long reserve)
{
	struct rlimit rl;
	g.ctx = ctx;
	g.limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? (long)rl.rlim_cur : 1024;
	if (reserve < 0) {
		reserve = GW_FD_RESERVE_DEFAULT;
		if (reserve > g.limit / 4)
			reserve = g.limit / 4;
	}
	g.reserve = reserve;
	recount(&g.sul);
}

void gw_fd_stop(void)
{
	if (g.ctx) {
		lws_sul_cancel(&g.sul);
		flush_log((int64_t)lws_now_usecs());   /* the last second's counts too */
	}
	g.ctx = NULL;
}

void gw_fd_wsi(int delta)
{
	g.in_use += delta;
}

long gw_fd_room(void)
{
	return g.limit - g.in_use;
}

long gw_fd_reserve(void)
{
	return g.reserve;
}

long gw_fd_limit(void)
{
	return g.limit;
}

int gw_fd_preview_ok(void)
{
	/* a preview connection takes up to three more: its runner socket, the
	 * guest socket passed on it, and the dup made when it is handed over */
	return !g.ctx || gw_fd_room() - 3 > g.reserve;
}

int gw_fd_exhausted_errno(int e)
{
	return e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM;
}

void gw_fd_exhausted(enum gw_fdx where, int e)
{
	int64_t now = (int64_t)lws_now_usecs();
	g.ex_count[where]++;
	g.ex_total++;
	g.ex_errno = e;
	if (now - g.ex_last_log_us >= (int64_t)GW_FD_LOG_INTERVAL_S * LWS_US_PER_SEC)
		flush_log(now);
}
