/* A sandbox's requested shape: limits, ports, env, network and image,
 * parsed from the create request with a default and a maximum per field. */
#ifndef RN_SPEC_H
#define RN_SPEC_H

#include <stdint.h>

#include <cJSON.h>

#include "sbx_err.h"

#define RN_MAX_PORTS 16
#define RN_MAX_ENV 64
#define RN_ENV_BYTES 32768      /* names + values together */

/* RN_NET_POLICY: an allow-list (rn_policy.h), in spec.policy */
enum rn_network { RN_NET_DENY_ALL, RN_NET_ALLOW_ALL, RN_NET_POLICY };

struct rn_policy;

struct rn_spec {
	int64_t timeout_ms;
	int64_t vcpus;
	int64_t memory_mb;
	int64_t pids;
	int64_t disk_mb;
	int64_t nofile;
	int64_t idle_timeout_ms;       /* 0 = off */
	int ports[RN_MAX_PORTS];
	int n_ports;
	char *env_names[RN_MAX_ENV];   /* owned; values never logged */
	char *env_values[RN_MAX_ENV];
	int n_env;
	enum rn_network network;
	struct rn_policy *policy;      /* owned; RN_NET_POLICY's, else NULL */
	char image[33];
	char image_ref[256];           /* "image" as a registry reference ("": a name);
					* image is then its local name, once resolved */
	char workdir[256];             /* the image's WorkingDir ("": none) */
	char snapshot[64];             /* the snapshot it starts from ("": none) */
	char owner[65];                /* opaque tag of the client that owns it */
	int preview_auth;              /* kept for the gateway: its previews are private */
	int persistent;                /* kept when stopped or timed out (rn_persist.h) */
	int64_t snapshot_expires_in_ms;   /* its snapshots' defaults (0: none) */
	int64_t snapshot_keep_last;
};

/* Limits on what a create may ask for (min, default, max). */
#define RN_TIMEOUT_MAX_MS (24LL * 3600 * 1000)
#define RN_EXTEND_MAX_MS RN_TIMEOUT_MAX_MS
#define RN_NOFILE_MAX 65536
/* nofile may be at most memory_mb times this. Past a sandbox's socket
 * budget the kernel still forces about two segments into each socket
 * (about 18 KiB with the jail's 8 KiB loopback segments): 32 descriptors
 * per MB keep that within memory_mb however many are sockets. The default
 * nofile (1024) fits the smallest memory_mb (32). */
#define RN_NOFILE_PER_MB 32
/* Default admission cap: memory_mb of live sandboxes <= this share of RAM. */
#define RN_MEMORY_SHARE_DEFAULT 0.5

/* Fill spec from a create request. Returns 0, or -1 with err (code EINVAL)
 * naming the offending field. On failure spec holds nothing to free. */
int rn_spec_parse(const cJSON *req, struct rn_spec *spec, struct sbx_err *err);
void rn_spec_free(struct rn_spec *spec);
/* Wipe and free only the env values (names stay for display). */
void rn_spec_wipe_values(struct rn_spec *spec);
const char *rn_network_name(enum rn_network n);
/* Add the limits (timeout_ms, vcpus, memory_mb, pids, disk_mb, nofile) to
 * o: the sandbox object and state.json carry them alike. */
void rn_spec_limits_json(cJSON *o, const struct rn_spec *spec);

/* 1 when s may name an image (a directory of the image dir): 1 to 32 of
 * a-z 0-9 - _ . , not starting with . or - */
int rn_image_name_ok(const char *s);
/* 1 when s is a registry reference the runner passes on to skopeo:
 * [host[:port]/]path[:tag][@sha256:...] of A-Z a-z 0-9 . _ - : / @, 1 to
 * 255 bytes, each '/'-separated component starting with a letter or digit. */
int rn_image_ref_ok(const char *s);
#endif
