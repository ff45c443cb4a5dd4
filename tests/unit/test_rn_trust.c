/* cmocka tests of what a sandbox gets to trust the runner's egress CA
 * (runner/rn_egress_trust.c): the bundle (the image's, then the CA, once
 * however many snapshots the root went through), the env a sandbox's own
 * env does not set, and the install under a root that never follows a
 * symlink. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "sbx_fs.h"
#include "../../runner/rn_egress_trust.h"

#define CA "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n"

static void bundle_once(void **st)
{
	char *a, *b;

	(void)st;
	rn_egress_trust_set(CA);
	a = rn_egress_trust_bundle("IMAGE", 5);
	assert_string_equal(a, "IMAGE\n" CA);
	b = rn_egress_trust_bundle(a, strlen(a));      /* a fork of a snapshot */
	assert_string_equal(b, a);
	free(a);
	free(b);
	rn_egress_trust_set(NULL);
}

static void env_unless_set(void **st)
{
	struct rn_spec spec;
	const char *out[RN_TRUST_ENV_MAX];
	char name[] = "SSL_CERT_FILE", value[] = "/mine.pem";

	(void)st;
	memset(&spec, 0, sizeof(spec));
	rn_egress_trust_set(NULL);
	assert_int_equal(rn_egress_trust_env(&spec, out), 0);  /* no CA: nothing */
	rn_egress_trust_set(CA);
	assert_int_equal(rn_egress_trust_env(&spec, out), 3);
	spec.n_env = 1;
	spec.env_names[0] = name;
	spec.env_values[0] = value;
	assert_int_equal(rn_egress_trust_env(&spec, out), 2);
	assert_string_equal(out[0], "REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt");
	assert_string_equal(out[1], "NODE_EXTRA_CA_CERTS=/.sandbox/egress-ca.pem");
	rn_egress_trust_set(NULL);
}

static void install_no_symlink(void **st)
{
	char dir[] = "/tmp/trust-test.XXXXXX", p[256], buf[256];
	int root;

	(void)st;
	assert_non_null(mkdtemp(dir));
	rn_egress_trust_set(CA);
	root = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(root >= 0);
	/* a fresh root: the directories are made, the bundle is the CA */
	assert_int_equal(rn_egress_trust_install(root), 0);
	snprintf(p, sizeof(p), "%s/" RN_TRUST_BUNDLE_PATH, dir);
	assert_true(sbx_read_file(p, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, CA);
	/* etc/ssl a symlink (a snapshot's doing): refused, nothing written there */
	snprintf(p, sizeof(p), "%s/etc/ssl", dir);
	assert_int_equal(sbx_rmtree(p), 0);
	assert_int_equal(symlink("/tmp", p), 0);
	assert_int_equal(rn_egress_trust_install(root), -1);
	assert_int_equal(errno, ENOTDIR);
	close(root);
	assert_int_equal(sbx_rmtree(dir), 0);
	rn_egress_trust_set(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bundle_once),
		cmocka_unit_test(env_unless_set),
		cmocka_unit_test(install_no_symlink),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
