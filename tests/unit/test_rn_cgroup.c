/* Tests of runner/rn_cgroup.c on the host's real cgroups (root only; else
 * every case is skipped): what a driver whose runtime makes the cgroup
 * itself relies on. The cgroup below is made here by plain mkdir, with a
 * sub-cgroup under it, the way runsc makes one from a cgroupsPath; the
 * module must still read its counters, kill every process in it and below
 * it, and remove it and the empty parent the "driver" made. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../runner/rn_cgroup.h"

struct fx {
	struct rn_cgroup cg;
	char top[64], path[128], sub[160];
};

static const char *const hiers_v1[] = { "memory", "pids", "cpu", NULL };

static void cg_dir(const struct fx *f, const char *hier, const char *rel, char *out, size_t n)
{
	if (f->cg.v2)
		snprintf(out, n, RN_CG_ROOT "/%s", rel);
	else
		snprintf(out, n, RN_CG_ROOT "/%s/%s", hier, rel);
}

/* mkdir of rel in every hierarchy of ours: a runtime's doing, not ours */
static int foreign_mkdir(const struct fx *f, const char *rel)
{
	char p[PATH_MAX];

	for (int i = 0; f->cg.v2 ? i < 1 : hiers_v1[i] != NULL; i++) {
		cg_dir(f, hiers_v1[i], rel, p, sizeof(p));
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return -1;
	}
	return 0;
}

static int exists(const struct fx *f, const char *rel)
{
	char p[PATH_MAX];

	cg_dir(f, "pids", rel, p, sizeof(p));
	return access(p, F_OK) == 0;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct sbx_err err = { 0, "" };

	*state = f;
	if (geteuid() != 0 || rn_cgroup_detect(&f->cg, &err) < 0)
		return 0;        /* cases skip */
	snprintf(f->top, sizeof(f->top), "sbx-unit-%d", (int)getpid());
	snprintf(f->path, sizeof(f->path), "%s/by-runtime/sbx_unit_x", f->top);
	snprintf(f->sub, sizeof(f->sub), "%s/sandbox", f->path);
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	if (f->cg.name) {
		rn_cgroup_kill(&f->cg, f->top);
		rn_cgroup_remove(&f->cg, f->top, NULL);
	}
	free(f);
	return 0;
}

static void works_on_a_cgroup_it_did_not_make(void **state)
{
	struct fx *f = *state;
	char procs[PATH_MAX], pid[32];
	pid_t child;
	int st;
	FILE *w;

	if (!f->cg.name)
		skip();
	char mid[128];

	snprintf(mid, sizeof(mid), "%s/by-runtime", f->top);
	assert_int_equal(foreign_mkdir(f, f->top), 0);
	assert_int_equal(foreign_mkdir(f, mid), 0);
	assert_int_equal(foreign_mkdir(f, f->path), 0);
	assert_int_equal(foreign_mkdir(f, f->sub), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	/* the process sits in the sub-cgroup, as a runtime's sandbox would */
	snprintf(pid, sizeof(pid), "%d", (int)child);
	for (int i = 0; f->cg.v2 ? i < 1 : hiers_v1[i] != NULL; i++) {
		cg_dir(f, hiers_v1[i], f->sub, procs, sizeof(procs));
		strcat(procs, "/cgroup.procs");
		w = fopen(procs, "w");
		assert_non_null(w);
		fputs(pid, w);
		assert_int_equal(fclose(w), 0);
	}
	assert_int_equal(rn_cgroup_oom_kills(&f->cg, f->path), 0);
	assert_int_equal(rn_cgroup_pids_hits(&f->cg, f->path), 0);
	/* busy while a process is in it */
	assert_int_equal(rn_cgroup_remove(&f->cg, f->path, f->top), 1);
	rn_cgroup_kill(&f->cg, f->path);
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	/* the kernel lets go of a killed task's cgroup a moment after the
	 * wait: retried, as the runner's cleanup does */
	for (int i = 0; i < 2000 && rn_cgroup_remove(&f->cg, f->path, f->top) == 1; i++)
		usleep(5000);
	assert_false(exists(f, f->sub));
	assert_false(exists(f, f->path));
	/* the empty parent it made ("by-runtime") goes, top stays */
	assert_false(exists(f, mid));
	assert_true(exists(f, f->top));
	assert_int_equal(rn_cgroup_oom_kills(&f->cg, f->path), -1);
}

static void create_sets_limits_and_remove_keeps_busy_parents(void **state)
{
	struct fx *f = *state;
	struct rn_spec spec = { .memory_mb = 64, .pids = 32, .vcpus = 1 };
	struct sbx_err err = { 0, "" };
	char a[160], b[160], p[PATH_MAX], buf[64];
	FILE *r;

	if (!f->cg.name)
		skip();
	snprintf(a, sizeof(a), "%s/drv/sbx_unit_a", f->top);
	snprintf(b, sizeof(b), "%s/drv/sbx_unit_b", f->top);
	assert_int_equal(rn_cgroup_create(&f->cg, a, &spec, &err), 0);
	assert_int_equal(rn_cgroup_create(&f->cg, b, &spec, &err), 0);
	cg_dir(f, "pids", a, p, sizeof(p));
	strcat(p, "/pids.max");
	r = fopen(p, "r");
	assert_non_null(r);
	assert_non_null(fgets(buf, sizeof(buf), r));
	fclose(r);
	assert_string_equal(buf, "32\n");
	/* a's parent still holds b: only a goes */
	assert_int_equal(rn_cgroup_remove(&f->cg, a, f->top), 0);
	assert_false(exists(f, a));
	snprintf(p, sizeof(p), "%s/drv", f->top);
	assert_true(exists(f, p));
	assert_int_equal(rn_cgroup_remove(&f->cg, b, f->top), 0);
	assert_false(exists(f, p));
	/* paths that would leave the hierarchy are refused */
	assert_int_equal(rn_cgroup_create(&f->cg, "../escape", &spec, &err), -1);
	assert_int_equal(err.code, EINVAL);
	assert_int_equal(rn_cgroup_create(&f->cg, "/abs", &spec, &err), -1);
	assert_int_equal(rn_cgroup_remove(&f->cg, "a/../..", NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(works_on_a_cgroup_it_did_not_make, setup, teardown),
		cmocka_unit_test_setup_teardown(create_sets_limits_and_remove_keeps_busy_parents,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
