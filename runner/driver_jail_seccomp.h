/* The jail's seccomp policy "jail-default-v1" (docs/seccomp.md): two
 * stacked filters, an allowlist built on Docker's default profile and an
 * argument denylist, native architecture only.
 *
 * jail_seccomp_compile() once in the parent, then jail_seccomp_load() in
 * each child: the child only makes two prctl() calls and allocates
 * nothing, so it is safe after fork() of a threaded process or in a
 * CLONE_VM child, and costs microseconds instead of a policy build. The
 * caller sets PR_SET_NO_NEW_PRIVS first and loads right before exec;
 * every descendant inherits the filters. */
#ifndef JAIL_SECCOMP_H
#define JAIL_SECCOMP_H

#include "sbx_err.h"

#define JAIL_SECCOMP_POLICY "jail-default-v1"

/* Number of stacked filters; index 0 (the allowlist) is loaded first. */
#define JAIL_SECCOMP_NFILTERS 2

/* Profile flags for jail_seccomp_compile. */
enum {
	/* Also allow ptrace, process_vm_readv/writev and personality
	 * ADDR_NO_RANDOMIZE, for strace and gdb. Never the default. */
	JAIL_SECCOMP_DEBUG = 1u << 0,
	/* Filter A's default becomes LOG (allow and log to the kernel log)
	 * instead of ENOSYS: for validating a workload against the
	 * allowlist. Never in production. */
	JAIL_SECCOMP_LOG = 1u << 1,
};

struct sock_filter;

struct jail_seccomp_prog {
	struct sock_filter *insns[JAIL_SECCOMP_NFILTERS];
	unsigned short len[JAIL_SECCOMP_NFILTERS];
	/* Syscall names of the policy that this libseccomp/architecture does
	 * not know (skipped: the kernel answers them ENOSYS). */
	int skipped;
};

/* Build the policy into BPF programs owned by prog (free them with
 * jail_seccomp_free). flags: JAIL_SECCOMP_DEBUG, JAIL_SECCOMP_LOG or 0. */
int jail_seccomp_compile(struct jail_seccomp_prog *prog, unsigned flags,
			 struct sbx_err *err);

/* Load the compiled filters into the calling thread, A then B. Refuses
 * (EPERM) unless PR_SET_NO_NEW_PRIVS is already set. Allocates nothing;
 * async-signal-safe. */
int jail_seccomp_load(const struct jail_seccomp_prog *prog, struct sbx_err *err);

void jail_seccomp_free(struct jail_seccomp_prog *prog);

#endif
