/* An allow-all gvisor sandbox's network namespace, held by a bind mount
 * at <sandbox dir>/netns (as `ip netns add` holds one) instead of by the
 * watcher's life alone: a checkpoint ends every process of the sandbox,
 * and the namespace, with its veth, the host end's address that the
 * sandbox's resolver and egress proxy listen on, and the slot's firewall
 * rules, must outlive them for `runsc restore` to go back into it. The
 * mount is the host's (the runner's mount namespace), so it also outlives
 * the runner: a restarted runner takes a paused sandbox back with its
 * network as it was. */
#include "driver_gvisor.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef NSFS_MAGIC
#define NSFS_MAGIC 0x6e736673
#endif

int gv_netns_hold(pid_t watcher, const char *path, struct sbx_err *err)
{
	char src[64];
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return sbx_err_sys(err, "create %s", path);
	close(fd);
	snprintf(src, sizeof(src), "/proc/%d/ns/net", (int)watcher);
	if (mount(src, path, NULL, MS_BIND, NULL) < 0) {
		sbx_err_sys(err, "hold the network namespace at %s", path);
		unlink(path);
		return -1;
	}
	return 0;
}

void gv_netns_drop(const char *path)
{
	for (int k = 0; k < 8 && umount2(path, MNT_DETACH) == 0; k++)
		;
	unlink(path);
}

int gv_netns_held(const char *path)
{
	struct statfs st;

	return statfs(path, &st) == 0 && st.f_type == NSFS_MAGIC;
}
