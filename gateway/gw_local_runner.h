/* The embedded runner, started when no runner is configured
 * (gw_local_runner.c; the composition root's). */
#ifndef GW_LOCAL_RUNNER_H
#define GW_LOCAL_RUNNER_H
#include <signal.h>
#include "sbx_err.h"

/* drivers, default_isolation: the runner's --drivers and
 * --default-isolation (NULL: the runner's defaults). stop: a signal's
 * flag; set while the runner starts, the start gives up (the runner is
 * stopped by gw_local_runner_stop). */
int gw_local_runner_start(const char *state_dir, const char *image_dir,
			  const char *drivers, const char *default_isolation,
			  const volatile sig_atomic_t *stop,
			  const char **socket_path, struct sbx_err *err);
void gw_local_runner_check(void);   /* no-op without an embedded runner */

void gw_local_runner_stop(void);
#endif
