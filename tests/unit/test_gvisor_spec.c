/* Unit tests of the gvisor driver's pure parts: the OCI config.json it
 * writes for runsc (runner/driver_gvisor_spec.c) and the runsc version
 * parse of its probe (runner/driver_gvisor_version.c). */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <cJSON.h>

#include "../../runner/driver_gvisor.h"

static cJSON *config_netns(struct rn_spec *spec, const char *netns)
{
	struct gv_bundle b = {
		.spec = spec, .rootfs = "/st/sandboxes/x/root", .runtime_dir = "/st/runtime",
		.loader = "ld-linux-x86-64.so.2", .sockdir = "/st/sandboxes/x/sock/guest",
		.cgroup_path = "/sandbox/gvisor_r/x",
		.netns_path = netns, .host_pids = 64 + 4 * spec->pids,
	};
	char *txt = gv_spec_json(&b);
	cJSON *c;

	assert_non_null(txt);
	c = cJSON_Parse(txt);
	cJSON_free(txt);
	assert_non_null(c);
	return c;
}

static cJSON *config(struct rn_spec *spec)
{
	return config_netns(spec, "");
}

static void base_spec(struct rn_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->memory_mb = 256;
	s->pids = 100;
	s->vcpus = 2;
	s->disk_mb = 32;
	s->nofile = 1024;
	s->network = RN_NET_DENY_ALL;
}

static int has_arg(const cJSON *args, const char *v)
{
	const cJSON *a;

	cJSON_ArrayForEach(a, args)
		if (cJSON_IsString(a) && !strcmp(a->valuestring, v))
			return 1;
	return 0;
}

static const cJSON *mount_at(const cJSON *c, const char *dst)
{
	const cJSON *m;

	cJSON_ArrayForEach(m, cJSON_GetObjectItem(c, "mounts"))
		if (!strcmp(cJSON_GetObjectItem(m, "destination")->valuestring, dst))
			return m;
	return NULL;
}

static long long rlimit(const cJSON *c, const char *type)
{
	const cJSON *r;

	cJSON_ArrayForEach(r, cJSON_GetObjectItem(cJSON_GetObjectItem(c, "process"), "rlimits"))
		if (!strcmp(cJSON_GetObjectItem(r, "type")->valuestring, type))
			return (long long)cJSON_GetObjectItem(r, "hard")->valuedouble;
	return -1;
}

/* the agent as PID 1 through the runtime's loader, with the gVisor flags */
static void test_agent_args(void **state)
{
	struct rn_spec s;
	cJSON *c, *args;

	(void)state;
	base_spec(&s);
	c = config(&s);
	args = cJSON_GetObjectItem(cJSON_GetObjectItem(c, "process"), "args");
	assert_string_equal(cJSON_GetArrayItem(args, 0)->valuestring,
			    "/.sandbox/lib/ld-linux-x86-64.so.2");
	assert_true(has_arg(args, "unix:/run/sbx/agent.sock"));
	assert_true(has_arg(args, "--hangup-on-eof"));
	/* no HOME in the sandbox's env: runsc's HOME=/root is dropped */
	assert_true(has_arg(args, "--unsetenv"));
	cJSON_Delete(c);
}

static void test_home_kept_when_set(void **state)
{
	struct rn_spec s;
	char *names[] = { "HOME" }, *values[] = { "/work" };
	cJSON *c, *env;

	(void)state;
	base_spec(&s);
	s.env_names[0] = names[0];
	s.env_values[0] = values[0];
	s.n_env = 1;
	c = config(&s);
	assert_false(has_arg(cJSON_GetObjectItem(cJSON_GetObjectItem(c, "process"), "args"),
			     "--unsetenv"));
	env = cJSON_GetObjectItem(cJSON_GetObjectItem(c, "process"), "env");
	assert_int_equal(cJSON_GetArraySize(env), 1);
	assert_string_equal(cJSON_GetArrayItem(env, 0)->valuestring, "HOME=/work");
	cJSON_Delete(c);
}

/* limits: NPROC is the graceful one, the cgroup's pids only a backstop */
static void test_limits(void **state)
{
	struct rn_spec s;
	cJSON *c, *lin, *res;
	const cJSON *tmp;

	(void)state;
	base_spec(&s);
	c = config(&s);
	assert_int_equal(rlimit(c, "RLIMIT_NPROC"), 100);
	assert_int_equal(rlimit(c, "RLIMIT_NOFILE"), 1024);
	assert_int_equal(rlimit(c, "RLIMIT_CORE"), 0);
	lin = cJSON_GetObjectItem(c, "linux");
	assert_string_equal(cJSON_GetObjectItem(lin, "cgroupsPath")->valuestring,
			    "/sandbox/gvisor_r/x");
	res = cJSON_GetObjectItem(lin, "resources");
	assert_int_equal((long long)cJSON_GetObjectItem(cJSON_GetObjectItem(res, "memory"),
							 "limit")->valuedouble, 256LL << 20);
	assert_int_equal((long long)cJSON_GetObjectItem(cJSON_GetObjectItem(res, "pids"),
							 "limit")->valuedouble, 64 + 400);
	assert_int_equal((long long)cJSON_GetObjectItem(cJSON_GetObjectItem(res, "cpu"),
							 "quota")->valuedouble, 200000);
	/* /tmp is the root's own (disk_mb bounds the root's upper dir),
	 * never runsc's unbounded tmpfs */
	tmp = mount_at(c, "/tmp");
	assert_non_null(tmp);
	assert_string_equal(cJSON_GetObjectItem(tmp, "type")->valuestring, "bind");
	assert_string_equal(cJSON_GetObjectItem(tmp, "source")->valuestring,
			    "/st/sandboxes/x/root/tmp");
	assert_true(has_arg(cJSON_GetObjectItem(tmp, "options"), "nosuid"));
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(c, "process"),
						     "noNewPrivileges")));
	cJSON_Delete(c);
}

/* the socket dir rw, everything else of the host read-only */
static void test_mounts(void **state)
{
	struct rn_spec s;
	cJSON *c;
	const cJSON *m;

	(void)state;
	base_spec(&s);
	c = config(&s);
	m = mount_at(c, "/run/sbx");
	assert_non_null(m);
	assert_string_equal(cJSON_GetObjectItem(m, "source")->valuestring, "/st/sandboxes/x/sock/guest");
	assert_true(has_arg(cJSON_GetObjectItem(m, "options"), "rw"));
	m = mount_at(c, "/.sandbox");
	assert_true(has_arg(cJSON_GetObjectItem(m, "options"), "ro"));
	/* the /etc files are written into the root, not bound: a bind mount
	 * costs a gofer connection for the sandbox's life */
	assert_null(mount_at(c, "/etc/passwd"));
	assert_null(mount_at(c, "/etc/resolv.conf"));
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(c, "root"), "path")->valuestring,
			    "/st/sandboxes/x/root");
	cJSON_Delete(c);
}

static const cJSON *network_ns(const cJSON *c)
{
	const cJSON *n;

	cJSON_ArrayForEach(n, cJSON_GetObjectItem(cJSON_GetObjectItem(c, "linux"), "namespaces"))
		if (!strcmp(cJSON_GetObjectItem(n, "type")->valuestring, "network"))
			return n;
	return NULL;
}

/* deny-all: a new empty netns (no path; runsc --network=none); allow-all:
 * the watcher's netns the runner prepared */
static void test_network_namespace(void **state)
{
	struct rn_spec s;
	cJSON *c;
	const cJSON *n;

	(void)state;
	base_spec(&s);
	c = config(&s);
	n = network_ns(c);
	assert_non_null(n);
	assert_null(cJSON_GetObjectItem(n, "path"));
	cJSON_Delete(c);
	s.network = RN_NET_ALLOW_ALL;
	c = config_netns(&s, "/proc/4242/ns/net");
	n = network_ns(c);
	assert_non_null(n);
	assert_non_null(cJSON_GetObjectItem(n, "path"));
	assert_string_equal(cJSON_GetObjectItem(n, "path")->valuestring, "/proc/4242/ns/net");
	cJSON_Delete(c);
}

static void test_version(void **state)
{
	(void)state;
	assert_int_equal(gv_parse_version("runsc version 0.0~20240729.0\nspec: 1.0.2-dev\n"),
			 20240729);
	assert_int_equal(gv_parse_version("runsc version release-20221219.0\n"), 20221219);
	assert_int_equal(gv_parse_version("runsc version VERSION_MISSING\nspec: 1.0.2\n"), -1);
	assert_int_equal(gv_parse_version("build 120240729999"), -1);
	assert_int_equal(gv_parse_version(""), -1);
}

/* ---- the /etc files written into the root (the runner is the host's
 * root there: nothing of an image's path may lead it out) ---- */

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void file_is(const char *path, const char *want)
{
	char buf[256] = "";
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	assert_string_equal(buf, want);
}

static int spec_write_in(const char *root, const char *dir)
{
	struct rn_spec spec;
	struct sbx_err err = { 0 };
	struct gv_bundle b = {
		.spec = &spec, .rootfs = root, .runtime_dir = "/st/runtime",
		.loader = "ld-linux-x86-64.so.2", .sockdir = "/st/sock", .cgroup_path = "/x",
		.netns_path = "", .host_pids = 64, .slot = -1,
	};

	base_spec(&spec);
	return gv_spec_write(&b, dir, &err);
}

static void rm_tree(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* An image whose /etc/passwd is a symlink to a host file and whose
 * /etc/hosts is a hard link to one: both host files stay as they were,
 * the root's names become files of their own. */
static void test_etc_links_not_followed(void **state)
{
	char dir[] = "/tmp/gvspec.XXXXXX", p[PATH_MAX], q[PATH_MAX];
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/root", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/root/etc", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/host_passwd", dir);
	put_file(p, "HOST passwd\n");
	snprintf(q, sizeof(q), "%s/root/etc/passwd", dir);
	assert_int_equal(symlink(p, q), 0);
	snprintf(p, sizeof(p), "%s/host_hosts", dir);
	put_file(p, "HOST hosts\n");
	snprintf(q, sizeof(q), "%s/root/etc/hosts", dir);
	assert_int_equal(link(p, q), 0);

	snprintf(p, sizeof(p), "%s/root", dir);
	assert_int_equal(spec_write_in(p, dir), 0);

	snprintf(p, sizeof(p), "%s/host_passwd", dir);
	file_is(p, "HOST passwd\n");
	snprintf(p, sizeof(p), "%s/host_hosts", dir);
	file_is(p, "HOST hosts\n");
	snprintf(p, sizeof(p), "%s/root/etc/passwd", dir);
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	snprintf(p, sizeof(p), "%s/root/etc/hosts", dir);
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISREG(st.st_mode) && st.st_nlink == 1);
	file_is(p, "127.0.0.1\tlocalhost sandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n");
	snprintf(p, sizeof(p), "%s/config.json", dir);
	assert_int_equal(lstat(p, &st), 0);
	rm_tree(dir);
}

/* An image whose /etc is a symlink to a host directory: refused, and
 * nothing lands where it points. */
static void test_etc_symlink_dir_refused(void **state)
{
	char dir[] = "/tmp/gvspec.XXXXXX", p[PATH_MAX], q[PATH_MAX];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/root", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/host_etc", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(q, sizeof(q), "%s/root/etc", dir);
	assert_int_equal(symlink(p, q), 0);

	snprintf(p, sizeof(p), "%s/root", dir);
	assert_int_equal(spec_write_in(p, dir), -1);
	snprintf(p, sizeof(p), "%s/host_etc/passwd", dir);
	assert_int_equal(access(p, F_OK), -1);
	snprintf(p, sizeof(p), "%s/host_etc/resolv.conf", dir);
	assert_int_equal(access(p, F_OK), -1);
	rm_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agent_args),
		cmocka_unit_test(test_home_kept_when_set),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_mounts),
		cmocka_unit_test(test_network_namespace),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_etc_links_not_followed),
		cmocka_unit_test(test_etc_symlink_dir_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
