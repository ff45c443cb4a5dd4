/* The registry. A driver is its own files (runner/driver_<name>*.c) with
 * one exported table, struct rn_driver_ops rn_driver_<name>; adding one
 * takes its name in RN_DRIVER_LIST below and nothing else. The order is
 * the order `capabilities` lists them in. */
#include "rn_drivers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rn_state.h"
#include "sbx_log.h"
#include "sbx_fs.h"

#define RN_DRIVER_LIST(X) X(jail) X(gvisor) X(vm)

#define DECLARE(n) extern const struct rn_driver_ops rn_driver_##n;
RN_DRIVER_LIST(DECLARE)
#define ENTRY(n) &rn_driver_##n,
static const struct rn_driver_ops *const registry[] = { RN_DRIVER_LIST(ENTRY) NULL };

static struct rn_driver *find(struct runner *r, const char *name, size_t len)
{
	for (int i = 0; i < r->n_drivers; i++)
		if (strlen(r->drivers[i].ops->name) == len &&
		    strncmp(r->drivers[i].ops->name, name, len) == 0)
			return &r->drivers[i];
	return NULL;
}

/* "jail, gvisor" for messages */
static void known_names(const struct runner *r, char *out, size_t n)
{
	size_t at = 0;

	out[0] = 0;
	for (int i = 0; i < r->n_drivers && at < n; i++)
		at += (size_t)snprintf(out + at, n - at, "%s%s", i ? ", " : "",
				       r->drivers[i].ops->name);
}

int rn_drivers_setup(struct runner *r, const char *list, const char *default_name,
		     int agent_stderr, struct sbx_err *err)
{
	char known[128];

	r->n_drivers = 0;
	for (int i = 0; registry[i] && i < RN_MAX_DRIVERS; i++) {
		struct rn_driver *d = &r->drivers[r->n_drivers++];
		memset(d, 0, sizeof(*d));
		d->ops = registry[i];
		d->r = r;
		d->enabled = list == NULL;
		d->agent_stderr = agent_stderr;
		snprintf(d->reason, sizeof(d->reason), "not enabled on this runner "
			 "(--drivers)");
	}
	known_names(r, known, sizeof(known));
	for (const char *p = list; p && *p;) {
		size_t len = strcspn(p, ",");
		struct rn_driver *d = find(r, p, len);
		if (!d)
			return sbx_err_set(err, ENOENT, "--drivers: no driver \"%.*s\" (known: "
					   "%s)", (int)(len > 32 ? 32 : len), p, known);
		d->enabled = 1;
		p += len;
		if (*p == ',')
			p++;
	}
	r->default_drv = find(r, default_name, strlen(default_name));
	if (!r->default_drv)
		return sbx_err_set(err, ENOENT, "--default-isolation: no driver \"%.32s\" "
				   "(known: %s)", default_name, known);
	if (!r->default_drv->enabled)
		return sbx_err_set(err, EINVAL, "--default-isolation %s is not among "
				   "--drivers", default_name);
	return 0;
}

void rn_drivers_init(struct runner *r)
{
	for (int i = 0; i < r->n_drivers; i++) {
		struct rn_driver *d = &r->drivers[i];
		struct sbx_err err = { 0, "" };

		if (!d->enabled)
			continue;
		d->probed = d->ops->probe(d, &err) == 0;
		if (!d->probed || d->ops->init(d, &err) < 0) {
			snprintf(d->reason, sizeof(d->reason), "%s", err.msg);
			sbx_warn("driver %s: unavailable: %s", d->ops->name, d->reason);
			continue;
		}
		d->available = 1;
		d->reason[0] = 0;
	}
	if (!r->default_drv->available)
		sbx_warn("the default isolation %s is unavailable: a create that names "
			 "no other fails", r->default_drv->ops->name);
}

int rn_driver_mark_dir(const char *dir, const char *name)
{
	char path[PATH_MAX + 16];
	int fd, rc = 0;
	size_t n = strlen(name);

	snprintf(path, sizeof(path), "%s/" RN_DRIVER_FILE, dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (write(fd, name, n) != (ssize_t)n || write(fd, "\n", 1) != 1)
		rc = -1;
	close(fd);
	return rc;
}

/* The driver name a dir records; 0 or -1 when it records none. Dirs made
 * before the registry existed have no file: only the jail made those. */
static int read_mark(const char *dir, char *out, size_t n)
{
	char path[PATH_MAX + 16], state[PATH_MAX + 16];
	ssize_t k;
	int fd;

	snprintf(path, sizeof(path), "%s/" RN_DRIVER_FILE, dir);
	/* no symlink, and no waiting on something that is not a file */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(state, sizeof(state), "%s/state.json", dir);
		if (errno == ENOENT && access(state, F_OK) == 0) {
			snprintf(out, n, "jail");
			return 0;
		}
		return -1;
	}
	k = read(fd, out, n - 1);
	close(fd);
	if (k <= 0)
		return -1;
	out[k] = 0;
	out[strcspn(out, "\n")] = 0;
	return out[0] ? 0 : -1;
}

struct foreign { char name[32]; int n; };

void rn_drivers_reconcile(struct runner *r)
{
	struct foreign left[RN_MAX_DRIVERS + 1];
	int n_left = 0, n_done = 0;
	DIR *d = opendir(r->sbx_root);
	struct dirent *e;

	memset(left, 0, sizeof(left));
	while (d && (e = readdir(d))) {
		char dir[PATH_MAX], name[32];
		struct rn_driver *drv;

		if (strncmp(e->d_name, "sbx_", 4) != 0 || strlen(e->d_name) >= RN_ID_MAX ||
		    snprintf(dir, sizeof(dir), "%s/%s", r->sbx_root, e->d_name) >= (int)sizeof(dir))
			continue;
		if (read_mark(dir, name, sizeof(name)) < 0) {
			/* the runner died between making the dir and marking it:
			 * no driver made anything in it yet */
			if (sbx_rmtree(dir) < 0)
				sbx_warn("cannot remove %s: %s", dir, strerror(errno));
			continue;
		}
		drv = find(r, name, strlen(name));
		if (drv && drv->enabled && drv->probed && drv->available && drv->ops->adopt &&
		    drv->ops->adopt(drv, e->d_name, dir) == 0) {
			n_done++;
			continue;
		}
		if (drv && drv->enabled && drv->probed) {
			rn_state_keep_lost(r, drv, e->d_name, dir);
			drv->ops->reconcile_dir(drv, e->d_name, dir);
			n_done++;
			continue;
		}
		/* a driver not enabled (or unable to run) here now: its files
		 * and processes are that driver's to clean; count them for one
		 * line per driver */
		int i;
		for (i = 0; i < n_left && strcmp(left[i].name, name); i++)
			;
		if (i == n_left && n_left < RN_MAX_DRIVERS + 1)
			snprintf(left[n_left++].name, sizeof(left[0].name), "%s", name);
		if (i < n_left)
			left[i].n++;
	}
	if (d)
		closedir(d);
	for (int i = 0; i < n_left; i++)
		sbx_warn("left %d sandbox dir(s) of driver %s alone: it is not enabled "
			 "(or cannot run) on this runner now", left[i].n, left[i].name);
	for (int i = 0; i < r->n_drivers; i++)
		if (r->drivers[i].enabled && r->drivers[i].probed && r->drivers[i].ops->reconcile)
			r->drivers[i].ops->reconcile(&r->drivers[i]);
	if (n_done)
		sbx_info("reconciled %d sandbox(es) left by a previous run: killed and removed",
			 n_done);
}

struct rn_driver *rn_drivers_pick(struct runner *r, const char *isolation,
				  struct sbx_err *err)
{
	struct rn_driver *d = isolation ? find(r, isolation, strlen(isolation)) : r->default_drv;
	char known[128];

	if (!d) {
		known_names(r, known, sizeof(known));
		sbx_err_set(err, ENOENT, "isolation: no isolation \"%.32s\" (known: %s)",
			    isolation, known);
		return NULL;
	}
	if (!d->available) {
		sbx_err_set(err, ENOTSUP, "isolation: %s is not available on this runner: %s",
			    d->ops->name, d->reason);
		return NULL;
	}
	return d;
}

cJSON *rn_drivers_json(const struct runner *r)
{
	cJSON *o = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(o, "isolation");

	for (int i = 0; i < r->n_drivers; i++) {
		const struct rn_driver *d = &r->drivers[i];
		cJSON *it = cJSON_CreateObject();
		cJSON_AddStringToObject(it, "name", d->ops->name);
		cJSON_AddBoolToObject(it, "available", d->available);
		if (d->available)
			cJSON_AddNullToObject(it, "reason");
		else
			cJSON_AddStringToObject(it, "reason", d->reason);
		if (d->available && d->accel[0])
			cJSON_AddStringToObject(it, "accel", d->accel);
		if (d->available && d->machine[0])
			cJSON_AddStringToObject(it, "machine", d->machine);
		cJSON_AddItemToArray(a, it);
	}
	cJSON_AddStringToObject(o, "default", r->default_drv->ops->name);
	return o;
}
