/* The guest side of a VM's stop: the vm driver stops a sandbox by pressing
 * the VM's ACPI power button (QEMU's system_powerdown), the kernel reports
 * it as KEY_POWER on an input device, and the agent, PID 1 of the guest,
 * ends its commands as on SIGTERM and then powers the guest off itself.
 * Without this the host waits out its bound and kills QEMU; and PID 1 may
 * not simply exit in a VM: the kernel panics when init ends. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/reboot.h>
#include <unistd.h>

#include <linux/input.h>

#include "agent.h"
#include "sbx_log.h"

#define BITS_PER_LONG (8 * sizeof(unsigned long))

static int has_power_key(int fd)
{
	unsigned long keys[KEY_MAX / BITS_PER_LONG + 1];

	memset(keys, 0, sizeof(keys));
	if (ioctl(fd, EVIOCGBIT(EV_KEY, sizeof(keys)), keys) < 0)
		return 0;
	return (keys[KEY_POWER / BITS_PER_LONG] >> (KEY_POWER % BITS_PER_LONG)) & 1;
}

int ag_power_button_open(void)
{
	DIR *d = opendir("/dev/input");
	struct dirent *e;
	int found = -1;

	if (!d)
		return -1;
	while (found < 0 && (e = readdir(d))) {
		char path[64];
		int fd;
		if (strncmp(e->d_name, "event", 5) != 0 ||
		    snprintf(path, sizeof(path), "/dev/input/%s", e->d_name) >= (int)sizeof(path))
			continue;
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (has_power_key(fd))
			found = fd;
		else
			close(fd);
	}
	closedir(d);
	return found;
}

int ag_power_button_pressed(int fd)
{
	struct input_event ev[16];
	ssize_t n;
	int pressed = 0;

	while ((n = read(fd, ev, sizeof(ev))) > 0)
		for (size_t i = 0; i < (size_t)n / sizeof(ev[0]); i++)
			if (ev[i].type == EV_KEY && ev[i].code == KEY_POWER && ev[i].value == 1)
				pressed = 1;
	return pressed;
}

void ag_power_off(void)
{
	sbx_info("powering the guest off");
	sync();
	if (reboot(RB_POWER_OFF) < 0)
		sbx_err_log("power off: %s", strerror(errno));
}
