/* The vm driver: each sandbox is a virtual machine (QEMU: KVM-less hosts
 * translate the guest's code, TCG) with its own kernel, its root the
 * image as a read-only erofs disk under an overlay whose upper layer is
 * the sandbox's own ext4 disk of its disk limit, and the agent as PID 1
 * listening on AF_VSOCK port VM_AGENT_PORT. The host side of vsock is
 * sandbox-vsockd's hybrid socket (vsockd/), which is sb->agent_socket:
 * the runner's dial (CONNECT 1024) reaches the agent unchanged. Guest RAM
 * is memory_mb, -smp is vcpus; QEMU, its backend and the supervisor run
 * in a cgroup the runner made (memory_mb + VM_OVERHEAD_MB). The supervisor
 * has a network namespace of its own: empty under deny-all (and the VM has
 * no NIC), the slot's veth bridged with QEMU's tap otherwise
 * (driver_vm_net.c). */
#include "driver_vm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rn_cgroup.h"
#include "rn_egress.h"
#include "rn_net.h"
#include "rn_runtime.h"
#include "rn_state.h"
#include "runner.h"
#include "sbx_fs.h"
#include "sbx_log.h"

#define VM_CG_TOP "sandbox"
/* What the guest kernel skips at boot, each a measured cost under TCG
 * (initcall_debug) that a sandbox has no use for: the jitter entropy
 * source's self-test (the pool is seeded before it runs), the signing keys
 * of modules (the initramfs's are not checked), BPF struct-ops and trace
 * tables, the crypto self-tests, the lockup watchdog, the TSC's and the
 * timer's checks against other clocks (QEMU's are one clock). */
#define VM_BOOT_FAST \
	"initcall_blacklist=jent_mod_init,load_system_certificate_list," \
	"bpf_tcp_ca_kfunc_init,bpf_dummy_struct_ops_init,trace_eval_init " \
	"cryptomgr.notests nowatchdog tsc=reliable no_timer_check"

struct vm_sb {
	char cg[RN_ID_MAX + 96];
	int slot;                   /* its veth addresses (allow-all), or -1 */
};

static struct vm_state *state_of(const struct rn_driver *d)
{
	return d->data;
}

/* ---- probe and init ---- */

static int find_exe(const char *env, const char *name, const char *beside, char *out,
		    size_t n, const char *hint, struct sbx_err *err)
{
	static const char *const dirs[] = { "/usr/bin", "/usr/local/bin", "/usr/sbin", NULL };
	const char *v = getenv(env);

	if (v && *v) {
		if (v[0] != '/' || access(v, X_OK) < 0)
			return sbx_err_set(err, ENOENT, "%s=%.200s is not an executable absolute path",
					   env, v);
		snprintf(out, n, "%s", v);
		return 0;
	}
	if (beside) {
		const char *slash = strrchr(beside, '/');
		if (slash && snprintf(out, n, "%.*s/%s", (int)(slash - beside), beside, name) < (int)n &&
		    access(out, X_OK) == 0)
			return 0;
	}
	for (int i = 0; dirs[i]; i++) {
		snprintf(out, n, "%s/%s", dirs[i], name);
		if (access(out, X_OK) == 0)
			return 0;
	}
	return sbx_err_set(err, ENOENT, "%s is not installed (%s)", name, hint);
}

static int check_host(const struct rn_driver *d, struct vm_state *vs, struct sbx_err *err)
{
	const char *cache = getenv("SANDBOX_VM_DIR");
	char p[PATH_MAX + 32];

	if (geteuid() != 0)
		return sbx_err_set(err, EPERM, "vm needs root (QEMU runs in the sandbox's cgroup)");
	if (d->r->cg_error[0])
		return sbx_err_set(err, ENOTSUP, "cgroups: %s", d->r->cg_error);
	if (find_exe("SANDBOX_QEMU", "qemu-system-x86_64", NULL, vs->qemu, sizeof(vs->qemu),
		     "mk/deps.sh installs qemu-system-x86", err) < 0 ||
	    find_exe("SANDBOX_VSOCKD", "sandbox-vsockd", d->r->agent_path, vs->vsockd,
		     sizeof(vs->vsockd), "the vsock backend is built beside the agent: make", err) < 0)
		return -1;
	for (const char *const *t = (const char *const[]){ "mkfs.erofs", "mkfs.ext4", "cpio", NULL };
	     *t; t++) {
		char dummy[PATH_MAX];
		if (find_exe("SANDBOX_VM_NONE", *t, NULL, dummy, sizeof(dummy),
			     "mk/deps.sh installs erofs-utils, e2fsprogs and cpio", err) < 0)
			return -1;
	}
	snprintf(vs->cache, sizeof(vs->cache), "%s", cache && *cache ? cache : "/var/cache/sandbox/vm");
	/* the uncompressed kernel when mk/vm-kernel.sh could take it out:
	 * QEMU boots it at its PVH entry, with no firmware setup and no
	 * decompression (a second of each boot under TCG) */
	if (snprintf(vs->kernel, sizeof(vs->kernel), "%s/kernel/current/vmlinux", vs->cache) >=
	    (int)sizeof(vs->kernel))
		return sbx_err_set(err, ENAMETOOLONG, "SANDBOX_VM_DIR too long");
	if (access(vs->kernel, R_OK) < 0)
		vs->kernel[strlen(vs->kernel) - 1] = 'z';   /* vmlinuz */
	if (access(vs->kernel, R_OK) < 0)
		return sbx_err_set(err, ENOENT, "no guest kernel at %s (mk/vm.sh extracts Debian's "
				   "cloud kernel)", vs->kernel);
	snprintf(p, sizeof(p), "%s/initrd.cpio", vs->cache);
	if (access(p, R_OK) < 0)
		return sbx_err_set(err, ENOENT, "no initramfs at %s (mk/vm.sh builds it)", p);
	return 0;
}

static int vm_probe(struct rn_driver *d, struct sbx_err *err)
{
	struct vm_state vs;

	return check_host(d, &vs, err);
}

/* The root disk of every image there is, built by a child of its own
 * while the runner goes on: building them in a create would hold the
 * runner's loop for seconds, and before listening would hold its start
 * (a runner restarted after an image rebuild was not up for minutes). A
 * create whose disk is not built yet builds it itself (vm_root_disk: each
 * builder writes its own temporary file and renames it into place). */
static void build_root_disks(struct rn_driver *d, struct vm_state *vs)
{
	DIR *dir;
	struct dirent *e;
	pid_t pid = fork();

	if (pid < 0) {
		sbx_warn("vm: root disks: fork: %s (each is built at its first create)",
			 strerror(errno));
		return;
	}
	if (pid > 0)
		return;   /* reaped as the runner's other unknown children are */
	/* nothing of the runner's: not its sockets, which a restarted runner
	 * must be able to bind again while this still runs */
	close_range(3, ~0u, 0);
	if (!(dir = opendir(d->r->image_dir)))
		_exit(0);
	while ((e = readdir(dir))) {
		char rootfs[PATH_MAX], disk[PATH_MAX];
		struct sbx_err err = { 0 };
		if (e->d_name[0] == '.' ||
		    rn_runtime_image(d->r, e->d_name, rootfs, sizeof(rootfs), &err) < 0)
			continue;
		if (vm_root_disk(vs, e->d_name, rootfs, disk, sizeof(disk), &err) < 0)
			sbx_warn("vm: image %s: %s", e->d_name, err.msg);
	}
	closedir(dir);
	_exit(0);
}

static int vm_init(struct rn_driver *d, struct sbx_err *err)
{
	struct runner *r = d->r;
	struct vm_state *vs = calloc(1, sizeof(*vs));

	if (!vs)
		return sbx_err_set(err, ENOMEM, "out of memory");
	if (check_host(d, vs, err) < 0)
		goto fail;
	if (rn_runtime_find_loader(r->runtime_dir, vs->loader, sizeof(vs->loader)) < 0 &&
	    rn_runtime_prepare(r->agent_path, r->runtime_dir, vs->loader, sizeof(vs->loader),
			       err) < 0)
		goto fail;
	if (vm_runner_initrd(vs, r->state_dir, r->runtime_dir, err) < 0)
		goto fail;
	/* KVM when it runs guests, else TCG with a bounded translation cache;
	 * microvm when QEMU has it */
	if (vm_accel_choose(vs, err) < 0)
		goto fail;
	snprintf(d->accel, sizeof(d->accel), "%.*s", (int)strcspn(vs->accel, ","), vs->accel);
	snprintf(d->machine, sizeof(d->machine), "%s", vs->machine);
	snprintf(vs->cg_parent, sizeof(vs->cg_parent), VM_CG_TOP "/vm_%s", r->name);
	build_root_disks(d, vs);
	d->data = vs;
	sbx_info("vm driver: %s (%s, %s, the guest's TSC %ld kHz), kernel %s, backend %s", vs->qemu,
		 vs->accel, vs->machine, vs->tsc_khz, vs->kernel, vs->vsockd);
	return 0;
fail:
	free(vs);
	return -1;
}

/* ---- start ---- */

struct vm_args {
	struct vm_launch l;
	char vu[PATH_MAX + 16], uds[PATH_MAX + 16], mem[64], memsz[32], smp[32];
	char chardev[PATH_MAX + 48], root[PATH_MAX + 64], scratch[PATH_MAX + 64];
	char append[704], serial[PATH_MAX + 32], qmp[PATH_MAX + 64], rootdisk[PATH_MAX];
	char disk[PATH_MAX + 16], seed[PATH_MAX + 16], netdev[64];
};

static void plan(struct vm_args *a, const struct vm_state *vs, const struct rn_sandbox *sb,
		 int slot)
{
	int i = 0;
	char **q = a->l.qemu_argv, net[64], machine[64] = "";
	int mmio = !strcmp(vs->machine, "microvm");

	snprintf(a->l.dir, sizeof(a->l.dir), "%s", sb->dir);
	snprintf(a->vu, sizeof(a->vu), "%s/vu.sock", sb->dir);
	snprintf(a->uds, sizeof(a->uds), "%s/v.sock", sb->dir);
	a->l.vsockd_argv[0] = (char *)vs->vsockd;
	a->l.vsockd_argv[1] = "--vhost-user";
	a->l.vsockd_argv[2] = a->vu;
	a->l.vsockd_argv[3] = "--uds";
	a->l.vsockd_argv[4] = a->uds;
	a->l.vsockd_argv[5] = "--ready-fd";
	a->l.vsockd_argv[6] = "3";
	/* what the guest sends is parsed without root */
	a->l.vsockd_argv[7] = "--user";
	a->l.vsockd_argv[8] = "65534:65534";
	/* connect to any other port: the agent's forward, through its one
	 * listener (it answers the CONNECT line as on a UNIX socket) */
	a->l.vsockd_argv[9] = "--relay-port";
	a->l.vsockd_argv[10] = "1024";
	a->l.vsockd_argv[11] = NULL;

	snprintf(a->memsz, sizeof(a->memsz), "%lld", (long long)sb->spec.memory_mb);
	snprintf(a->mem, sizeof(a->mem), "memory-backend-memfd,id=mem,size=%lldM,share=on",
		 (long long)sb->spec.memory_mb);
	snprintf(a->smp, sizeof(a->smp), "%lld", (long long)(sb->spec.vcpus > 0 ? sb->spec.vcpus : 1));
	snprintf(a->chardev, sizeof(a->chardev), "socket,id=vu,path=%s", a->vu);
	/* microvm's disks are virtio-mmio devices of their own (-device) */
	snprintf(a->root, sizeof(a->root), "file=%s,%s,format=raw,readonly=on", a->rootdisk,
		 mmio ? "id=root,if=none" : "if=virtio");
	snprintf(a->scratch, sizeof(a->scratch), "file=%s,%s,format=raw", a->disk,
		 mmio ? "id=scratch,if=none" : "if=virtio");
	snprintf(a->serial, sizeof(a->serial), "file:%s/console.log", sb->dir);
	snprintf(a->qmp, sizeof(a->qmp), "unix:%s/qmp.sock,server=on,wait=off", sb->dir);
	vm_net_cmdline(slot, net, sizeof(net));
	/* init loads the machine's transport; microvm has no PCI bus to look
	 * for, and a microvm guest under TCG is told its TSC's rate, which it
	 * has no clock to measure against */
	if (mmio && vs->tsc_khz > 0)
		snprintf(machine, sizeof(machine), " sbx.machine=microvm pci=off tsc_early_khz=%ld",
			 vs->tsc_khz);
	else if (mmio)
		snprintf(machine, sizeof(machine), " sbx.machine=microvm pci=off");
	/* the pids limit is the guest's own (its init puts the agent in a
	 * cgroup with it): the host's processes are QEMU's few */
	snprintf(a->append, sizeof(a->append),
		 "console=ttyS0 quiet panic=-1 " VM_BOOT_FAST " sbx.loader=%s sbx.pids=%lld%s%s",
		 vs->loader, (long long)(sb->spec.pids > 0 ? sb->spec.pids : 0), net, machine);
	snprintf(a->netdev, sizeof(a->netdev), "tap,id=n0,ifname=%s,script=no,downscript=no",
		 VM_TAP);
	q[i++] = (char *)vs->qemu;
	/* microvm: the ISA serial port, the RTC (the guest's wall clock at
	 * boot), ACPI for the power button and power-off (its GED), no
	 * option ROMs to run */
	q[i++] = "-M"; q[i++] = mmio ? "microvm,x-option-roms=off,rtc=on,acpi=on" : "q35";
	q[i++] = "-accel"; q[i++] = (char *)vs->accel;
	q[i++] = "-cpu"; q[i++] = "max";
	q[i++] = "-m"; q[i++] = a->memsz;
	q[i++] = "-smp"; q[i++] = a->smp;
	q[i++] = "-nodefaults"; q[i++] = "-no-user-config";
	q[i++] = "-display"; q[i++] = "none";
	q[i++] = "-serial"; q[i++] = a->serial;
	q[i++] = "-qmp"; q[i++] = a->qmp;
	q[i++] = "-object"; q[i++] = a->mem;
	q[i++] = "-machine"; q[i++] = "memory-backend=mem";
	q[i++] = "-chardev"; q[i++] = a->chardev;
	q[i++] = "-device"; q[i++] = mmio ? "vhost-user-vsock-device,chardev=vu" :
					    "vhost-user-vsock-pci,chardev=vu";
	/* the root is vda, the sandbox's disk vdb: the guest's init says so */
	q[i++] = "-drive"; q[i++] = a->root;
	if (mmio) {
		q[i++] = "-device"; q[i++] = "virtio-blk-device,drive=root";
	}
	q[i++] = "-drive"; q[i++] = a->scratch;
	if (mmio) {
		q[i++] = "-device"; q[i++] = "virtio-blk-device,drive=scratch";
	}
	if (slot >= 0) {
		q[i++] = "-netdev"; q[i++] = a->netdev;
		q[i++] = "-device"; q[i++] = mmio ? "virtio-net-device,netdev=n0" :
						    "virtio-net-pci,netdev=n0";
	}
	q[i++] = "-kernel"; q[i++] = (char *)vs->kernel;
	q[i++] = "-initrd"; q[i++] = (char *)vs->initrd;
	q[i++] = "-append"; q[i++] = a->append;
	/* a guest kernel's panic ends QEMU with status 1 (pvpanic: the ISA
	 * device on microvm, which ACPI describes), never looks like the
	 * guest's own power-off; a reset ends it too */
	q[i++] = "-device"; q[i++] = mmio ? "pvpanic" : "pvpanic-pci";
	q[i++] = "-action"; q[i++] = "panic=exit-failure";
	q[i++] = "-no-reboot";
	q[i] = NULL;
}

static int make_cgroup(const struct rn_sandbox *sb, const char *cg, struct sbx_err *err)
{
	struct rn_spec s = sb->spec;

	s.memory_mb = sb->spec.memory_mb + VM_OVERHEAD_MB;
	s.pids = VM_HOST_PIDS;
	return rn_cgroup_create(&sb->drv->r->cg, cg, &s, err);
}

/* the slot's egress and veth, before the slot is free for another */
static void release_net(struct rn_sandbox *sb, struct vm_sb *vb)
{
	if (vb->slot < 0)
		return;
	rn_egress_detach(sb);
	rn_net_release(vb->slot);
	rn_slot_free(&state_of(sb->drv)->slots, vb->slot);
	vb->slot = -1;
}

static void undo(struct rn_sandbox *sb, struct vm_sb *vb, int cg_made)
{
	if (sb->pid > 0) {
		kill(-sb->pid, SIGKILL);
		kill(sb->pid, SIGKILL);
		while (waitpid(sb->pid, NULL, 0) < 0 && errno == EINTR)
			;
		sb->pid = 0;
	}
	release_net(sb, vb);
	if (cg_made) {
		for (int i = 0; i < 200; i++) {
			rn_cgroup_kill(&sb->drv->r->cg, vb->cg);
			if (rn_cgroup_remove(&sb->drv->r->cg, vb->cg, VM_CG_TOP) != 1)
				break;
			usleep(5000);
		}
	}
	free(vb);
	sb->drv_data = NULL;
}

static int vm_start(struct rn_sandbox *sb, struct sbx_err *err)
{
	struct vm_state *vs = state_of(sb->drv);
	struct vm_args *a = calloc(1, sizeof(*a));
	struct vm_sb *vb = calloc(1, sizeof(*vb));
	char rootfs[PATH_MAX], ns = 0;
	int go[2] = { -1, -1 }, cg_made = 0;
	pid_t pid;

	if (!a || !vb) {
		free(a);
		free(vb);
		return sbx_err_set(err, ENOMEM, "out of memory");
	}
	sb->drv_data = vb;
	sb->pid = 0;
	vb->slot = -1;
	snprintf(vb->cg, sizeof(vb->cg), "%s/%s", vs->cg_parent, sb->id);
	/* the slot is the veth's addresses, one numbering with the jail's */
	if (sb->spec.network != RN_NET_DENY_ALL && (vb->slot = rn_slot_alloc(&vs->slots)) < 0) {
		sbx_err_set(err, EAGAIN, "no free network slot on this host");
		goto fail;
	}
	snprintf(a->disk, sizeof(a->disk), "%s/disk.img", sb->dir);
	snprintf(a->seed, sizeof(a->seed), "%s/seed", sb->dir);
	if (rn_runtime_image(sb->drv->r, sb->spec.image, rootfs, sizeof(rootfs), err) < 0 ||
	    vm_root_disk(vs, sb->spec.image, rootfs, a->rootdisk, sizeof(a->rootdisk), err) < 0 ||
	    rn_state_save(sb, "vm", vb->slot, err) < 0 ||
	    vm_scratch_disk(a->disk, sb->spec.disk_mb, a->seed, rootfs, &sb->spec, err) < 0)
		goto fail;
	plan(a, vs, sb, vb->slot);
	if (make_cgroup(sb, vb->cg, err) < 0)
		goto fail;
	cg_made = 1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, go) < 0) {
		sbx_err_sys(err, "socketpair");
		goto fail;
	}
	pid = fork();
	if (pid < 0) {
		sbx_err_sys(err, "fork for the vm supervisor");
		goto fail;
	}
	if (pid == 0) {
		close(go[1]);
		a->l.go_fd = go[0];
		a->l.keep_stderr = sb->drv->agent_stderr;
		vm_supervise(&a->l);
	}
	sb->pid = pid;
	close(go[0]);
	go[0] = -1;
	/* the supervisor is in its own network namespace before anything is
	 * done to the namespace of its pid */
	while (read(go[1], &ns, 1) < 0 && errno == EINTR)
		;
	if (ns != 'n') {
		sbx_err_set(err, EIO, "the vm supervisor could not make its network namespace");
		goto fail;
	}
	if (rn_cgroup_attach(&sb->drv->r->cg, vb->cg, pid, err) < 0 ||
	    rn_state_save(sb, "vm", vb->slot, err) < 0 ||
	    (vb->slot >= 0 && vm_net_attach(sb, vb->slot, err) < 0) ||
	    send(go[1], "g", 1, MSG_NOSIGNAL) != 1) {
		if (!err->msg[0])
			sbx_err_sys(err, "start the vm supervisor");
		goto fail;
	}
	close(go[1]);
	snprintf(sb->agent_socket, sizeof(sb->agent_socket), "%.4000s", a->uds);
	free(a);
	return 0;
fail:
	for (int i = 0; i < 2; i++)
		if (go[i] >= 0)
			close(go[i]);
	free(a);
	undo(sb, vb, cg_made);
	return -1;
}

/* stop: the supervisor powers the guest down, and kills QEMU if it does
 * not go within VM_POWERDOWN_MS; the cgroup is the backstop in cleanup */
static void vm_kill(struct rn_sandbox *sb)
{
	vm_thaw(sb);   /* a paused one: its frozen supervisor takes no signal */
	if (sb->pid > 0 && !sb->reaped)
		kill(sb->pid, SIGTERM);
}

static int sweep(const struct rn_cgroup *cg, const char *path)
{
	rn_cgroup_kill(cg, path);
	return rn_cgroup_remove(cg, path, VM_CG_TOP);
}

/* The last lines of a file of the sandbox's dir (the guest's console,
 * QEMU's log) into the runner's log, once: a VM that ended by itself takes
 * them with its dir, and they say why (a panic, init's failure). A guest
 * kernel's report (an oops, a BUG, a panic) is logged from its first line
 * too: the end of the console is only its last registers. */
#define VM_TAIL_READ 16384
#define VM_TAIL_LOG 640
#define VM_REPORT_LOG 1500
static void log_tail(const struct rn_sandbox *sb, const char *name, const char *what)
{
	static const char *const report[] = { "BUG:", "Oops", "general protection",
					       "Kernel panic", NULL };
	char p[PATH_MAX + 32], *buf, *first = NULL;
	int fd;
	off_t size;
	ssize_t n;

	snprintf(p, sizeof(p), "%s/%s", sb->dir, name);
	if ((fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return;
	size = lseek(fd, 0, SEEK_END);
	buf = malloc(VM_TAIL_READ + 1);
	n = buf && size > 0 ? pread(fd, buf, VM_TAIL_READ, size > VM_TAIL_READ ?
				    size - VM_TAIL_READ : 0) : 0;
	close(fd);
	if (n <= 0) {
		free(buf);
		return;
	}
	buf[n] = 0;
	for (char *c = buf; c < buf + n; c++)
		if (*c == '\n' || *c == '\r' || (unsigned char)*c < 0x20)
			*c = *c == '\n' ? '|' : ' ';
	for (int i = 0; report[i]; i++) {
		char *at = strstr(buf, report[i]);
		if (at && (!first || at < first))
			first = at;
	}
	if (first && buf + n - first > VM_TAIL_LOG)
		sbx_warn("%s: %s; its guest kernel's report in its %s: %.*s",
			 sb->id, what, name, VM_REPORT_LOG, first);
	sbx_warn("%s: %s; the end of its %s: %s", sb->id, what, name,
		 n > VM_TAIL_LOG ? buf + n - VM_TAIL_LOG : buf);
	free(buf);
}

/* How the VM ended, from its supervisor's exit status (vm_supervise):
 * logged for a stop, the sandbox's error when it ended on its own. */
static void explain_end(struct rn_sandbox *sb)
{
	int st = sb->wait_status, code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	const char *why;

	switch (code) {
	case VM_END_POWEROFF: why = "the guest powered off"; break;
	case VM_END_QEMU: why = "QEMU ended with an error (a guest kernel panic does so)"; break;
	case VM_END_BACKEND: why = "its vsock backend (sandbox-vsockd) ended"; break;
	case VM_END_KILLED: why = "the guest did not power off in time and was killed"; break;
	case VM_END_QEMU_SIGNAL: why = "QEMU crashed (it died of a signal)"; break;
	default: why = "its supervisor ended"; break;
	}
	if (sb->reason == RN_REASON_ERROR && sb->oom_kills <= 0) {
		/* the runner's own stop for an error (its agent never
		 * answered) keeps that error: how the VM then ended is the
		 * lesser news, and would hide it */
		const char *what = sb->stop_asked ? "stopped for an error" : "the VM ended by itself";
		if (sb->stop_asked)
			sbx_warn("%s: %s; then the VM ended: %s", sb->id, sb->error, why);
		else
			snprintf(sb->error, sizeof(sb->error), "the VM ended: %s", why);
		log_tail(sb, "console.log", what);
		log_tail(sb, "qemu.log", what);
	} else
		sbx_info("%s: the VM ended: %s", sb->id, why);
}

static int vm_cleanup(struct rn_sandbox *sb, struct sbx_err *err)
{
	struct vm_sb *vb = sb->drv_data;

	if (vb && sweep(&sb->drv->r->cg, vb->cg) == 1)
		return 1;
	if (vb && sb->reaped)
		explain_end(sb);
	if (vb)
		release_net(sb, vb);
	if (sb->reason == RN_REASON_ERROR && sb->oom_kills > 0) {
		sb->reason = RN_REASON_OOM;
		snprintf(sb->error, sizeof(sb->error), "the VM went over its memory limit "
			 "(%lld MiB + %d MiB for QEMU) and was killed",
			 (long long)sb->spec.memory_mb, VM_OVERHEAD_MB);
	}
	if (sbx_rmtree(sb->dir) < 0)
		return sbx_err_sys(err, "remove %s", sb->dir);
	free(vb);
	sb->drv_data = NULL;
	return 0;
}

static const char *vm_cgroup(const struct rn_sandbox *sb)
{
	const struct vm_sb *vb = sb->drv_data;
	return vb ? vb->cg : NULL;
}

static long vm_oom_kills(struct rn_sandbox *sb)
{
	struct vm_sb *vb = sb->drv_data;
	return vb ? rn_cgroup_oom_kills(&sb->drv->r->cg, vb->cg) : -1;
}

static long vm_pids_hits(struct rn_sandbox *sb)
{
	(void)sb;
	return -1;   /* processes inside are the guest kernel's to count */
}

/* ---- reconciliation after a crash ---- */

static void reap_one(struct rn_driver *d, const char *id)
{
	char path[RN_ID_MAX + 96];

	snprintf(path, sizeof(path), VM_CG_TOP "/vm_%s/%s", d->r->name, id);
	for (int i = 0; i < 400 && sweep(&d->r->cg, path) == 1; i++)
		usleep(5000);
}

static void vm_reconcile_dir(struct rn_driver *d, const char *id, const char *dir)
{
	rn_state_kill(dir);
	reap_one(d, id);
	if (sbx_rmtree(dir) < 0)
		sbx_warn("cannot remove %s: %s", dir, strerror(errno));
}

static void reap_cb(const char *id, void *arg)
{
	reap_one(arg, id);
}

static void vm_reconcile(struct rn_driver *d)
{
	char parent[64], prefix[40];

	snprintf(parent, sizeof(parent), VM_CG_TOP "/vm_%s", d->r->name);
	snprintf(prefix, sizeof(prefix), "sbx_%s_", d->r->name);
	rn_cgroup_each(&d->r->cg, parent, prefix, reap_cb, d);
	rn_cgroup_remove(&d->r->cg, parent, VM_CG_TOP);
}

/* the guest is up: its supervisor boots it no more (vm_supervise); a
 * first boot that died is said once, with its console's report */
static void vm_ready(struct rn_sandbox *sb)
{
	char p[PATH_MAX + 32];

	if (sb->pid > 0)
		kill(sb->pid, VM_SIG_READY);
	snprintf(p, sizeof(p), "%s/" VM_FIRST_CONSOLE, sb->dir);
	if (access(p, F_OK) == 0) {
		sbx_warn("%s: its guest died before its agent answered and was booted once more",
			 sb->id);
		log_tail(sb, VM_FIRST_CONSOLE, "its first boot died");
	}
}

const struct rn_driver_ops rn_driver_vm = {
	.name = "vm",
	.probe = vm_probe,
	.init = vm_init,
	.start = vm_start,
	.kill = vm_kill,
	.cleanup = vm_cleanup,
	.oom_kills = vm_oom_kills,
	.cgroup = vm_cgroup,
	.pids_hits = vm_pids_hits,
	.reconcile_dir = vm_reconcile_dir,
	.reconcile = vm_reconcile,
	.ready = vm_ready,
	/* no NIC: connect and previews go through the agent's forward */
	.open_port = NULL,
	/* the cgroup frozen, memory kept (driver_vm_pause.c) */
	.pause = vm_pause_op,
	.resume = vm_resume_op,
	/* a kernel boots first, translated instruction by instruction
	 * without KVM, on a host that may be busy */
	.ready_timeout_ms = 90000,
};
