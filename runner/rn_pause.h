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

/* 0, or -1 with err: EBUSY (not running / not paused, or another pause or
 * resume of it in progress), ENOTSUP (the driver cannot), other (the
 * driver's failure; the sandbox is as before). 1: in progress off the
 * loop (sb->transition says which; the status stays as it was until it
 * is over). A resume asked while one is in progress joins it (1). When
 * it is over, waiting connections hear of it (rn_conn_sandbox_changed):
 * the status changed, or sb->tr_err says why not. */
int rn_sandbox_pause(struct runner *r, struct rn_sandbox *sb, struct sbx_err *err);
int rn_sandbox_resume(struct runner *r, struct rn_sandbox *sb, struct sbx_err *err);
/* The driver's word that a pause or resume that answered 1 is over: msg
 * NULL when it worked, else why not (the sandbox is as before it). A
 * sandbox stopped meanwhile is left to its stop. */
void rn_sandbox_pause_done(struct runner *r, struct rn_sandbox *sb, const char *msg);
void rn_sandbox_resume_done(struct runner *r, struct rn_sandbox *sb, const char *msg);

#endif
