/* The runner's snapshot store: each snapshot is a read-only layer taken
 * from a sandbox's writable layer, stacked over its image (and over the
 * layers of the snapshot that sandbox was made from: a chain), with its
 * metadata beside it on disk, so snapshots outlive a runner restart:
 *
 *     <state>/snapshots/<snp_id>/meta.json   id, owner tag, image, chain, times
 *     <state>/snapshots/<snp_id>/layer/      the layer (ids as inside)
 *
 * A deleted or expired snapshot leaves the API at once; its layer stays
 * while a sandbox that is not yet cleaned up, or another snapshot's
 * chain, still stacks it, and is removed with its dir after that. */
#ifndef RN_SNAP_H
#define RN_SNAP_H

#include <stdint.h>
#include <cJSON.h>

#include "runner.h"

#define RN_SNAP_DEPTH_MAX 8           /* layers under one sandbox's writable one; a
                                       * snapshot that would pass it is squashed */
#define RN_SNAP_MAX 1024              /* snapshots per runner, deleted ones kept included */
#define RN_SNAP_KEEP_LAST_MAX 100
#define RN_SNAP_EXPIRES_MAX_MS (30LL * 24 * 3600 * 1000)

struct rn_snap {
	char id[RN_ID_MAX];
	char sandbox_id[RN_ID_MAX];     /* the sandbox it was taken of */
	char image[33];
	char isolation[16];
	char owner[65];
	int64_t created_at, expires_at; /* wall ms; expires_at 0: never */
	int64_t size;                   /* bytes of file content in its own layer */
	char parent[RN_ID_MAX];         /* the snapshot its sandbox was made from ("" none) */
	int n_chain;                    /* chain[0] is its own layer, then its parent's... */
	char chain[RN_SNAP_DEPTH_MAX][RN_ID_MAX];
	int deleted;                    /* gone from the API; layer kept while stacked */
	int hidden;                     /* a persistent sandbox's files while it is
	                                 * stopped (rn_persist.h): never in the API */
	struct rn_snap *next;
};

/* Load what a previous run left in <state>/snapshots (a dir without a
 * readable meta.json is a copy that never finished: removed). 0 or -1
 * with err (the dir cannot be made). */
int rn_snap_init(struct runner *r, struct sbx_err *err);

/* The snapshot id of owner (not deleted, not hidden), or NULL. */
struct rn_snap *rn_snap_find(struct runner *r, const char *id, const char *owner);
/* The snapshot id whatever its owner (not deleted; hidden ones too), or NULL. */
struct rn_snap *rn_snap_get(struct runner *r, const char *id);

/* The host paths of the layers a sandbox made from snapshot id stacks,
 * top first, into paths (n at most); their count, or -1 with err. */
int rn_snap_layers(struct runner *r, const char *id, char paths[][4096], int n,
		   struct sbx_err *err);

/* Take a snapshot of sb (running or paused) for owner: frozen while its
 * driver copies its writable layer. expires_in_ms 0: never; keep_last 0:
 * no limit, else older snapshots of the same sandbox and owner beyond it
 * are deleted. The new snapshot, or NULL with err: EBUSY (not running),
 * ENOTSUP (the driver cannot), ENOSPC (the store is full), ELOOP (the
 * tree is too deep), other (internal). A snapshot whose chain would pass
 * RN_SNAP_DEPTH_MAX is squashed: its layers and the new one merged into
 * one layer over the image (after the sandbox is thawed). */
struct rn_snap *rn_snap_take(struct runner *r, struct rn_sandbox *sb, const char *owner,
			     int64_t expires_in_ms, int keep_last, struct sbx_err *err);
/* The same, hidden (a persistent sandbox's own, rn_persist.h). */
struct rn_snap *rn_snap_take_hidden(struct runner *r, struct rn_sandbox *sb,
				    struct sbx_err *err);

/* Delete s from the API (its disk goes once nothing stacks it). */
void rn_snap_delete(struct runner *r, struct rn_snap *s);

/* Expiry and removal of layers nothing stacks any more. Returns ms until
 * the next expiry (-1: none). */
int rn_snap_tick(struct runner *r);

/* The snapshot as the API shows it (with its owner tag: the gateway
 * removes it). */
cJSON *rn_snap_json(const struct rn_snap *s);

/* Bytes of all layers on disk (deleted ones kept included). */
int64_t rn_snap_store_bytes(const struct runner *r);

#endif
