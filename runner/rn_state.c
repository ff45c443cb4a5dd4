#include "rn_state.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unsigned long long rn_proc_starttime(pid_t pid)
{
	char path[64], buf[1024], *p;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* field 3 (state) follows ") "; starttime is field 22 */
	p = strrchr(buf, ')');
	if (!p || p[2] == 'Z' || p[2] == 'X')
		return 0;
	p += 2;
	for (int field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	return p ? strtoull(p, NULL, 10) : 0;
}

/* Written to a temp file and renamed, so it is never torn. No fsync: the
 * file only has to survive a crash of the runner (the rename is atomic for
 * that); after a host crash the sandboxes and cgroups are gone anyway and
 * the dir alone is enough to clean. */
int rn_state_save(const struct rn_sandbox *sb, const char *driver, int slot,
		  struct sbx_err *err)
{
	char tmp[PATH_MAX + 16], dst[PATH_MAX + 16], *txt;
	cJSON *o = cJSON_CreateObject();
	int fd, rc = 0;

	cJSON_AddStringToObject(o, "id", sb->id);
	if (slot >= 0)
		cJSON_AddNumberToObject(o, "slot", slot);
	cJSON_AddNumberToObject(o, "pid", sb->pid);
	cJSON_AddNumberToObject(o, "starttime",
				(double)(sb->pid > 0 ? rn_proc_starttime(sb->pid) : 0));
	cJSON_AddStringToObject(o, "driver", driver);
	txt = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!txt)
		return sbx_err_set(err, ENOMEM, "state.json: out of memory");
	snprintf(tmp, sizeof(tmp), "%s/state.json.tmp", sb->dir);
	snprintf(dst, sizeof(dst), "%s/state.json", sb->dir);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, txt, strlen(txt)) != (ssize_t)strlen(txt) ||
	    rename(tmp, dst) < 0)
		rc = sbx_err_sys(err, "write %s", dst);
	if (fd >= 0)
		close(fd);
	cJSON_free(txt);
	return rc;
}

void rn_state_kill(const char *dir)
{
	char path[PATH_MAX + 16], buf[1024];
	cJSON *o = NULL, *v, *s;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/state.json", dir);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0)
		o = cJSON_ParseWithLength(buf, (size_t)n);
	v = o ? cJSON_GetObjectItemCaseSensitive(o, "pid") : NULL;
	s = o ? cJSON_GetObjectItemCaseSensitive(o, "starttime") : NULL;
	if (v && cJSON_IsNumber(v) && v->valueint > 1 && s && cJSON_IsNumber(s)) {
		pid_t pid = (pid_t)v->valueint;
		unsigned long long st = rn_proc_starttime(pid);

		/* only the process we started, not a reused pid */
		if (st && (unsigned long long)s->valuedouble == st) {
			kill(pid, SIGKILL);
			for (int i = 0; i < 400 && rn_proc_starttime(pid) == st; i++)
				usleep(5000);
		}
	}
	cJSON_Delete(o);
}
