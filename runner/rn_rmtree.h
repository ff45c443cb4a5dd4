/* rm -rf of a runner-owned tree (a sandbox's state dir, the runtime dir)
 * that never follows a symlink and never crosses into a mount: any driver's
 * cleanup and reconcile use it on what a sandbox could write into. */
#ifndef RN_RMTREE_H
#define RN_RMTREE_H

/* 0 (also when path is absent) or -1 with errno. */
int rn_rmtree(const char *path);

#endif
