/* The gvisor driver: the same image and agent as the jail, under gVisor's
 * runsc (a user-space kernel between the sandbox and the host kernel), one
 * runsc sandbox per sandbox (docs/runner.md, "gVisor"). */
#ifndef DRIVER_GVISOR_H
#define DRIVER_GVISOR_H

#include <limits.h>
#include <stdint.h>

#include "runner.h"

#define GV_AGENT_SOCK_DIR "/run/sbx"
#define GV_AGENT_SOCK_NAME "agent.sock"
#define GV_AGENT_SOCK GV_AGENT_SOCK_DIR "/" GV_AGENT_SOCK_NAME
/* The dir of the sandbox's socket tmpfs that is bound at GV_AGENT_SOCK_DIR;
 * the tmpfs's root, where the runner dials the agent, is not bound
 * anywhere inside (driver_gvisor_sock.c). */
#define GV_GUEST_DIR "guest"
/* A paused sandbox's checkpoint image: <sandbox dir>/GV_CKPT_DIR. */
#define GV_CKPT_DIR "checkpoint"
/* An allow-all sandbox's network namespace, held by a bind mount at
 * <sandbox dir>/GV_NETNS_NAME from start to cleanup (driver_gvisor_netns.c). */
#define GV_NETNS_NAME "netns"
/* The agent's "no host socket left" mark (guest/agent.h AG_QUIESCED_SUFFIX) */
#define GV_QUIESCED_NAME GV_AGENT_SOCK_NAME ".quiesced"
#define GV_MIN_VERSION 20240729L   /* statx fix, systrap */

/* What config.json is made from (driver_gvisor_spec.c). */
struct gv_bundle {
	const struct rn_spec *spec;
	const char *rootfs;          /* the sandbox's root (gv_root_mount) */
	const char *runtime_dir;     /* agent + libs, bound read-only */
	const char *loader;          /* basename of ld.so in runtime_dir/lib */
	const char *sockdir;         /* host dir bound rw at GV_AGENT_SOCK_DIR */
	const char *cgroup_path;     /* linux.cgroupsPath */
	const char *netns_path;      /* "" = a new empty netns; else the held one */
	int64_t host_pids;           /* host pids.max backstop */
	int slot;                    /* its veth addresses (the resolver's), or -1 */
};

/* config.json text (cJSON_free it), or NULL when out of memory. */
char *gv_spec_json(const struct gv_bundle *b);
/* Write the /etc files into the root b->rootfs (mounted) and config.json
 * into bundle_dir. */
int gv_spec_write(const struct gv_bundle *b, const char *bundle_dir, struct sbx_err *err);

/* Under gVisor, after runsc started the sandbox: wait until the agent
 * listens at sockdir/GV_GUEST_DIR/agent.sock, then move the socket to
 * sockdir/agent.sock, out of every process of the sandbox's reach
 * (driver_gvisor_sock.c). Returns 0 once moved; 1 when the sandbox ended
 * first (every child of the caller did, or the sentry, whose wait status
 * is then in *sentry_st; other children reaped meanwhile are dropped);
 * -1 with errno when the move failed. */
int gv_sock_hide(const char *sockdir, pid_t sentry, int *sentry_st);

/* The sandbox's watcher, in the runner's child forked for it: starts runsc
 * (argv), runs as long as the sandbox's sentry and ends as it did; with
 * net_fd >= 0 it first makes the sandbox's network namespace, handing it
 * over through net_fd; with held (a restore of allow-all: the path of the
 * namespace the runner kept, else NULL or "") it joins that one; with
 * poke (a restore) it runs that runsc command too once argv returned,
 * which tells the agent to listen again (driver_gvisor_watch.c). */
void gv_watch(char *const argv[], char *const poke[], const char *pidfile,
	      const char *sockdir, int agent_stderr, int net_fd,
	      const char *held) __attribute__((noreturn));
/* The same, in a fresh process: the forked child execs GV_WATCH_EXE
 * beside the runner's binary (else the runner's binary itself) as
 * `GV_WATCH_EXE GV_WATCH_CMD ...`, whose main hands the arguments to
 * gv_watch_main. */
#define GV_WATCH_CMD "gvisor-watch"
#define GV_WATCH_EXE "sandbox-gvisor-watch"
/* GV_WATCH_EXE's path beside the runner's binary into out: 0 when it is
 * there and executable, else -1. */
int gv_watch_path(char *out, size_t n);
void gv_watch_exec(char *const argv[], char *const poke[], const char *pidfile,
		   const char *sockdir, int agent_stderr, int net_fd,
		   const char *held) __attribute__((noreturn));
int gv_watch_main(int argc, char **argv);

/* Before `runsc checkpoint`: wait until the agent made
 * sockdir/GV_GUEST_DIR/GV_QUIESCED_NAME (it closed every connection and
 * its listener). 0, or -1 (ETIMEDOUT) after timeout_ms; gv_ckpt_unmark
 * removes the file (driver_gvisor_ckpt_wait.c). */
int gv_ckpt_wait_closed(const char *sockdir, int timeout_ms);
void gv_ckpt_unmark(const char *sockdir);
/* The agent listening again at sockdir/GV_GUEST_DIR/agent.sock (after
 * SIGUSR2) moved to sockdir/agent.sock, as gv_sock_hide does at start;
 * waits up to timeout_ms. 0, or -1 with errno (driver_gvisor_sock.c). */
int gv_sock_rehide(const char *sockdir, int timeout_ms);
/* After `runsc restore`: wait until sockdir/agent.sock accepts (the agent
 * listens again and the watcher moved its socket). 0; 1 when the watcher
 * (the runner's child, reaped by the runner) is gone first; -1 (ETIMEDOUT). */
int gv_ckpt_wait_listening(const char *sockdir, pid_t watcher, int timeout_ms);

/* The network namespace of watcher held at path (an empty file made
 * here, a bind mount on it). 0, or -1 with err. */
int gv_netns_hold(pid_t watcher, const char *path, struct sbx_err *err);
/* Unmount and remove the held namespace at path, if any: with the
 * sandbox's processes gone the kernel ends it, its veth with it. */
void gv_netns_drop(const char *path);
/* 1 when path is a held network namespace (an nsfs bind mount), else 0. */
int gv_netns_held(const char *path);

struct rn_layer_stats;

/* The sandbox's root (driver_gvisor_root.c): a host overlay at <dir>/root
 * of its snapshot's layers (if any) and image, its writes in <dir>/rw/upper
 * on a tmpfs of disk_mb. gv_root_unmount takes both down (dir: the
 * sandbox's); gv_root_copy copies the upper dir as a snapshot layer. */
int gv_root_mount(const struct rn_sandbox *sb, const char *image, struct sbx_err *err);
void gv_root_unmount(const char *dir);
int gv_root_copy(const struct rn_sandbox *sb, const char *dst, struct rn_layer_stats *st,
		 struct sbx_err *err);

/* runsc's version as YYYYMMDD from `runsc --version` output, or -1. */
long gv_parse_version(const char *text);

#endif
