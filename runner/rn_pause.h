/* Pause and resume of a sandbox (rn_pause.c): its processes stop where
 * they stand, memory kept, and run on after resume. While paused the
 * timeout clock stops, the idle probe does not run, and `connect` answers
 * `paused`: the agent's socket is renamed aside, so a gateway that dials
 * it directly falls back to the runner and gets that answer too. */
#ifndef RN_PAUSE_H
#define RN_PAUSE_H

#include "runner.h"

/* The agent's socket while paused: <agent_socket> RN_PAUSED_SUFFIX. */
#define RN_PAUSED_SUFFIX ".paused"

/* 0, or -1 with err: EBUSY (not running / not paused), ENOTSUP (the
 * driver cannot), other (the driver's failure; the sandbox is as before). */
int rn_sandbox_pause(struct runner *r, struct rn_sandbox *sb, struct sbx_err *err);
int rn_sandbox_resume(struct runner *r, struct rn_sandbox *sb, struct sbx_err *err);

#endif
