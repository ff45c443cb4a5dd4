/* The vm driver: each sandbox is a QEMU virtual machine with its own
 * kernel (Debian's cloud kernel, mk/vm-kernel.sh), reached over
 * virtio-vsock through sandbox-vsockd (vsockd/), whose hybrid socket is
 * the sandbox's agent socket. driver_vm.c is the driver's table,
 * driver_vm_sup.c the supervisor (the runner's child that owns vsockd and
 * QEMU), driver_vm_disk.c the disks and the runner's initramfs. */
#ifndef DRIVER_VM_H
#define DRIVER_VM_H

#include <limits.h>
#include <signal.h>
#include <stdint.h>

#include "rn_slot.h"
#include "rn_spec.h"
#include "sbx_err.h"

#define VM_AGENT_PORT 1024
/* what QEMU itself may use beyond the guest's RAM: the translation cache
 * (tb-size, TCG) and its own heap, threads and device state */
#define VM_TB_MB 16
#define VM_OVERHEAD_MB 160
#define VM_HOST_PIDS 128

/* The driver's state (rn_driver.data). */
struct vm_state {
	char qemu[PATH_MAX];
	char vsockd[PATH_MAX];
	char cache[PATH_MAX];       /* SANDBOX_VM_DIR */
	char kernel[PATH_MAX];
	char initrd[PATH_MAX];      /* this runner's: base + agent runtime */
	char loader[64];
	char cg_parent[64];
	char accel[64];
	char machine[16];           /* "microvm" or "q35" (driver_vm_accel.c) */
	long tsc_khz;               /* the host's TSC rate: a microvm guest's under TCG */
	struct rn_slots slots;      /* the veth addresses of allow-all VMs */
};

/* allow-all and allow-lists (driver_vm_net.c): the bridge and the tap of
 * QEMU's virtio-net in the supervisor's network namespace */
#define VM_BRIDGE "br0"
#define VM_TAP "tap0"
/* " sbx.net=ADDR/30,GATEWAY" for the guest's init, "" for slot -1 */
void vm_net_cmdline(int slot, char *out, size_t n);
/* Give the supervisor's (sb->pid's) namespace the slot's veth, bridged
 * with VM_TAP, and attach the slot's egress (rn_egress_attach). 0 or -1. */
struct rn_sandbox;
int vm_net_attach(struct rn_sandbox *sb, int slot, struct sbx_err *err);

/* One start's argv, built by driver_vm.c, run by vm_supervise. */
struct vm_launch {
	char dir[PATH_MAX];
	char *vsockd_argv[12];
	char *qemu_argv[72];
	int go_fd;                  /* a socket: we write 'n' once in our own network
				     * namespace, read 'g' once the runner put us in
				     * the cgroup (and gave the namespace its veth) */
	int keep_stderr;
};

/* The supervisor, in the runner's forked child: waits for go_fd, starts
 * sandbox-vsockd and (once it listens) QEMU, and lives as long as both:
 * when either ends the other is ended and the supervisor exits with one of
 * VM_END_*. SIGTERM: ACPI power-down (the agent, the guest's PID 1, powers
 * the guest off), pressed again each second (a press before the agent
 * opened the button is lost), then after VM_POWERDOWN_MS SIGKILL. */
#define VM_POWERDOWN_MS 10000
/* A guest that dies before its agent first answered (the runner sends
 * VM_SIG_READY then) is booted once more, with a new backend: nothing of
 * the sandbox's has run in it yet. Under TCG here about 1 boot in 40
 * ended in the guest kernel's early init (a double fault in its
 * allocator), on q35 and microvm alike. */
#define VM_SIG_READY SIGUSR1
#define VM_BOOT_TRIES 2
#define VM_FIRST_CONSOLE "console.1.log"   /* the console of a boot that died */
enum vm_end {
	VM_END_POWEROFF = 0,    /* QEMU exited 0: the guest powered off */
	VM_END_FAILED = 1,      /* the supervisor could not start the two */
	VM_END_QEMU = 2,        /* QEMU failed: a guest panic (pvpanic) or its error */
	VM_END_BACKEND = 3,     /* sandbox-vsockd ended first */
	VM_END_KILLED = 4,      /* QEMU killed after the power-down bound */
	VM_END_QEMU_SIGNAL = 5, /* QEMU died of a signal no one here sent: it crashed */
};
void vm_supervise(struct vm_launch *l) __attribute__((noreturn));

/* vs->accel: "kvm" when QEMU runs a guest with KVM here (tried once per
 * host boot and QEMU binary, driver_vm_accel.c), else TCG with tb-size;
 * vs->machine: microvm when QEMU has it (and, under TCG, the host's TSC
 * rate is known: vs->tsc_khz), else q35; SANDBOX_VM_MACHINE forces one.
 * -1 with err only for a SANDBOX_VM_MACHINE that cannot be had. */
int vm_accel_choose(struct vm_state *vs, struct sbx_err *err);
/* 1 when the guest kernel boots under KVM here (driver_vm_kvm.c) */
int vm_kvm_boots(const char *qemu, const char *kernel);

/* The read-only root disk of the image at rootfs: an erofs image built
 * once under <cache>/images/<image>.erofs and rebuilt when the image's
 * stamp (rootfs/.sandbox-image) changes. out: its path. */
int vm_root_disk(const struct vm_state *vs, const char *image, const char *rootfs,
		 char *out, size_t n, struct sbx_err *err);

/* A fresh ext4 disk of mb MiB at path (sparse) holding meta/env, the
 * sandbox's env for the guest's init (made in the dir seed, then removed),
 * and with a network the egress CA's trust store in the overlay's upper
 * layer (upper/etc/ssl/certs: the image's at rootfs with the CA). */
int vm_scratch_disk(const char *path, int64_t mb, const char *seed, const char *rootfs,
		    const struct rn_spec *spec, struct sbx_err *err);

/* <state>/vm/initrd.cpio: the base initramfs (<cache>/initrd.cpio,
 * mk/vm-initramfs.sh) with the agent runtime appended at /runtime. */
int vm_runner_initrd(struct vm_state *vs, const char *state_dir, const char *runtime_dir,
		     struct sbx_err *err);

/* Run argv, wait for it; 0 when it exited 0, else -1 with err naming it
 * and the last line of its output. */
int vm_run(char *const argv[], struct sbx_err *err);

/* Pause and resume (rn_driver_ops.pause, .resume): the agent ends its
 * connections (`paused`), then the sandbox's cgroup is frozen, QEMU and its
 * backend with it; resume thaws it. vm_thaw: thaw before a stop (a frozen
 * supervisor takes no SIGTERM). driver_vm_pause.c. */
struct rn_sandbox;
int vm_pause_op(struct rn_sandbox *sb, struct sbx_err *err);
int vm_resume_op(struct rn_sandbox *sb, struct sbx_err *err);
void vm_thaw(struct rn_sandbox *sb);

#endif
