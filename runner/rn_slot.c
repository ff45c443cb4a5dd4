#include "rn_slot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* Lock slot i: 1 held now, 0 another runner's (or driver's), -1 errno. */
static int try_lock(struct rn_slots *s, int i)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), RN_SLOT_DIR "/%d", i);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return 0;
	}
	s->fd1[i] = fd + 1;
	return 1;
}

int rn_slot_alloc(struct rn_slots *s)
{
	mkdir("/run/sandbox", 0755);
	mkdir(RN_SLOT_DIR, 0700);
	for (int i = 0; i < RN_MAX_SLOTS; i++) {
		int rc = s->fd1[i] ? 0 : try_lock(s, i);

		if (rc < 0)
			return -1;
		if (rc == 1)
			return i;
	}
	errno = EAGAIN;
	return -1;
}

int rn_slot_claim(struct rn_slots *s, int i)
{
	int rc;

	if (i < 0 || i >= RN_MAX_SLOTS || s->fd1[i]) {
		errno = EBUSY;
		return -1;
	}
	mkdir("/run/sandbox", 0755);
	mkdir(RN_SLOT_DIR, 0700);
	rc = try_lock(s, i);
	if (rc == 0)
		errno = EBUSY;
	return rc == 1 ? 0 : -1;
}

void rn_slot_free(struct rn_slots *s, int i)
{
	if (i >= 0 && i < RN_MAX_SLOTS && s->fd1[i]) {
		close(s->fd1[i] - 1);
		s->fd1[i] = 0;
	}
}
