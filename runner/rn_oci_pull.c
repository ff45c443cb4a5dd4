/* The pull (rn_oci_pull.h): skopeo copy docker://REF oci:DIR, then the
 * layout's size against the cap, then the import. */
#include "rn_oci_pull.h"

#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rn_oci_compose.h"
#include "rn_spec.h"

static int loopback(const char *ref)
{
	const char *slash = strchr(ref, '/');
	size_t h = slash ? (size_t)(slash - ref) : 0;

	return (h >= 9 && !strncmp(ref, "localhost", 9) && (h == 9 || ref[9] == ':')) ||
	       (h >= 4 && !strncmp(ref, "127.", 4)) || (h >= 5 && !strncmp(ref, "[::1]", 5));
}

/* Run skopeo; its stderr's last bytes into why. 0 when it exited 0. */
static int skopeo(const char *ref, const char *dest, int insecure, char *why, size_t n)
{
	char src[300];
	int pipefd[2];
	pid_t pid;
	int st;
	size_t got = 0;

	snprintf(src, sizeof src, "docker://%s", ref);
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (pid == 0) {
		char *argv[] = { "skopeo", "--insecure-policy", "copy", "--quiet",
				 insecure ? "--src-tls-verify=false" : "--src-tls-verify=true",
				 src, (char *)dest, NULL };
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		dup2(pipefd[1], 2);
		execvp("skopeo", argv);
		dprintf(2, "cannot run skopeo: %s", strerror(errno));
		_exit(127);
	}
	close(pipefd[1]);
	for (;;) {
		char buf[512];
		ssize_t k = read(pipefd[0], buf, sizeof buf);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		for (ssize_t i = 0; i < k; i++) {   /* keep the last n - 1 bytes */
			if (got == n - 1) {
				memmove(why, why + 1, n - 2);
				got--;
			}
			why[got++] = buf[i] == '\n' ? ' ' : buf[i];
		}
	}
	why[got] = '\0';
	close(pipefd[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int oci_pull(const struct oci_import_opts *o, const char *ref, const char *name, int insecure,
	     cJSON **out, struct sbx_err *err)
{
	char stage[PATH_MAX], dest[PATH_MAX + 32], why[300] = "";
	struct oci_import_opts with_ref = *o;
	uint64_t size = 0;
	int rc, tmp;

	if (!rn_image_ref_ok(ref))
		return sbx_err_set(err, EINVAL, "ref: not a registry reference");
	with_ref.ref = ref;   /* kept beside the image: a create finds it by its ref */
	snprintf(stage, sizeof stage, "%s/.tmp", o->image_dir);
	if (mkdir(stage, 0700) < 0 && errno != EEXIST)
		return sbx_err_sys(err, "the staging dir");
	snprintf(stage, sizeof stage, "%s/.tmp/pull-XXXXXX", o->image_dir);
	if (!mkdtemp(stage))
		return sbx_err_sys(err, "the staging dir");
	snprintf(dest, sizeof dest, "oci:%s/layout:latest", stage);
	if (skopeo(ref, dest, insecure || loopback(ref), why, sizeof why) < 0) {
		rc = sbx_err_set(err, EIO, "pull %s: skopeo failed: %s", ref, why);
	} else {
		char layout[PATH_MAX + 8];
		snprintf(layout, sizeof layout, "%s/layout", stage);
		/* skopeo has no byte bound of its own: the layout is measured
		 * before a byte of it is unpacked */
		if (oci_store_usage(layout, &size) < 0)
			rc = sbx_err_sys(err, "measuring the pulled layout");
		else if (size > o->max_bytes)
			rc = sbx_err_set(err, EFBIG, "pull %s: %llu MiB, over the size cap", ref,
					 (unsigned long long)(size >> 20));
		else
			rc = oci_import_layout(&with_ref, layout, name, out, err);
	}
	tmp = open(stage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tmp >= 0) {
		char *base = strrchr(stage, '/');
		*base = '\0';
		close(tmp);
		tmp = open(stage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (tmp >= 0) {
			oci_remove_at(tmp, base + 1);
			close(tmp);
		}
	}
	return rc;
}
