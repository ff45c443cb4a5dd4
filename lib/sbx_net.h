/* UNIX sockets shared by the runner, the agent and the gateway: connects
 * (plain, and symlink-safe for paths a sandbox controls), the 0600
 * listener, and passing a descriptor along with a message. */
#ifndef SBX_NET_H
#define SBX_NET_H

#include <stddef.h>
#include <sys/types.h>

/* Connect a close-on-exec stream socket to the UNIX socket at path, which
 * the caller trusts (connect(2) follows symlinks). timeout_ms 0: the
 * socket is non-blocking and the connect one attempt (EAGAIN when the
 * listener's backlog is full). timeout_ms > 0: the socket blocks, and its
 * connect, reads and writes each give up after timeout_ms (EAGAIN).
 * Returns the fd, or -1 with errno (ENAMETOOLONG: path does not fit). */
int sbx_unix_connect(const char *path, int timeout_ms);

/* A non-blocking, close-on-exec listener at path, mode 0600 from its
 * first moment whatever the umask (bind runs under umask 0177; the chmod
 * after it is for filesystems that ignore the umask). A stale socket file
 * at path is replaced. Returns the fd, or -1 with errno. */
int sbx_unix_listen(const char *path, int backlog);

/* sendmsg of buf[0..len) with fd attached (SCM_RIGHTS); flags as for
 * sendmsg (MSG_NOSIGNAL is added). Returns the bytes sent or -1. The
 * caller still owns fd. */
ssize_t sbx_send_fd(int sock, const void *buf, size_t len, int fd, int flags);

/* recvmsg into buf[0..len) (flags as for recvmsg; MSG_CMSG_CLOEXEC is
 * added). *fd is the first descriptor that came with the bytes, close-on-
 * exec, or -1; any further ones are closed (one is all a peer may pass).
 * Returns the bytes read (0 at EOF) or -1, with *fd -1. */
ssize_t sbx_recv_fd(int sock, void *buf, size_t len, int *fd, int flags);

/* Connect a non-blocking, close-on-exec stream socket to the UNIX socket
 * `name`, resolved beneath the directory `dir` without following any
 * symlink (or /proc magic link) and without leaving dir. dir is the
 * caller's own (it is opened as given); name is the part a sandbox may
 * control (for the jail driver: its agent socket, in a directory that
 * root inside the sandbox can write). The entry must be a socket: the
 * connect goes through an O_PATH descriptor of that very inode, so a
 * symlink, or a rename between the check and the connect, can never
 * point it elsewhere.
 * Returns the connected fd, or -1 with errno: ELOOP (a symlink on the
 * way), EXDEV (name leaves dir), ENOTSOCK (not a socket), ENOENT,
 * ECONNREFUSED (nobody listening), EAGAIN (backlog full), ... */
int sbx_unix_connect_beneath(const char *dir, const char *name);

/* sbx_unix_connect_beneath(dirname(path), basename(path)): for a socket
 * whose directory is trusted and whose last component is not. */
int sbx_unix_connect_last(const char *path);

#endif
