/* Wall-clock and monotonic time (sbx_clock.h). */
#include <time.h>
#include "sbx_clock.h"

static int64_t clock_ms(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t sbx_now_ms(void)
{
	return clock_ms(CLOCK_REALTIME);
}

int64_t sbx_mono_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}
