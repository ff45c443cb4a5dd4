/* Whether this host's KVM boots our guest kernel (driver_vm_accel.c asks,
 * once per host boot).
 *
 * A /dev/kvm that opens, and even one that runs a paused machine, may not
 * run a Linux guest: kvm-pvm (a paravirtual KVM inside a VM that has no
 * nested virtualization) runs real-mode code but leaves an ordinary
 * kernel spinning before its first line, and every sandbox then waits out
 * its ready deadline. So the guest kernel itself is booted with KVM, with
 * no root to mount: it prints its banner at once, panics, and panic=-1
 * with -no-reboot ends QEMU with exit 0, well under a second where KVM
 * works. A guest with nothing on its serial port after KVM_SILENT_MS is
 * hung; one that prints is given KVM_BOOT_MS in all (a busy host). */
#include "driver_vm.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sbx_clock.h"
#include "sbx_log.h"

#define KVM_SILENT_MS 3000
#define KVM_BOOT_MS 30000
#define KVM_POLL_MS 50

static pid_t start_guest(const char *qemu, const char *kernel, const char *serial)
{
	char ser[PATH_MAX + 8];
	pid_t pid;

	snprintf(ser, sizeof(ser), "file:%s", serial);
	pid = fork();
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);
		char *argv[] = {
			(char *)qemu, "-accel", "kvm", "-M", "q35", "-cpu", "max", "-m", "128",
			"-smp", "1", "-nodefaults", "-no-user-config", "-display", "none",
			"-monitor", "none", "-serial", ser, "-kernel", (char *)kernel,
			"-append", "console=ttyS0 earlyprintk=serial panic=-1", "-no-reboot", NULL
		};
		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 1);
			dup2(nul, 2);
		}
		execv(qemu, argv);
		_exit(127);
	}
	return pid;
}

int vm_kvm_boots(const char *qemu, const char *kernel)
{
	char serial[] = "/tmp/sbx-kvm-boot.XXXXXX";
	int fd = mkstemp(serial), st = 0, ok = 0;
	int64_t t0 = sbx_mono_ms();
	const char *why = "it ended with an error";
	pid_t pid, w;

	if (fd < 0)
		return 0;
	close(fd);
	pid = start_guest(qemu, kernel, serial);
	if (pid < 0) {
		unlink(serial);
		return 0;
	}
	for (;;) {
		struct timespec nap = { 0, KVM_POLL_MS * 1000000L };
		struct stat sst;
		int64_t used = sbx_mono_ms() - t0;

		w = waitpid(pid, &st, WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR)) {
			ok = w == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
			break;
		}
		if (used >= KVM_SILENT_MS && stat(serial, &sst) == 0 && sst.st_size == 0) {
			why = "nothing on its serial port: hung before its first line";
			break;
		}
		if (used >= KVM_BOOT_MS) {
			why = "it did not end";
			break;
		}
		nanosleep(&nap, NULL);
	}
	if (w != pid) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	unlink(serial);
	if (!ok)
		sbx_info("vm: /dev/kvm opens, but our guest kernel did not boot with KVM (%s, "
			 "after %lld ms): TCG", why, (long long)(sbx_mono_ms() - t0));
	return ok;
}
