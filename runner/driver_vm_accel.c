/* How the vm driver's QEMU runs guests: the accelerator and the machine.
 *
 * Accelerator: KVM when this host runs guests with it, TCG (translation,
 * with a bounded cache) otherwise. A /dev/kvm that opens is not yet a KVM
 * that runs guests: a nested host whose KVM refuses MSRs QEMU sets makes
 * QEMU abort at its first vCPU reset, and a host whose /dev/kvm is
 * kvm-pvm (a paravirtual KVM inside a VM without nested virtualization)
 * runs real-mode code but hangs an ordinary Linux guest before its first
 * line. So our own guest kernel is booted with KVM (driver_vm_kvm.c);
 * anything but its clean end is TCG.
 *
 * Machine: microvm (virtio-mmio devices, no PCI bus to enumerate, small
 * ACPI tables: some 0.5 s less QEMU CPU per boot under TCG) when this QEMU
 * has it, else q35. microvm has no HPET and no ACPI PM timer, the clocks a
 * kernel measures its TSC against: under KVM the guest reads the TSC's
 * rate from kvmclock, under TCG the guest's TSC is the host's (QEMU reads
 * the host's counter), so the runner measures the host's rate and gives it
 * to the guest kernel (tsc_early_khz=); a host whose TSC does not tick at
 * a constant rate gets q35. SANDBOX_VM_MACHINE=q35|microvm forces one.
 *
 * The tries' answers are kept in VM_ACCEL_CACHE for that QEMU binary (its
 * size and mtime), so a runner's start pays for them once per host boot. */
#include "driver_vm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sbx_log.h"

#define VM_ACCEL_CACHE "/run/sandbox/vm-accel"

/* QEMU starts a paused machine of these flags and quits: 0 it can */
static int qemu_runs(const char *qemu, const char *flags, const char *what)
{
	char line[512];
	char *argv[] = { "/bin/sh", "-c", line, (char *)qemu, NULL };
	struct sbx_err err = { 0 };

	snprintf(line, sizeof(line),
		 "echo quit | timeout 60 \"$0\" %s -cpu max -m 64 -nodefaults -no-user-config "
		 "-display none -S -monitor stdio", flags);
	if (vm_run(argv, &err) == 0)
		return 1;
	sbx_info("vm: QEMU cannot run %s here (%s)", what, err.msg);
	return 0;
}

static int kvm_runs_guests(const char *qemu, const char *kernel)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return 0;
	close(fd);
	return vm_kvm_boots(qemu, kernel);
}

/* the host's TSC ticks at one rate whatever the CPU's clock and sleep
 * state: what a guest may be told once for its whole life */
static int tsc_constant(void)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[4096];
	int ok = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5)) {
			ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
			break;
		}
	fclose(f);
	return ok;
}

#if defined(__x86_64__)
static uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* one reading of the TSC at a CLOCK_MONOTONIC_RAW instant: the tightest
 * of a few brackets (a bracket the scheduler split is wide) */
static int tsc_at(uint64_t *tsc, int64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 64; i++) {
		struct timespec t;
		uint64_t a = rdtsc(), b;
		clock_gettime(CLOCK_MONOTONIC_RAW, &t);
		b = rdtsc();
		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
		}
	}
	/* a bracket of 100000 ticks or more (some 40 us) on every try: no
	 * reading to trust */
	return best < 100000 ? 0 : -1;
}

/* the host's TSC rate in kHz, measured over 100 ms; 0 when unknown */
static long tsc_khz(void)
{
	uint64_t t0, t1;
	int64_t n0, n1;
	struct timespec pause = { 0, 100 * 1000000 };

	if (!tsc_constant() || tsc_at(&t0, &n0) < 0)
		return 0;
	while (nanosleep(&pause, &pause) < 0 && errno == EINTR)
		;
	if (tsc_at(&t1, &n1) < 0 || n1 - n0 < 50000000 || t1 <= t0)
		return 0;
	return (long)((double)(t1 - t0) * 1e6 / (double)(n1 - n0) + 0.5);
}
#else
static long tsc_khz(void)
{
	return 0;
}
#endif

/* the cache's line: "boot <qemu's size> <mtime> <kernel's size> <mtime>
 * kvm|tcg microvm|q35\n" */
static int cache_read(const char *key, int *kvm, int *microvm)
{
	char line[128] = "", acc[8], mach[16];
	int fd = open(VM_ACCEL_CACHE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, line, sizeof(line) - 1);
	line[n > 0 ? n : 0] = 0;
	close(fd);
	if (strncmp(line, key, strlen(key)) ||
	    sscanf(line + strlen(key), "%7s %15s", acc, mach) != 2)
		return -1;   /* another QEMU, or a line of an older runner */
	*kvm = !strcmp(acc, "kvm");
	*microvm = !strcmp(mach, "microvm");
	return 0;
}

static void cache_write(const char *key, int kvm, int microvm)
{
	int fd;

	mkdir("/run/sandbox", 0755);
	fd = open(VM_ACCEL_CACHE ".tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return;
	dprintf(fd, "%s%s %s\n", key, kvm ? "kvm" : "tcg", microvm ? "microvm" : "q35");
	close(fd);
	rename(VM_ACCEL_CACHE ".tmp", VM_ACCEL_CACHE);
}

int vm_accel_choose(struct vm_state *vs, struct sbx_err *err)
{
	const char *force = getenv("SANDBOX_VM_MACHINE");
	struct stat st, kst;
	char key[160];
	int kvm = 0, microvm = 0;

	if (force && *force && strcmp(force, "q35") && strcmp(force, "microvm"))
		return sbx_err_set(err, EINVAL, "SANDBOX_VM_MACHINE=%.40s: q35 or microvm", force);
	if (stat(vs->qemu, &st) < 0)
		st.st_size = st.st_mtime = 0;
	if (stat(vs->kernel, &kst) < 0)
		kst.st_size = kst.st_mtime = 0;
	/* "boot": KVM tried by a guest's boot (older runners' lines, of a
	 * paused machine, are tried again) */
	snprintf(key, sizeof(key), "boot %lld %lld %lld %lld ", (long long)st.st_size,
		 (long long)st.st_mtime, (long long)kst.st_size, (long long)kst.st_mtime);
	if (cache_read(key, &kvm, &microvm) < 0) {
		kvm = kvm_runs_guests(vs->qemu, vs->kernel);
		microvm = qemu_runs(vs->qemu, kvm ? "-accel kvm -M microvm" : "-accel tcg -M microvm",
				    "microvm: q35");
		cache_write(key, kvm, microvm);
	}
	if (kvm)
		snprintf(vs->accel, sizeof(vs->accel), "kvm");
	else
		snprintf(vs->accel, sizeof(vs->accel), "tcg,tb-size=%d", VM_TB_MB);
	vs->tsc_khz = 0;
	if (force && *force)
		microvm = !strcmp(force, "microvm");
	if (microvm && !kvm && !(vs->tsc_khz = tsc_khz())) {
		if (force && *force)
			return sbx_err_set(err, ENOTSUP, "SANDBOX_VM_MACHINE=microvm under TCG needs "
					   "the host's TSC rate, and this host's is not constant "
					   "or could not be measured");
		sbx_info("vm: the host's TSC rate is unknown (a microvm guest under TCG needs it): q35");
		microvm = 0;
	}
	snprintf(vs->machine, sizeof(vs->machine), "%s", microvm ? "microvm" : "q35");
	return 0;
}
