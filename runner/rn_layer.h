/* A read-only overlay layer made from a sandbox's writable layer: a copy of
 * a directory tree that keeps what overlayfs reads in a lower layer (types,
 * modes, owners, times, user.* xattrs such as user.overlay.opaque, and
 * whiteouts: character devices 0/0). */
#ifndef RN_LAYER_H
#define RN_LAYER_H

#include <stdint.h>
#include <sys/types.h>

#include "sbx_err.h"

/* Deeper than this is refused (sbx_rmtree removes 32 levels at most: a
 * layer that could not be removed is never made). */
#define RN_LAYER_DEPTH_MAX 30

struct rn_layer_stats {
	int64_t limit;          /* in: file content a copy may write (0: no limit);
	                         * past it the copy fails ENOSPC */
	int64_t bytes;          /* file content copied (holes not counted) */
	int64_t files;          /* entries made */
	int64_t reflinked;      /* regular files cloned (FICLONE) instead of copied */
};

/* Copy the tree src into dst (made here, 0755; it must not exist). Owners
 * are shifted down by id_base: a host uid u in [id_base, id_base + id_count)
 * is stored as u - id_base, any other as 65534 (nobody), so the layer holds
 * the ids as the sandbox saw them and an id-mapped mount gives them to the
 * next sandbox's range. Symlinks are never followed, hard links become
 * separate files, sockets and devices other than whiteouts are left out.
 * A regular file is cloned when the filesystems allow it (FICLONE), else
 * copied with its holes kept (a sparse file costs only its data). st->limit
 * is kept (the rest of st is zeroed). 0, or -1 with err (dst is then removed). */
int rn_layer_copy(const char *src, const char *dst, uid_t id_base, uid_t id_count,
		  struct rn_layer_stats *st, struct sbx_err *err);

/* Squash: lay layer src (ids as inside) over the layer dst, as overlay
 * would show src over dst: an entry of src replaces dst's, a whiteout
 * removes it (and stays: the result is still a layer over the image), an
 * opaque directory replaces dst's whole directory, a plain one merges
 * into it. st counts what src added. 0 or -1 with err (dst half made). */
int rn_layer_merge(const char *src, const char *dst, struct rn_layer_stats *st,
		   struct sbx_err *err);

#endif
