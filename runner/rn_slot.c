#include "rn_slot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int rn_slot_alloc(struct rn_slots *s)
{
	char path[64];

	mkdir("/run/sandbox", 0755);
	mkdir(RN_SLOT_DIR, 0700);
	for (int i = 0; i < RN_MAX_SLOTS; i++) {
		int fd;

		if (s->fd1[i])
			continue;
		snprintf(path, sizeof(path), RN_SLOT_DIR "/%d", i);
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0)
			return -1;
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			close(fd);
			continue;       /* another runner's (or driver's) */
		}
		s->fd1[i] = fd + 1;
		return i;
	}
	errno = EAGAIN;
	return -1;
}

void rn_slot_free(struct rn_slots *s, int i)
{
	if (i >= 0 && i < RN_MAX_SLOTS && s->fd1[i]) {
		close(s->fd1[i] - 1);
		s->fd1[i] = 0;
	}
}
