/* Unit tests of what the runner reads from an image's own files
 * (runner/rn_images.c): a value of the build's stamp (digest, size, a
 * runtime image's node/npm/corepack) and a package's version in dpkg's
 * status; absent, empty, oversized or unprintable values are no value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../runner/rn_images.h"

static const char STAMP[] =
	"name=node22\n"
	"version=1\n"
	"node=22.23.5\n"
	"npm=10.9.9\n"
	"nodejs=not-node\n"
	"empty=\n"
	"bad=a\tb\n"
	"digest=sha256:3fae4724ac2f8f7acf8efd15b5502103e8b92873b1688db1a229b255543fe446\n"
	"size=699212405";   /* the last line without its newline */

static void stamp_values(void **state)
{
	char out[80];
	(void)state;
	assert_int_equal(rn_images_stamp_value(STAMP, "node", out, sizeof out), 0);
	assert_string_equal(out, "22.23.5");   /* not nodejs= */
	assert_int_equal(rn_images_stamp_value(STAMP, "nodejs", out, sizeof out), 0);
	assert_string_equal(out, "not-node");
	assert_int_equal(rn_images_stamp_value(STAMP, "digest", out, sizeof out), 0);
	assert_int_equal(strlen(out), 71);
	assert_int_equal(rn_images_stamp_value(STAMP, "size", out, sizeof out), 0);
	assert_string_equal(out, "699212405");
}

static void stamp_refusals(void **state)
{
	char out[80], small[8];
	(void)state;
	assert_int_equal(rn_images_stamp_value(STAMP, "corepack", out, sizeof out), -1);
	assert_int_equal(rn_images_stamp_value(STAMP, "empty", out, sizeof out), -1);
	assert_int_equal(rn_images_stamp_value(STAMP, "bad", out, sizeof out), -1);
	assert_int_equal(rn_images_stamp_value(STAMP, "npm", small, sizeof small), 0);
	assert_int_equal(rn_images_stamp_value(STAMP, "node", small, sizeof small), 0);   /* 7 chars + NUL fit */
	assert_int_equal(rn_images_stamp_value(STAMP, "size", small, sizeof small), -1);  /* 9 do not */
	assert_int_equal(rn_images_stamp_value(STAMP, "dige", out, sizeof out), -1);     /* a prefix is no key */
	assert_int_equal(rn_images_stamp_value("", "node", out, sizeof out), -1);
}

static void dpkg_versions(void **state)
{
	static const char st[] =
		"Package: nodejs-doc\nVersion: 1.0\n\n"
		"Package: nodejs\nStatus: install ok installed\nVersion: 20.19.2+dfsg-1+deb13u3\n\n"
		"Package: python3\nVersion: 3.13.5-1\n";
	char out[64];
	(void)state;
	assert_int_equal(rn_images_dpkg_version(st, sizeof st - 1, "nodejs", out, sizeof out), 0);
	assert_string_equal(out, "20.19.2");
	assert_int_equal(rn_images_dpkg_version(st, sizeof st - 1, "python3", out, sizeof out), 0);
	assert_string_equal(out, "3.13.5");
	assert_int_equal(rn_images_dpkg_version(st, sizeof st - 1, "node", out, sizeof out), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stamp_values),
		cmocka_unit_test(stamp_refusals),
		cmocka_unit_test(dpkg_versions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
