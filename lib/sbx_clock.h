/* Wall-clock time as the API shows it, and monotonic time for bounds. */
#ifndef SBX_CLOCK_H
#define SBX_CLOCK_H

#include <stdint.h>

/* Milliseconds since the epoch (CLOCK_REALTIME). */
int64_t sbx_now_ms(void);
/* Milliseconds of CLOCK_MONOTONIC: for deadlines and durations. */
int64_t sbx_mono_ms(void);

#endif
