/* UNIX-socket connects shared by the runner and the gateway. */
#ifndef SBX_NET_H
#define SBX_NET_H

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
