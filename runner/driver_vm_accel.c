/* Which accelerator the vm driver's QEMU uses: KVM when this host runs
 * guests with it, TCG (translation, with a bounded cache) otherwise. A
 * /dev/kvm that opens is not yet a KVM that runs guests: a nested host
 * whose KVM refuses MSRs QEMU sets makes QEMU abort at its first vCPU
 * reset. So it is tried: QEMU starts a paused machine with -accel kvm and
 * is told to quit; exit 0 is KVM. The answer is kept in VM_ACCEL_CACHE for
 * that QEMU binary (its size and mtime), so a runner's start pays for the
 * try once per host boot, not each time. */
#include "driver_vm.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx_log.h"

#define VM_ACCEL_CACHE "/run/sandbox/vm-accel"

static int kvm_runs_guests(const char *qemu)
{
	char *argv[] = { "/bin/sh", "-c",
			 "echo quit | timeout 60 \"$0\" -accel kvm -M q35 -cpu max -m 64 "
			 "-nodefaults -no-user-config -display none -S -monitor stdio",
			 (char *)qemu, NULL };
	struct sbx_err err = { 0 };
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return 0;
	close(fd);
	if (vm_run(argv, &err) == 0)
		return 1;
	sbx_info("vm: /dev/kvm opens but QEMU cannot run a guest with it (%s): TCG", err.msg);
	return 0;
}

void vm_accel_choose(struct vm_state *vs)
{
	struct stat st;
	char key[96], line[128] = "";
	int kvm = 0, fd;
	ssize_t n;

	if (stat(vs->qemu, &st) < 0)
		st.st_size = st.st_mtime = 0;
	snprintf(key, sizeof(key), "%lld %lld ", (long long)st.st_size, (long long)st.st_mtime);
	fd = open(VM_ACCEL_CACHE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		n = read(fd, line, sizeof(line) - 1);
		line[n > 0 ? n : 0] = 0;
		close(fd);
	}
	if (!strncmp(line, key, strlen(key))) {
		kvm = !strncmp(line + strlen(key), "kvm", 3);
	} else {
		kvm = kvm_runs_guests(vs->qemu);
		mkdir("/run/sandbox", 0755);
		fd = open(VM_ACCEL_CACHE ".tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
			  0644);
		if (fd >= 0) {
			dprintf(fd, "%s%s\n", key, kvm ? "kvm" : "tcg");
			close(fd);
			rename(VM_ACCEL_CACHE ".tmp", VM_ACCEL_CACHE);
		}
	}
	if (kvm)
		snprintf(vs->accel, sizeof(vs->accel), "kvm");
	else
		snprintf(vs->accel, sizeof(vs->accel), "tcg,tb-size=%d", VM_TB_MB);
}
