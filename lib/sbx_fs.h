/* Small filesystem steps shared by the runner, the agent and the gateway.
 * Each returns 0, or -1 with errno set; none logs. */
#ifndef SBX_FS_H
#define SBX_FS_H

#include <stddef.h>
#include <sys/types.h>

/* mkdir -p: the missing parents of path are made with parent_mode, path
 * itself with mode (both under the umask, as mkdir(2)). An existing
 * directory is fine; an existing non-directory at path is ENOTDIR. */
int sbx_mkdir_p(const char *path, mode_t parent_mode, mode_t mode);

/* rm -rf path, by descriptors: every directory is opened relative to its
 * parent's fd with O_NOFOLLOW and checked to be the very directory that
 * was examined, so a symlink (or a rename) anywhere in the tree, even one
 * made while the walk runs, is removed as a name and never followed; and
 * a mount (another st_dev) is never entered: it fails the removal (EBUSY)
 * instead of being emptied through. A missing path is success. Deeper
 * than 32 levels is ELOOP. path itself is the caller's (trusted). */
int sbx_rmtree(const char *path);

/* Write the whole string s to path, opened O_WRONLY | O_CLOEXEC | oflags
 * (e.g. 0 for a cgroup or /proc file that exists, O_CREAT | O_EXCL |
 * O_NOFOLLOW for a new file) with mode when created. A short write is
 * EIO. */
int sbx_write_file(const char *path, const char *s, int oflags, mode_t mode);

/* Replace the file at path with the string s, never torn: written whole
 * to path.tmp (a stale one removed first; O_EXCL | O_NOFOLLOW, mode) and
 * renamed over path, so a crash leaves the old file or the new one. No
 * fsync: for state that has to survive a crash of the process, not of
 * the host. On failure path.tmp is removed; -1 with errno. */
int sbx_replace_file(const char *path, const char *s, mode_t mode);

/* Read the file at path into buf: at most n - 1 bytes, then a NUL (the
 * small files of /proc, cgroups, the runner's state). Returns the length
 * (0: empty), or -1 with errno. */
ssize_t sbx_read_file(const char *path, char *buf, size_t n);

/* Write all n bytes of p to fd, again after EINTR and short writes. On
 * a socket it sends with MSG_NOSIGNAL, so a peer gone is EPIPE, never a
 * signal. 0, or -1 with errno (EIO for a write of 0 bytes). */
int sbx_write_all(int fd, const void *p, size_t n);

/* The directory of the running binary (/proc/self/exe without its last
 * component) into out. ENAMETOOLONG when it does not fit. */
int sbx_self_dir(char *out, size_t n);

#endif
