/* Wall-clock time (sbx_clock.h). */
#include <time.h>
#include "sbx_clock.h"

int64_t sbx_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
