/* The root of a gvisor sandbox: a host overlayfs at <dir>/root, its lower
 * layers a snapshot's (if it starts from one) over the image, its upper
 * dir <dir>/rw/upper on a tmpfs of disk_mb (writes cannot fill the host's
 * disk). runsc serves it through its gofer with --overlay2=none, so every
 * write the sandbox makes lands in a host directory that a snapshot
 * copies as it copies the jail's (runsc's own overlay would keep the
 * writes in its private file store, which the host cannot read as a
 * tree). The sandbox's ids are the host's under gVisor, so the layer's
 * owners need no shift, and the layers are the jail's format: user.*
 * overlay xattrs (userxattr), whiteouts as 0/0 character devices. */
#include "driver_gvisor.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rn_layer.h"
#include "rn_snap.h"
#include "rn_state.h"

/* ids 0..65535 inside are kept in a layer, any other is nobody's (the
 * jail's range) */
#define GV_ID_COUNT 65536u

static int mkdir_in(const struct rn_sandbox *sb, const char *name, struct sbx_err *err)
{
	char p[PATH_MAX];

	rn_state_path(p, sb, name);
	if (mkdir(p, 0755) < 0)
		return sbx_err_sys(err, "mkdir %s", p);
	return 0;
}

/* "lowerdir=L0:L1:...:IMAGE,upperdir=...,workdir=...,userxattr" */
static int overlay_opts(const struct rn_sandbox *sb, const char *image, char *out, size_t n,
			struct sbx_err *err)
{
	static char layers[RN_SNAP_DEPTH_MAX][4096];   /* the runner's loop is one thread */
	char upper[PATH_MAX], work[PATH_MAX];
	int n_layers = 0;
	size_t k;

	if (sb->spec.snapshot[0]) {
		n_layers = rn_snap_layers(sb->drv->r, sb->spec.snapshot, layers, RN_SNAP_DEPTH_MAX,
					  err);
		if (n_layers < 0)
			return -1;
	}
	rn_state_path(upper, sb, "rw/upper");
	rn_state_path(work, sb, "rw/work");
	k = (size_t)snprintf(out, n, "lowerdir=");
	for (int i = 0; i < n_layers && k < n; i++)
		k += (size_t)snprintf(out + k, n - k, "%s:", layers[i]);
	if (k < n)
		k += (size_t)snprintf(out + k, n - k, "%s,upperdir=%s,workdir=%s,userxattr", image,
				      upper, work);
	/* the kernel takes one page of options */
	if (k >= n || k >= 4096)
		return sbx_err_set(err, ENAMETOOLONG, "overlay options of %s too long", sb->id);
	return 0;
}

int gv_root_mount(const struct rn_sandbox *sb, const char *image, struct sbx_err *err)
{
	char p[PATH_MAX], opts[8192], tmp[96];
	long long inodes = sb->spec.disk_mb * 256;

	if (mkdir_in(sb, "rw", err) < 0 || mkdir_in(sb, "root", err) < 0)
		return -1;
	rn_state_path(p, sb, "rw");
	snprintf(tmp, sizeof(tmp), "size=%lldm,nr_inodes=%lld,mode=0700",
		 (long long)sb->spec.disk_mb, inodes < 16384 ? 16384 : inodes);
	if (mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV, tmp) < 0)
		return sbx_err_sys(err, "mount tmpfs on %s", p);
	if (mkdir_in(sb, "rw/upper", err) < 0 || mkdir_in(sb, "rw/work", err) < 0 ||
	    overlay_opts(sb, image, opts, sizeof(opts), err) < 0)
		return -1;
	rn_state_path(p, sb, "root");
	if (mount("overlay", p, "overlay", MS_NOSUID | MS_NODEV, opts) < 0)
		return sbx_err_sys(err, "mount the overlay root of %s", sb->id);
	/* /tmp is bound from here (driver_gvisor_spec.c): an image without
	 * one gets it, as the jail makes it */
	rn_state_path(p, sb, "root/tmp");
	if (mkdir(p, 01777) == 0 ? chmod(p, 01777) < 0 : errno != EEXIST)
		return sbx_err_sys(err, "mkdir %s", p);
	return 0;
}

void gv_root_unmount(const char *dir)
{
	/* the overlay before the tmpfs under its upper; "upper" is the file
	 * store's tmpfs of runners before this root */
	static const char *const mnts[] = { "root", "rw", "upper", NULL };
	char p[PATH_MAX + 16];

	for (int i = 0; mnts[i]; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, mnts[i]);
		for (int k = 0; k < 8 && umount2(p, MNT_DETACH) == 0; k++)
			;
	}
}

int gv_root_copy(const struct rn_sandbox *sb, const char *dst, struct rn_layer_stats *st,
		 struct sbx_err *err)
{
	char upper[PATH_MAX];

	rn_state_path(upper, sb, "rw/upper");
	return rn_layer_copy(upper, dst, 0, GV_ID_COUNT, st, err);
}
