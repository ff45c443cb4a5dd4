/* File operations: streamed write_file (temp file + rename, so a client
 * that vanishes mid-upload leaves nothing behind) and read_file, mkdir,
 * list, stat. Local disk I/O is done synchronously in the loop: one 64 KiB
 * frame at a time. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "sbx_frame.h"
#include "sbx_fs.h"
#include "sbx_id.h"
#include "sbx_log.h"

#define LIST_MAX 10000

static const char *type_name(mode_t m)
{
	return S_ISREG(m) ? "file" : S_ISDIR(m) ? "dir" : S_ISLNK(m) ? "link" : "other";
}

static void add_stat(cJSON *o, const char *name, const struct stat *st)
{
	cJSON_AddStringToObject(o, "name", name);
	cJSON_AddStringToObject(o, "type", type_name(st->st_mode));
	cJSON_AddNumberToObject(o, "size", (double)st->st_size);
	cJSON_AddNumberToObject(o, "mode", st->st_mode & 07777);
	cJSON_AddNumberToObject(o, "mtime", (double)st->st_mtim.tv_sec * 1000 +
				st->st_mtim.tv_nsec / 1000000);
}

static int parent_dirs(const char *file)
{
	char dir[PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", file);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = 0;
	return sbx_mkdir_p(dir, 0755, 0755);
}

static void start_write(struct ag_conn *c, struct ag_req *r, const char *path)
{
	char tmp[PATH_MAX], rnd[40];
	const char *slash = strrchr(path, '/');
	struct stat st;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		ag_conn_fail(c, "invalid", "%s is a directory", r->path);
		return;
	}
	if (parent_dirs(path) < 0) {
		ag_conn_fail_errno(c, errno, "create parent directories");
		return;
	}
	if (sbx_id_new("", rnd, sizeof(rnd)) < 0 ||
	    snprintf(tmp, sizeof(tmp), "%.*s/.%s.sbx-%s", (int)(slash - path), path,
		     slash + 1, rnd) >= (int)sizeof(tmp)) {
		ag_conn_fail(c, "bad_request", "path too long");
		return;
	}
	c->fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (c->fd < 0) {
		ag_conn_fail_errno(c, errno, "create");
		return;
	}
	c->tmp_path = strdup(tmp);
	c->final_path = strdup(path);
	if (!c->tmp_path || !c->final_path) {
		ag_fs_abort(c);
		ag_conn_fail(c, "internal", "out of memory");
		return;
	}
	c->mode = r->mode >= 0 ? r->mode : 0644;
	c->uid = r->uid;
	c->gid = r->gid;
	c->size = 0;
	c->state = AG_ST_WRITE_FILE;
	ag_conn_process(c);   /* DATA frames sent along with the request */
}

void ag_fs_abort(struct ag_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	if (c->tmp_path)
		unlink(c->tmp_path);
	free(c->tmp_path);
	free(c->final_path);
	c->tmp_path = c->final_path = NULL;
}

void ag_fs_frame(struct ag_conn *c, int type, const unsigned char *p, uint32_t n)
{
	uint32_t done = 0;

	if (type == SBX_FRAME_DATA) {
		while (done < n) {
			ssize_t w = write(c->fd, p + done, n - done);

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				ag_conn_fail_errno(c, errno, "write");
				return;
			}
			done += (uint32_t)w;
		}
		c->size += n;
		return;
	}
	if (type != SBX_FRAME_EOF) {
		ag_conn_fail(c, "bad_request", "write_file takes DATA frames and one EOF frame");
		return;
	}
	if (fchmod(c->fd, (mode_t)c->mode) < 0 ||
	    ((c->uid >= 0 || c->gid >= 0) &&
	     fchown(c->fd, c->uid >= 0 ? (uid_t)c->uid : (uid_t)-1,
		    c->gid >= 0 ? (gid_t)c->gid : (gid_t)-1) < 0)) {
		ag_conn_fail_errno(c, errno, "set mode/owner");
		return;
	}
	if (close(c->fd) < 0) {
		c->fd = -1;
		ag_conn_fail_errno(c, errno, "close");
		return;
	}
	c->fd = -1;
	if (rename(c->tmp_path, c->final_path) < 0) {
		ag_conn_fail_errno(c, errno, "rename");
		return;
	}
	free(c->tmp_path);
	c->tmp_path = NULL;
	{
		cJSON *o = ag_ok();

		cJSON_AddNumberToObject(o, "size", (double)c->size);
		ag_conn_json(c, o);
		ag_conn_closing(c);
		ag_conn_flush(c);
	}
}

void ag_fs_pump(struct ag_conn *c)
{
	while (c->fd >= 0 && c->out.len < AG_OUT_HIGH) {
		unsigned char *dst = sbx_buf_reserve(&c->out, SBX_FRAME_HDR + AG_CHUNK);
		ssize_t n;

		if (!dst)
			return;
		n = read(c->fd, dst + SBX_FRAME_HDR, AG_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			/* the size was promised; a short file plus an error frame */
			int e = errno;

			close(c->fd);
			c->fd = -1;
			ag_conn_fail_errno(c, e, "read");
			return;
		}
		if (n == 0) {
			close(c->fd);
			c->fd = -1;
			sbx_frame_append(&c->out, SBX_FRAME_EOF, NULL, 0);
			ag_conn_closing(c);
			return;
		}
		sbx_frame_header(dst, SBX_FRAME_DATA, (uint32_t)n);
		sbx_buf_commit(&c->out, SBX_FRAME_HDR + (size_t)n);
	}
}

static void do_read(struct ag_conn *c, const char *path)
{
	struct stat st;
	cJSON *o;

	c->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (c->fd < 0) {
		ag_conn_fail_errno(c, errno, "open");
		return;
	}
	if (fstat(c->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		int e = errno;

		close(c->fd);
		c->fd = -1;
		if (S_ISDIR(st.st_mode))
			ag_conn_fail(c, "invalid", "is a directory");
		else if (!S_ISREG(st.st_mode))
			ag_conn_fail(c, "invalid", "not a regular file");
		else
			ag_conn_fail_errno(c, e, "stat");
		return;
	}
	o = ag_ok();
	cJSON_AddNumberToObject(o, "size", (double)st.st_size);
	ag_conn_json(c, o);
	c->state = AG_ST_READ_FILE;
	ag_conn_flush(c);
}

static void do_list(struct ag_conn *c, const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	cJSON *o, *arr;
	int n = 0, dfd;

	if (!d) {
		ag_conn_fail_errno(c, errno, "list");
		return;
	}
	dfd = dirfd(d);
	o = ag_ok();
	arr = cJSON_AddArrayToObject(o, "entries");
	while ((de = readdir(d))) {
		struct stat st;
		cJSON *e;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (++n > LIST_MAX) {
			cJSON_AddBoolToObject(o, "truncated", 1);
			break;
		}
		e = cJSON_CreateObject();
		add_stat(e, de->d_name, &st);
		cJSON_AddItemToArray(arr, e);
	}
	closedir(d);
	if (ag_conn_json(c, o) < 0) {
		ag_conn_fail(c, "invalid", "listing does not fit in one frame");
		return;
	}
	ag_conn_closing(c);
	ag_conn_flush(c);
}

void ag_fs_request(struct ag_conn *c, struct ag_req *r)
{
	char path[PATH_MAX];
	struct stat st;
	cJSON *o;

	if (ag_resolve(r->path, path, sizeof(path)) < 0) {
		ag_conn_fail(c, "bad_request", "path too long");
		return;
	}
	switch (r->op) {
	case AG_OP_WRITE_FILE:
		start_write(c, r, path);
		return;
	case AG_OP_READ_FILE:
		do_read(c, path);
		return;
	case AG_OP_LIST:
		do_list(c, path);
		return;
	case AG_OP_STAT:
		if (lstat(path, &st) < 0) {
			ag_conn_fail_errno(c, errno, "stat");
			return;
		}
		o = ag_ok();
		add_stat(o, strrchr(path, '/') ? strrchr(path, '/') + 1 : path, &st);
		ag_conn_json(c, o);
		ag_conn_closing(c);
		ag_conn_flush(c);
		return;
	case AG_OP_MKDIR: {
		mode_t mode = r->mode >= 0 ? (mode_t)r->mode : 0755;

		if ((r->parents ? sbx_mkdir_p(path, mode, mode) : mkdir(path, mode)) < 0) {
			ag_conn_fail_errno(c, errno, "mkdir");
			return;
		}
		if ((r->uid >= 0 || r->gid >= 0) &&
		    chown(path, r->uid >= 0 ? (uid_t)r->uid : (uid_t)-1,
			  r->gid >= 0 ? (gid_t)r->gid : (gid_t)-1) < 0) {
			ag_conn_fail_errno(c, errno, "chown");
			return;
		}
		ag_conn_ok(c);
		return;
	}
	default:
		ag_conn_fail(c, "internal", "unhandled op");
	}
}
