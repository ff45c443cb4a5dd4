/* What a sandbox's /proc shows of the host. /proc is the sandbox's own
 * (its pid namespace), but many files in it are host-wide: the kernel's
 * command line and config, load, memory, disk and scheduler statistics,
 * kernel addresses. As container runtimes do, the child covers them before
 * anything of the user's runs: files that no ordinary tool needs with
 * /dev/null (empty to read, writes go nowhere), the host's helper commands
 * in /proc/sys with an empty read-only file, directories with an empty
 * read-only directory, and /proc/meminfo and /proc/loadavg, which free, top,
 * uptime and language runtimes read, with a static read-only text of the
 * sandbox's own: its memory limit, a load of zero. What stays visible is
 * listed in docs/security.md. The agent's own entries (/proc/1) are
 * read-only. The caps the sandbox keeps include no CAP_SYS_ADMIN (and
 * seccomp denies mount/umount), so the covers stay. */
#include "driver_jail.h"
#include "sbx_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

/* relative to the new root, before pivot_root */
static const char *const proc_null[] = {
	/* Docker's MaskedPaths, plus kallsyms */
	"proc/kcore", "proc/keys", "proc/timer_list", "proc/sched_debug",
	"proc/latency_stats", "proc/interrupts", "proc/kallsyms", "proc/sysrq-trigger",
	"proc/timer_stats",
	/* the host's boot line and kernel build, modules, key owners */
	"proc/cmdline", "proc/config.gz", "proc/modules", "proc/key-users",
	/* host-wide statistics: other tenants' disk and scheduling activity */
	"proc/diskstats", "proc/partitions", "proc/swaps", "proc/schedstat",
	"proc/softirqs", "proc/buddyinfo", "proc/zoneinfo", "proc/pagetypeinfo",
	"proc/slabinfo", "proc/vmallocinfo", "proc/iomem", "proc/ioports",
	"proc/kpagecount", "proc/kpageflags", "proc/kpagecgroup",
	NULL
};
/* Host settings under /proc/sys, covered with an empty read-only file (a
 * write is EROFS, as everywhere else in the read-only /proc/sys): the
 * host's crash handler and module loader, commands the kernel runs as
 * host root. */
static const char *const proc_blank[] = {
	"proc/sys/kernel/core_pattern", "proc/sys/kernel/modprobe", NULL
};
static const char *const proc_empty[] = {
	"proc/acpi", "proc/asound", "proc/scsi", "proc/pressure", "proc/driver",
	/* the host's PCI and input devices */
	"proc/bus",
	NULL
};

#define MASK_DIR "mask"          /* under the writable layer's tmpfs, unseen inside */
#define RO_FLAGS (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)

/* Bind src read-only over dst, a path of /proc; 0 also when dst does not
 * exist on this kernel (a mount on it fails ENOENT: no lookup first). */
static int cover(const char *src, const char *dst, int read_only, struct sbx_err *err)
{
	if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
		return errno == ENOENT ? 0 : sbx_err_sys(err, "mask %s", dst);
	if (read_only && mount(NULL, dst, NULL, MS_BIND | MS_REMOUNT | RO_FLAGS, NULL) < 0)
		return sbx_err_sys(err, "make the mask of %s read-only", dst);
	return 0;
}

/* Bind the text, as a read-only file dir/name, over each of dsts (files
 * of /proc) that exists. */
static int cover_with_text(const char *dir, const char *name, const char *text,
			   const char *const *dsts, struct sbx_err *err)
{
	char src[PATH_MAX];

	if (snprintf(src, sizeof(src), "%s/%s", dir, name) >= (int)sizeof(src))
		return sbx_err_set(err, ENAMETOOLONG, "mask path for %s", name);
	if (sbx_write_file(src, text, O_CREAT | O_EXCL | O_NOFOLLOW, 0444) < 0)
		return sbx_err_sys(err, "create %s", src);
	for (int i = 0; dsts[i]; i++)
		if (cover(src, dsts[i], 1, err) < 0)
			return -1;
	return 0;
}

/* An empty directory of the mask tmpfs, bound read-only over each of the
 * directories to hide: binds, where a tmpfs each would be a superblock
 * each (and every superblock's shrinker is set up for every memory
 * cgroup of the host). */
static int cover_dirs(const char *dir, struct sbx_err *err)
{
	char src[PATH_MAX];

	if (snprintf(src, sizeof(src), "%s/empty", dir) >= (int)sizeof(src))
		return sbx_err_set(err, ENAMETOOLONG, "mask path for the empty dir");
	if (mkdir(src, 0555) < 0)
		return sbx_err_sys(err, "mkdir %s", src);
	for (int i = 0; proc_empty[i]; i++)
		if (cover(src, proc_empty[i], 1, err) < 0)
			return -1;
	return 0;
}

static int cover_with_own_texts(const struct jail_plan *p, struct sbx_err *err)
{
	static const char *const meminfo_dst[] = { "proc/meminfo", NULL };
	static const char *const loadavg_dst[] = { "proc/loadavg", NULL };
	char dir[PATH_MAX], meminfo[512];
	long long kb = (long long)p->spec->memory_mb * 1024;

	/* A small tmpfs of its own: it outlives pivot_root through the binds
	 * and is reachable from nowhere inside. */
	if (snprintf(dir, sizeof(dir), "%s/" MASK_DIR, p->rw) >= (int)sizeof(dir))
		return sbx_err_set(err, ENAMETOOLONG, "mask dir");
	if (mkdir(dir, 0700) < 0)
		return sbx_err_sys(err, "mkdir %s", dir);
	if (mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "size=16k,nr_inodes=16,mode=0755") < 0)
		return sbx_err_sys(err, "mount tmpfs on %s", dir);
	/* Static: the limit, not live usage (that lives in the sandbox's
	 * cgroup, which is not mounted inside). */
	snprintf(meminfo, sizeof(meminfo),
		 "MemTotal:       %8lld kB\n"
		 "MemFree:        %8lld kB\n"
		 "MemAvailable:   %8lld kB\n"
		 "Buffers:               0 kB\n"
		 "Cached:                0 kB\n"
		 "SwapCached:            0 kB\n"
		 "Active:                0 kB\n"
		 "Inactive:              0 kB\n"
		 "Shmem:                 0 kB\n"
		 "SwapTotal:             0 kB\n"
		 "SwapFree:              0 kB\n", kb, kb, kb);
	if (cover_with_text(dir, "meminfo", meminfo, meminfo_dst, err) < 0 ||
	    cover_with_text(dir, "loadavg", "0.00 0.00 0.00 1/1 1\n", loadavg_dst, err) < 0 ||
	    cover_with_text(dir, "blank", "", proc_blank, err) < 0 ||
	    cover_dirs(dir, err) < 0)
		return -1;
	return 0;
}

/* /proc/1 is the agent (the child is PID 1 here, and execs it). Root
 * inside owns its entries, and some act on it when written:
 * coredump_filter, clear_refs (resets its page bits and peak RSS),
 * oom_score_adj. Nothing inside needs to change the agent, so the whole
 * directory, task/1 included, is a read-only bind of itself (EROFS). */
static int agent_proc_read_only(struct sbx_err *err)
{
	if (mount("proc/1", "proc/1", NULL, MS_BIND, NULL) < 0)
		return sbx_err_sys(err, "bind /proc/1");
	if (mount(NULL, "proc/1", NULL, MS_BIND | MS_REMOUNT | RO_FLAGS, NULL) < 0)
		return sbx_err_sys(err, "make /proc/1 read-only");
	return 0;
}

int jail_mask_proc(const struct jail_plan *p, struct sbx_err *err)
{
	for (int i = 0; proc_null[i]; i++)
		if (cover("/dev/null", proc_null[i], 0, err) < 0)
			return -1;
	if (agent_proc_read_only(err) < 0)
		return -1;
	return cover_with_own_texts(p, err);
}
