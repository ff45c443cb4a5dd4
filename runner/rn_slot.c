#include "rn_slot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx_fs.h"
#include "sbx_log.h"

/* RN_SLOT_DIR/<i>.kept */
static void kept_path(char *out, size_t n, int i)
{
	snprintf(out, n, RN_SLOT_DIR "/%d.kept", i);
}

/* 1 when slot i is kept for a sandbox whose holder path still exists. */
static int kept(int i)
{
	char mark[64], holder[4096];
	ssize_t n;
	int fd;

	kept_path(mark, sizeof(mark), i);
	fd = open(mark, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, holder, sizeof(holder) - 1);
	close(fd);
	if (n > 0) {
		holder[n] = 0;
		if (access(holder, F_OK) == 0)
			return 1;
	}
	unlink(mark);    /* its sandbox is gone: the mark is stale */
	return 0;
}

/* Lock slot i: 1 held now, 0 another runner's (or driver's) or kept,
 * -1 errno. With claim, a kept slot is taken too (its keeper's). */
static int try_lock(struct rn_slots *s, int i, int claim)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), RN_SLOT_DIR "/%d", i);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0 || (!claim && kept(i))) {
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
		int rc = s->fd1[i] ? 0 : try_lock(s, i, 0);

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
	rc = try_lock(s, i, 1);
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

void rn_slot_keep(int i, const char *holder)
{
	char mark[64];

	kept_path(mark, sizeof(mark), i);
	if (i >= 0 && i < RN_MAX_SLOTS && sbx_replace_file(mark, holder, 0600) < 0)
		sbx_warn("slot %d: cannot keep it for %s: %s", i, holder, strerror(errno));
}

void rn_slot_unkeep(int i)
{
	char mark[64];

	if (i < 0 || i >= RN_MAX_SLOTS)
		return;
	kept_path(mark, sizeof(mark), i);
	unlink(mark);
}
