/* A sandbox's dir (sb->dir) and its state.json: what a restarted runner
 * needs to find and kill the process a driver started (its pid and start
 * time), written by every driver the same way and read back by their
 * reconcile. */
#ifndef RN_STATE_H
#define RN_STATE_H

#include <sys/types.h>

#include "runner.h"

/* <sb->dir>/name into out (PATH_MAX bytes); "" when it would not fit (sb->dir
 * is short, checked at start-up). */
void rn_state_path(char *out, const struct rn_sandbox *sb, const char *name);

/* Start time of pid (field 22 of /proc/PID/stat), 0 when it is gone or a
 * zombie: with the pid it names one process, never a reused pid. */
unsigned long long rn_proc_starttime(pid_t pid);

/* Write <sb->dir>/state.json: id, pid, its start time, the driver's name,
 * the slot when slot >= 0, and what a restarted runner shows of a sandbox
 * it lost (owner, created_at, the shape asked for). Returns 0, or -1 with
 * err. */
int rn_state_save(const struct rn_sandbox *sb, const char *driver, int slot,
		  struct sbx_err *err);

/* SIGKILL the process <dir>/state.json names, if it still is the one that
 * was started, and wait up to 2 s for it to go. */
void rn_state_kill(const char *dir);

/* The slot <dir>/state.json names, or -1 (none, or no file). */
int rn_state_slot(const char *dir);

/* Keep a record of sandbox id, which a previous run of the runner left
 * in dir and drv's reconcile_dir is about to kill and remove: status
 * failed, stop_reason runner_restart, with what <dir>/state.json says of
 * it (owner, created_at, isolation, shape), so `get` answers for it
 * instead of not_found. */
void rn_state_keep_lost(struct runner *r, struct rn_driver *drv, const char *id,
			const char *dir);

/* A paused sandbox's settings beyond state.json (ports, env names, the
 * image's workdir, its snapshot, idle timeout, persistent, the timeout
 * left, its network policy unless that brokers credentials), for a
 * driver whose paused sandboxes outlive the runner: <dir>/paused.json,
 * written whole (temp file, renamed). 0, or -1 with err. */
int rn_state_save_paused(const struct rn_sandbox *sb, struct sbx_err *err);

/* The sandbox of <dir>/state.json and paused.json back in the runner's
 * list, status paused, pid 0 and reaped (nothing of it runs), or NULL
 * when either file is missing or bad, or its policy brokered credentials
 * (the caller reconciles the dir as lost). The driver sets drv_data and agent_socket. */
struct rn_sandbox *rn_state_adopt_paused(struct runner *r, struct rn_driver *drv,
					 const char *id, const char *dir);

#endif
