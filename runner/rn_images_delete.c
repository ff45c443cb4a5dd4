/* op image_delete: an image of the image dir goes. Refused while a sandbox
 * of this runner that is not yet stopped uses it: its overlay has the
 * image as the lower layer, and files removed under a live overlay would
 * vanish inside the sandbox. Refused too while a snapshot (not deleted) of
 * a sandbox of the image exists: a sandbox made from it stacks the
 * snapshot over the image. The directory is renamed aside first (one
 * step: the name is gone for creates and listings at once, and a delete
 * interrupted by a crash leaves a dot-name no listing shows); a child
 * process removes the tree, so a large image never stalls the event loop.
 * It also removes what a runner that is gone left aside (a crash), never
 * a tree another delete in progress is removing: an aside name carries
 * the pid of the runner that made it; then the layers no image uses any
 * more (rn_oci_gc.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner.h"
#include "rn_conn.h"
#include "rn_images.h"
#include "rn_oci_gc.h"
#include "rn_sandbox.h"
#include "rn_snap.h"
#include "rn_spec.h"
#include "rn_warm.h"
#include "sbx_fs.h"
#include "sbx_json.h"
#include "sbx_log.h"

#define ASIDE_PREFIX ".deleting-"

/* The pid in an aside name (ASIDE_PREFIX<name>-<pid>-<seq>), or 0. */
static pid_t aside_pid(const char *entry)
{
	const char *seq = strrchr(entry, '-'), *p;
	if (!seq || seq == entry)
		return 0;
	for (p = seq - 1; p > entry && *p >= '0' && *p <= '9'; p--)
		;
	return *p == '-' && p + 1 < seq ? (pid_t)strtol(p + 1, NULL, 10) : 0;
}

/* In the child: the tree renamed aside (mine), then the aside entries of
 * runners that are gone. One that a live process made is its own child's
 * to remove: two walks of one tree would trip over each other. */
static void remove_aside(const char *image_dir, const char *mine)
{
	DIR *d;
	struct dirent *e;
	char path[PATH_MAX + 300];

	if (sbx_rmtree(mine) < 0)
		sbx_warn("image dir %s: removing %s: %s", image_dir, mine, strerror(errno));
	d = opendir(image_dir);
	while (d && (e = readdir(d))) {
		pid_t pid;
		if (strncmp(e->d_name, ASIDE_PREFIX, strlen(ASIDE_PREFIX)))
			continue;
		pid = aside_pid(e->d_name);
		if (pid > 0 && (kill(pid, 0) == 0 || errno == EPERM))
			continue;
		snprintf(path, sizeof path, "%s/%s", image_dir, e->d_name);
		if (sbx_rmtree(path) < 0)
			sbx_warn("image dir %s: removing %s: %s", image_dir, e->d_name, strerror(errno));
	}
	if (d)
		closedir(d);
}

static const struct rn_sandbox *user_of(const struct runner *r, const char *name)
{
	for (const struct rn_sandbox *sb = r->sandboxes; sb; sb = sb->next)
		if (!sb->warm && !rn_sandbox_final(sb) && !strcmp(sb->spec.image, name))
			return sb;
	return NULL;
}

static const struct rn_snap *snap_of(const struct runner *r, const char *name)
{
	for (const struct rn_snap *s = r->snaps; s; s = s->next)
		if (!s->deleted && !strcmp(s->image, name))
			return s;
	return NULL;
}

void rn_images_delete(struct runner *r, struct rn_conn *c, const struct cJSON *req)
{
	struct sbx_err err = { 0, "" };
	const char *name = NULL;
	const struct rn_sandbox *user;
	const struct rn_snap *snap;
	char from[PATH_MAX + 64], to[PATH_MAX + 96], msg[300];
	static unsigned seq;
	struct stat st;
	cJSON *o;
	pid_t pid;
	int rc = sbx_json_get_str(req, "name", &name, &err);

	if (rc <= 0 || !rn_image_name_ok(name)) {
		rn_conn_reply_err(c, "invalid", rc < 0 ? err.msg : "name: required, an image name");
		return;
	}
	if (!strcmp(name, "default")) {
		rn_conn_reply_err(c, "conflict", "name: the default image stays (a create without "
				  "an image starts from it)");
		return;
	}
	snprintf(from, sizeof from, "%s/%s", r->image_dir, name);
	if (!lstat(from, &st) && S_ISLNK(st.st_mode)) {
		/* the operator's link to a tree elsewhere: theirs to remove */
		snprintf(msg, sizeof msg, "name: image \"%s\" is a link in the image dir of runner "
			 "%s; it is removed there, not through the API", name, r->name);
		rn_conn_reply_err(c, "conflict", msg);
		return;
	}
	if (lstat(from, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(msg, sizeof msg, "name: no image \"%s\" on runner %s", name, r->name);
		rn_conn_reply_err(c, "not_found", msg);
		return;
	}
	if ((user = user_of(r, name))) {
		snprintf(msg, sizeof msg, "name: image \"%s\" is in use by sandbox %s", name, user->id);
		rn_conn_reply_err(c, "conflict", msg);
		return;
	}
	if ((snap = snap_of(r, name))) {
		snprintf(msg, sizeof msg, "name: image \"%s\" is under snapshot %s (delete the "
			 "snapshot first)", name, snap->id);
		rn_conn_reply_err(c, "conflict", msg);
		return;
	}
	/* the pool's sandboxes of it are nobody's: they go, not the delete */
	rn_warm_flush(r, name);
	snprintf(to, sizeof to, "%s/" ASIDE_PREFIX "%s-%ld-%u", r->image_dir, name,
		 (long)getpid(), seq++);
	if (rename(from, to) < 0) {
		sbx_err_log("image %s: rename to %s: %s", name, to, strerror(errno));
		snprintf(msg, sizeof msg, "image \"%s\" could not be removed: %s", name, strerror(errno));
		rn_conn_reply_err(c, "internal", msg);
		return;
	}
	sbx_info("image %s deleted (its tree is removed in the background)", name);
	/* reaped by rn_sandbox_reap, which skips pids that are no sandbox's */
	pid = fork();
	if (pid == 0) {
		int n = 0;
		remove_aside(r->image_dir, to);
		/* the layers only that image used go too; shared ones stay */
		if (oci_gc_layers(r->image_dir, &n, &err) < 0)
			sbx_warn("image dir %s: layer collection: %s", r->image_dir, err.msg);
		else if (n)
			sbx_info("image dir %s: %d layer(s) no image uses removed", r->image_dir, n);
		_exit(0);
	}
	if (pid < 0)
		sbx_warn("image %s: fork: %s; %s stays until a delete after this runner ends", name,
			 strerror(errno), to);
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", name);
	rn_conn_reply_ok(c, "image", o);
}
