/* The image and the agent runtime a sandbox runs from (rn_runtime.h). */
#include "rn_runtime.h"
#include "rn_images.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx_fs.h"

static int copy_file(const char *src, const char *dst, mode_t mode, struct sbx_err *err)
{
	char buf[65536];
	int in = open(src, O_RDONLY | O_CLOEXEC), out;
	ssize_t n;

	if (in < 0)
		return sbx_err_sys(err, "open %s", src);
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (out < 0) {
		close(in);
		return sbx_err_sys(err, "create %s", dst);
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	if (n < 0)
		sbx_err_sys(err, "copy %s", src);
	close(in);
	if (close(out) < 0 && n >= 0)
		n = sbx_err_sys(err, "close %s", dst);
	if (fchmodat(AT_FDCWD, dst, mode, 0) < 0 && n >= 0)
		n = sbx_err_sys(err, "chmod %s", dst);
	return n < 0 ? -1 : 0;
}

/* One path per ldd line: "name => /path (addr)" or "/path (addr)". */
static const char *ldd_path(char *line)
{
	char *p = strstr(line, "=> "), *e;

	p = p ? p + 3 : line;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != '/')
		return NULL;
	e = strchr(p, ' ');
	if (e)
		*e = 0;
	return p;
}

/* The agent's shared objects, as ld.so's --preload list (in ldd's order,
 * by their paths inside): named, they are opened where they are, not
 * searched for through the hardware-capability subdirectories of the
 * library path (about 30 failed lookups, a tenth of a millisecond of every
 * start). A runtime without the file is searched, as before. */
static int write_preload(const char *dir, const char *list, struct sbx_err *err)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/" RN_RUNTIME_PRELOAD, dir);
	if (sbx_write_file(path, list, O_CREAT | O_TRUNC | O_NOFOLLOW, 0644) < 0)
		return sbx_err_sys(err, "write %s", path);
	return 0;
}

/* Append base's path inside to the list; -1 when it does not fit. */
static int add_preload(char *list, size_t len, const char *base)
{
	size_t k = strlen(list);
	int n = snprintf(list + k, len - k, "%s" RN_RUNTIME_MOUNT "/lib/%s", k ? " " : "", base);

	if (n < 0 || (size_t)n >= len - k) {
		list[k] = 0;
		return -1;
	}
	return 0;
}

static int prepare(const char *agent, const char *dir, char *loader,
		   size_t loader_len, struct sbx_err *err)
{
	char cmd[PATH_MAX + 32], line[PATH_MAX + 128], dst[PATH_MAX * 2], lib[PATH_MAX + 8];
	char preload[RN_RUNTIME_PRELOAD_MAX] = "";
	FILE *f;
	int nlibs = 0, all_named = 1;

	if (access(agent, X_OK) < 0)
		return sbx_err_sys(err, "agent %s", agent);
	if (strchr(agent, '\'') || strchr(agent, '\n'))
		return sbx_err_set(err, EINVAL, "agent path has a quote or newline");
	sbx_rmtree(dir);
	snprintf(lib, sizeof(lib), "%s/lib", dir);
	if (mkdir(dir, 0755) < 0 || mkdir(lib, 0755) < 0)
		return sbx_err_sys(err, "mkdir %s", lib);
	chmod(dir, 0755);
	snprintf(dst, sizeof(dst), "%s/sandbox-agent", dir);
	if (copy_file(agent, dst, 0755, err) < 0)
		return -1;
	/* ldd runs once at start-up, on our own binary. */
	snprintf(cmd, sizeof(cmd), "ldd '%s' 2>/dev/null", agent);
	f = popen(cmd, "re");
	if (!f)
		return sbx_err_sys(err, "run ldd");
	loader[0] = 0;
	while (fgets(line, sizeof(line), f)) {
		const char *p = ldd_path(line);
		const char *base;

		if (!p)
			continue;
		base = strrchr(p, '/') + 1;
		snprintf(dst, sizeof(dst), "%s/%s", lib, base);
		if (copy_file(p, dst, 0755, err) < 0) {
			pclose(f);
			return -1;
		}
		if (strncmp(base, "ld-linux", 8) == 0 || strncmp(base, "ld-", 3) == 0)
			snprintf(loader, loader_len, "%s", base);
		else if (add_preload(preload, sizeof(preload), base) < 0)
			all_named = 0;   /* too many to name: all are searched for */
		nlibs++;
	}
	pclose(f);
	if (!loader[0])
		return sbx_err_set(err, ENOEXEC, "ldd %s listed no dynamic loader "
				   "(the agent must be dynamically linked)", agent);
	if (all_named && write_preload(dir, preload, err) < 0)
		return -1;
	return 0;
}

int rn_runtime_prepare(const char *agent, const char *dir, char *loader,
		       size_t loader_len, struct sbx_err *err)
{
	char why[sizeof(err->msg)];

	if (prepare(agent, dir, loader, loader_len, err) == 0)
		return 0;
	snprintf(why, sizeof(why), "%s", err->msg);
	return sbx_err_set(err, err->code, "agent runtime: %s (is --agent right?)", why);
}

int rn_runtime_find_loader(const char *dir, char *loader, size_t loader_len)
{
	char lib[PATH_MAX + 8];
	DIR *d;
	struct dirent *e;

	loader[0] = 0;
	snprintf(lib, sizeof(lib), "%s/lib", dir);
	d = opendir(lib);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "ld-", 3) && strlen(e->d_name) < loader_len) {
			memcpy(loader, e->d_name, strlen(e->d_name) + 1);
			break;
		}
	closedir(d);
	return loader[0] ? 0 : -1;
}

int rn_runtime_preload(const char *dir, char *list, size_t len)
{
	char path[PATH_MAX + 16];
	ssize_t n;
	int fd;

	list[0] = 0;
	snprintf(path, sizeof(path), "%s/" RN_RUNTIME_PRELOAD, dir);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, list, len);
	close(fd);
	if (n <= 0 || (size_t)n >= len || memchr(list, 0, (size_t)n) || list[0] != '/') {
		list[0] = 0;
		return -1;
	}
	list[n] = 0;
	return 0;
}

int rn_runtime_image(const struct runner *r, const char *image, char *rootfs,
		     size_t rootfs_len, struct sbx_err *err)
{
	char names[256];

	snprintf(rootfs, rootfs_len, "%s/%s/rootfs", r->image_dir, image);
	if (access(rootfs, X_OK) == 0)
		return 0;
	/* the images there are: never the host's paths */
	rn_images_names(r, names, sizeof names);
	return sbx_err_set(err, EINVAL, "image: no image \"%.32s\" on this runner (images: %s)",
			   image, names[0] ? names : "none");
}

int rn_runtime_ready(const struct runner *r, const char *loader, struct sbx_err *err)
{
	if (!loader[0] || access(r->runtime_dir, X_OK) < 0)
		return sbx_err_set(err, ENOENT, "the agent runtime is not prepared "
				   "(is --agent right?)");
	return 0;
}
