/* Unit tests of the image unpacker (runner/rn_oci_layer.c, rn_oci_tar.c,
 * rn_oci_compose.c, rn_oci_manifest.c) over a corpus of hostile tars built
 * here: each refused with EINVAL (EFBIG for the size cap) and nothing
 * written outside the layer's directory; setuid stripped; whiteouts and
 * opaque directories composed; manifests and configs checked. Unpacking
 * sets owners, so the walker's cases need root (skipped otherwise). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../runner/rn_oci_compose.h"
#include "../../runner/rn_oci_layer.h"
#include "../../runner/rn_oci_manifest.h"

static unsigned char tarbuf[1 << 20];
static size_t tarlen;

static void entry(const char *name, char type, unsigned mode, const char *link,
		  const void *data, size_t size)
{
	unsigned char *h = tarbuf + tarlen;
	unsigned sum = 0;

	memset(h, 0, 512);
	snprintf((char *)h, 100, "%s", name);
	snprintf((char *)h + 100, 8, "%07o", mode);
	snprintf((char *)h + 108, 8, "%07o", 0);
	snprintf((char *)h + 116, 8, "%07o", 0);
	snprintf((char *)h + 124, 12, "%011zo", size);
	snprintf((char *)h + 136, 12, "%011o", 1700000000);
	memset(h + 148, ' ', 8);
	h[156] = (unsigned char)type;
	if (link)
		snprintf((char *)h + 157, 100, "%s", link);
	memcpy(h + 257, "ustar", 6);
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	tarlen += 512;
	if (size) {
		memcpy(tarbuf + tarlen, data, size);
		tarlen += (size + 511) / 512 * 512;
	}
}

static void end(void)
{
	memset(tarbuf + tarlen, 0, 1024);
	tarlen += 1024;
}

static char top[64];   /* the parent of the layer dir: an escape lands here */

/* Unpack tarbuf into top/l: the rc, err filled. */
static int unpack(struct sbx_err *err, uint64_t cap)
{
	struct oci_layer_stats st;
	unsigned char d[32];
	int src = memfd_create("layer", MFD_CLOEXEC), dir, rc;
	char path[128];

	assert_true(src >= 0);
	assert_int_equal(write(src, tarbuf, tarlen), (ssize_t)tarlen);
	lseek(src, 0, SEEK_SET);
	snprintf(path, sizeof path, "%s/l", top);
	assert_int_equal(mkdir(path, 0755), 0);
	dir = open(path, O_RDONLY | O_DIRECTORY);
	rc = oci_layer_unpack(src, dir, cap, NULL, d, &st, err);
	close(dir);
	close(src);
	return rc;
}

static int setup(void **state)
{
	(void)state;
	if (geteuid() != 0)
		return 0;
	snprintf(top, sizeof top, "/tmp/test_oci.XXXXXX");
	assert_non_null(mkdtemp(top));
	tarlen = 0;
	return 0;
}

static int teardown(void **state)
{
	int fd;

	(void)state;
	if (geteuid() != 0)
		return 0;
	fd = open("/tmp", O_RDONLY | O_DIRECTORY);
	oci_remove_at(fd, top + 5);
	close(fd);
	return 0;
}

/* Only "l" in top: nothing escaped. */
static void nothing_escaped(void)
{
	char cmd[160];
	snprintf(cmd, sizeof cmd, "test \"$(ls -A %s)\" = l", top);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(access("/tmp/oci-unit-escape", F_OK), -1);
}

static void refused(const char *why)
{
	struct sbx_err err = { 0, "" };

	end();
	assert_int_equal(unpack(&err, 1 << 20), -1);
	assert_int_equal(err.code, EINVAL);
	assert_non_null(strstr(err.msg, why));
	nothing_escaped();
}

#define ROOT_ONLY() do { if (geteuid() != 0) { skip(); return; } } while (0)

static void test_absolute(void **s)
{
	(void)s; ROOT_ONLY();
	entry("/tmp/oci-unit-escape", '0', 0644, NULL, "x", 1);
	refused("absolute");
}

static void test_dotdot(void **s)
{
	(void)s; ROOT_ONLY();
	entry("a/../../escape", '0', 0644, NULL, "x", 1);
	refused("'..'");
}

static void test_symlink_then_write(void **s)
{
	(void)s; ROOT_ONLY();
	entry("lnk", '2', 0777, "..", NULL, 0);
	entry("lnk/escape", '0', 0644, NULL, "x", 1);
	refused("through a symlink");
}

static void test_symlink_dir_then_file(void **s)
{
	(void)s; ROOT_ONLY();
	entry("d", '2', 0777, "/tmp", NULL, 0);
	entry("d/oci-unit-escape", '0', 0644, NULL, "x", 1);
	refused("through a symlink");
}

static void test_hardlinks(void **s)
{
	(void)s; ROOT_ONLY();
	entry("h", '1', 0644, "../../etc/passwd", NULL, 0);
	refused("out of the layer");
}

static void test_hardlink_not_yet(void **s)
{
	(void)s; ROOT_ONLY();
	entry("h", '1', 0644, "later", NULL, 0);
	entry("later", '0', 0644, NULL, "x", 1);
	refused("written before it");
}

static void test_hardlink_to_symlink(void **s)
{
	(void)s; ROOT_ONLY();
	entry("lnk", '2', 0777, "/etc/shadow", NULL, 0);
	entry("h", '1', 0644, "lnk", NULL, 0);
	refused("no regular file");
}

static void test_hardlink_onto_itself(void **s)
{
	(void)s; ROOT_ONLY();
	entry("a", '0', 0644, NULL, "x", 1);
	entry("a", '1', 0644, "a", NULL, 0);
	refused("link");   /* EINVAL: the layer asked it, not the host's failure */
}

static void test_device(void **s)
{
	(void)s; ROOT_ONLY();
	entry("dev/sda", '4', 0666, NULL, NULL, 0);
	refused("device node");
}

static void test_whiteouts(void **s)
{
	(void)s; ROOT_ONLY();
	entry(".wh.", '0', 0644, NULL, NULL, 0);
	refused("whiteout of '/'");
	teardown(NULL); setup(NULL);
	entry("a/.wh...", '0', 0644, NULL, NULL, 0);
	refused("whiteout of '..'");
}

static void test_bomb(void **s)
{
	static unsigned char zeros[400 * 1024];
	struct sbx_err err = { 0, "" };

	(void)s; ROOT_ONLY();
	entry("a", '0', 0644, NULL, zeros, sizeof zeros);
	entry("b", '0', 0644, NULL, zeros, sizeof zeros);
	end();
	assert_int_equal(unpack(&err, 512 << 10), -1);   /* each under 512 KiB, both over */
	assert_int_equal(err.code, EFBIG);
}

static void test_bad_checksum(void **s)
{
	(void)s; ROOT_ONLY();
	entry("a", '0', 0644, NULL, "x", 1);
	tarbuf[0] = 'b';
	refused("checksum");
}

static void test_setuid_stripped_and_content(void **s)
{
	struct sbx_err err = { 0, "" };
	struct stat st;
	char path[128], buf[8] = "";
	int fd;

	(void)s; ROOT_ONLY();
	entry("bin/", '5', 0755, NULL, NULL, 0);
	entry("bin/su", '0', 04755, NULL, "#!", 2);
	entry("bin/alias", '1', 0644, "bin/su", NULL, 0);
	entry("bin/sh", '2', 0777, "/bin/busybox", NULL, 0);
	end();
	assert_int_equal(unpack(&err, 1 << 20), 0);
	snprintf(path, sizeof path, "%s/l/bin/su", top);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(st.st_nlink, 2);
	fd = open(path, O_RDONLY);
	assert_int_equal(read(fd, buf, sizeof buf), 2);
	close(fd);
	assert_string_equal(buf, "#!");
	snprintf(path, sizeof path, "%s/l/bin/sh", top);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
}

/* Two layers composed: the upper's whiteout and opaque dir hide the lower's. */
static void test_compose(void **s)
{
	struct sbx_err err = { 0, "" };
	char path[160];
	int root, l1, l2, t;

	(void)s; ROOT_ONLY();
	entry("keep", '0', 0644, NULL, "k", 1);
	entry("gone", '0', 0644, NULL, "g", 1);
	entry("d/", '5', 0755, NULL, NULL, 0);
	entry("d/old", '0', 0644, NULL, "o", 1);
	end();
	assert_int_equal(unpack(&err, 1 << 20), 0);
	snprintf(path, sizeof path, "%s/l", top);
	t = open(top, O_RDONLY | O_DIRECTORY);
	assert_int_equal(renameat(t, "l", t, "l1"), 0);
	tarlen = 0;
	entry(".wh.gone", '0', 0644, NULL, NULL, 0);
	entry("d/", '5', 0755, NULL, NULL, 0);
	entry("d/.wh..wh..opq", '0', 0644, NULL, NULL, 0);
	entry("d/new", '0', 0644, NULL, "n", 1);
	end();
	assert_int_equal(unpack(&err, 1 << 20), 0);
	assert_int_equal(mkdirat(t, "root", 0755), 0);
	root = openat(t, "root", O_RDONLY | O_DIRECTORY);
	l1 = openat(t, "l1", O_RDONLY | O_DIRECTORY);
	l2 = openat(t, "l", O_RDONLY | O_DIRECTORY);
	assert_int_equal(oci_compose_layer(root, l1, &err), 0);
	assert_int_equal(oci_compose_layer(root, l2, &err), 0);
	assert_int_equal(faccessat(root, "keep", F_OK, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(faccessat(root, "gone", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	assert_int_equal(faccessat(root, "d/old", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	assert_int_equal(faccessat(root, "d/new", F_OK, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(faccessat(root, ".wh.gone", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	assert_int_equal(faccessat(root, "d/.wh..wh..opq", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	close(root); close(l1); close(l2); close(t);
}

static const char *const H = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

static void test_manifest(void **s)
{
	struct sbx_err err = { 0, "" };
	struct oci_plan p;
	char json[1024];

	(void)s;
	snprintf(json, sizeof json, "{\"config\":{\"digest\":\"sha256:%s\"},\"layers\":["
		 "{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+gzip\","
		 "\"digest\":\"sha256:%s\"}]}", H, H);
	assert_int_equal(oci_manifest_parse(json, strlen(json), &p, &err), 0);
	assert_int_equal(p.n_layers, 1);
	assert_string_equal(p.layer[0].hex, H);
	assert_string_equal(p.config.path + 13, H);
	/* another algorithm, a short digest, zstd: refused */
	snprintf(json, sizeof json, "{\"config\":{\"digest\":\"sha512:%s\"},\"layers\":[]}", H);
	assert_int_equal(oci_manifest_parse(json, strlen(json), &p, &err), -1);
	snprintf(json, sizeof json, "{\"config\":{\"digest\":\"sha256:%.10s\"},\"layers\":[]}", H);
	assert_int_equal(oci_manifest_parse(json, strlen(json), &p, &err), -1);
	snprintf(json, sizeof json, "{\"config\":{\"digest\":\"sha256:%s\"},\"layers\":[{"
		 "\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+zstd\","
		 "\"digest\":\"sha256:%s\"}]}", H, H);
	assert_int_equal(oci_manifest_parse(json, strlen(json), &p, &err), -1);
	/* docker-archive paths: clean and relative only */
	snprintf(json, sizeof json, "[{\"Config\":\"%s.json\",\"Layers\":[\"x/layer.tar\"]}]", H);
	assert_int_equal(oci_docker_parse(json, strlen(json), &p, &err), 0);
	assert_string_equal(p.config.hex, H);
	assert_string_equal(p.layer[0].hex, "");
	snprintf(json, sizeof json, "[{\"Config\":\"c.json\",\"Layers\":[\"../../etc/shadow\"]}]");
	assert_int_equal(oci_docker_parse(json, strlen(json), &p, &err), -1);
	snprintf(json, sizeof json, "[{\"Config\":\"/etc/passwd\",\"Layers\":[]}]");
	assert_int_equal(oci_docker_parse(json, strlen(json), &p, &err), -1);
}

static void test_config(void **s)
{
	struct sbx_err err = { 0, "" };
	struct oci_config c;
	char json[1024];

	(void)s;
	snprintf(json, sizeof json, "{\"config\":{\"Env\":[\"A=1\",\"B=x=y\"],\"WorkingDir\":\"/app\","
		 "\"User\":\"1000\"},\"rootfs\":{\"diff_ids\":[\"sha256:%s\"]}}", H);
	assert_int_equal(oci_config_parse(json, strlen(json), &c, &err), 0);
	assert_int_equal(c.n_env, 2);
	assert_string_equal(c.env[1], "B=x=y");
	assert_string_equal(c.workdir, "/app");
	assert_int_equal(c.n_diff, 1);
	oci_config_free(&c);
	snprintf(json, sizeof json, "{\"config\":{\"WorkingDir\":\"app\"},\"rootfs\":{\"diff_ids\":[]}}");
	assert_int_equal(oci_config_parse(json, strlen(json), &c, &err), -1);
	snprintf(json, sizeof json, "{\"config\":{\"Env\":[\"=x\"]},\"rootfs\":{\"diff_ids\":[]}}");
	assert_int_equal(oci_config_parse(json, strlen(json), &c, &err), -1);
	snprintf(json, sizeof json, "{\"config\":{}}");
	assert_int_equal(oci_config_parse(json, strlen(json), &c, &err), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_absolute, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dotdot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_then_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_dir_then_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hardlinks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hardlink_not_yet, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hardlink_to_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hardlink_onto_itself, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device, setup, teardown),
		cmocka_unit_test_setup_teardown(test_whiteouts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bomb, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_checksum, setup, teardown),
		cmocka_unit_test_setup_teardown(test_setuid_stripped_and_content, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compose, setup, teardown),
		cmocka_unit_test(test_manifest),
		cmocka_unit_test(test_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
