/* Persistent sandboxes (create with "persistent":true): a stop that asks
 * for it, the timeout and the idle timeout keep the sandbox instead of
 * ending it for good. A driver that snapshots (jail) takes a hidden
 * snapshot of its files, then the sandbox stops and its resources go;
 * its record stays (status stopped, "resumable":true) and is written to
 * <state>/persistent/<id>.json, so it outlives a runner restart. A driver
 * that only pauses (gvisor) pauses it (status paused). Resume starts the
 * kept sandbox again under the same id and settings from its snapshot
 * (jail), or resumes it (gvisor). A stop without "persist" (the API's
 * DELETE) ends it for good: snapshot and record go. Env values are never
 * written: a sandbox started again after a runner restart has none. */
#ifndef RN_PERSIST_H
#define RN_PERSIST_H

#include "runner.h"

/* Stop sb for reason, kept when it is persistent (a plain stop when not,
 * or when its files could not be kept: logged, and its error says so). */
void rn_persist_stop(struct runner *r, struct rn_sandbox *sb, enum rn_reason reason);
/* 1 when sb is kept and a resume would bring it back. */
int rn_persist_resumable(const struct rn_sandbox *sb);
/* Bring a kept sb back: 0 (running, or starting: wait for it), or -1 with
 * err: EBUSY (nothing kept), EAGAIN/ENOSPC (no room now), other. */
int rn_persist_resume(struct runner *r, struct rn_sandbox *sb, struct sbx_err *err);
/* Forget what is kept of sb (its snapshot, its record file): the stop of
 * a DELETE. */
void rn_persist_forget(struct runner *r, struct rn_sandbox *sb);
/* At start-up, after reconciliation and the snapshot store: the kept
 * sandboxes a previous run left, as stopped records that resume. */
void rn_persist_load(struct runner *r);

#endif
