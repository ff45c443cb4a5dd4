/* Unit tests of the runner's create-request parsing (runner/rn_spec.c):
 * defaults, bounds, types, and that every error names its field. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../runner/rn_spec.h"
#include "sbx_json.h"

static int parse(const char *json, struct rn_spec *spec, struct sbx_err *err)
{
	cJSON *o = sbx_json_parse_object(json, strlen(json), err);
	int rc;

	assert_non_null(o);
	rc = rn_spec_parse(o, spec, err);
	cJSON_Delete(o);
	return rc;
}

static void test_defaults(void **state)
{
	struct rn_spec s;
	struct sbx_err err = { 0, "" };

	(void)state;
	assert_int_equal(parse("{\"op\":\"create\"}", &s, &err), 0);
	assert_int_equal(s.timeout_ms, 300000);
	assert_int_equal(s.vcpus, 1);
	assert_int_equal(s.memory_mb, 512);
	assert_int_equal(s.pids, 512);
	assert_int_equal(s.disk_mb, 1024);
	assert_int_equal(s.nofile, 1024);
	assert_int_equal(s.network, RN_NET_DENY_ALL);
	assert_string_equal(s.image, "default");
	assert_int_equal(s.preview_auth, 0);
	assert_int_equal(s.persistent, 0);
	assert_int_equal(s.snapshot_expires_in_ms, 0);
	assert_int_equal(s.snapshot_keep_last, 0);
	rn_spec_free(&s);
}

static void test_values(void **state)
{
	struct rn_spec s;
	struct sbx_err err = { 0, "" };

	(void)state;
	assert_int_equal(parse("{\"memory_mb\":64,\"vcpus\":2,\"ports\":[3000,8080],"
			       "\"env\":{\"A\":\"x\",\"B_2\":\"\"},\"network\":\"allow-all\","
			       "\"image\":\"py-3.11\",\"preview_auth\":true,\"persistent\":true,"
			       "\"snapshot_expires_in_ms\":3600000,\"snapshot_keep_last\":5}", &s, &err), 0);
	assert_int_equal(s.preview_auth, 1);
	assert_int_equal(s.persistent, 1);
	assert_int_equal(s.snapshot_expires_in_ms, 3600000);
	assert_int_equal(s.snapshot_keep_last, 5);
	assert_int_equal(s.memory_mb, 64);
	assert_int_equal(s.n_ports, 2);
	assert_int_equal(s.ports[1], 8080);
	assert_int_equal(s.n_env, 2);
	assert_string_equal(s.env_names[1], "B_2");
	assert_string_equal(s.env_values[0], "x");
	assert_int_equal(s.network, RN_NET_ALLOW_ALL);
	assert_string_equal(s.image, "py-3.11");
	assert_string_equal(s.image_ref, "");
	rn_spec_wipe_values(&s);
	assert_null(s.env_values[0]);
	assert_string_equal(s.env_names[0], "A");
	rn_spec_free(&s);
}

/* A registry reference is kept as the image's reference, resolved to a
 * local name only by the runner (a pull when it lacks it). */
static void test_image_ref(void **state)
{
	struct rn_spec s;
	struct sbx_err err = { 0, "" };

	(void)state;
	assert_int_equal(parse("{\"image\":\"127.0.0.1:5000/team/app:1.2\"}", &s, &err), 0);
	assert_string_equal(s.image_ref, "127.0.0.1:5000/team/app:1.2");
	assert_string_equal(s.image, "");
	rn_spec_free(&s);
	assert_true(rn_image_ref_ok("registry.example/app@sha256:0123abcd"));
	assert_false(rn_image_ref_ok("-x/app"));
	assert_false(rn_image_ref_ok("/app"));
}

static void test_errors_name_field(void **state)
{
	static const struct { const char *json, *field; } cases[] = {
		{ "{\"memory_mb\":-1}", "memory_mb" },
		{ "{\"memory_mb\":100000}", "memory_mb" },
		{ "{\"vcpus\":\"2\"}", "vcpus" },
		{ "{\"pids\":1.5}", "pids" },
		{ "{\"timeout_ms\":0}", "timeout_ms" },
		{ "{\"disk_mb\":true}", "disk_mb" },
		{ "{\"nofile\":1e9}", "nofile" },
		{ "{\"ports\":[0]}", "ports" },
		{ "{\"ports\":[1024]}", "ports" },
		{ "{\"ports\":\"3000\"}", "ports" },
		{ "{\"env\":{\"A\":1}}", "env" },
		{ "{\"env\":{\"1A\":\"x\"}}", "env" },
		{ "{\"env\":[]}", "env" },
		{ "{\"network\":\"open\"}", "network" },
		{ "{\"image\":\"../etc\"}", "image" },
		{ "{\"image\":\"reg:5000/../app\"}", "image" },
		{ "{\"image\":\"reg:5000//app\"}", "image" },
		{ "{\"image\":\"reg:5000/-app\"}", "image" },
		{ "{\"image\":\"reg:5000/app/\"}", "image" },
		{ "{\"image\":\"reg:5000/a pp\"}", "image" },
		{ "{\"image\":7}", "image" },
		{ "{\"preview_auth\":\"yes\"}", "preview_auth" },
		{ "{\"persistent\":1}", "persistent" },
		{ "{\"snapshot_keep_last\":101}", "snapshot_keep_last" },
		{ "{\"snapshot_expires_in_ms\":-1}", "snapshot_expires_in_ms" },
		{ "{\"colour\":1}", "colour" },
	};
	struct rn_spec s;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sbx_err err = { 0, "" };
		assert_int_equal(parse(cases[i].json, &s, &err), -1);
		assert_int_equal(err.code, EINVAL);
		if (!strstr(err.msg, cases[i].field))
			fail_msg("%s: message \"%s\" does not name %s", cases[i].json,
				 err.msg, cases[i].field);
	}
}

/* nofile is bounded by memory_mb (RN_NOFILE_PER_MB per MB): the bound
 * itself passes, one more is refused naming nofile and the bound, and the
 * default nofile fits the smallest memory_mb. */
static void test_nofile_bounded_by_memory(void **state)
{
	struct rn_spec s;
	struct sbx_err err = { 0, "" };

	(void)state;
	assert_int_equal(parse("{\"memory_mb\":64,\"nofile\":2048}", &s, &err), 0);
	assert_int_equal(s.nofile, 2048);
	rn_spec_free(&s);
	assert_int_equal(parse("{\"memory_mb\":64,\"nofile\":2049}", &s, &err), -1);
	assert_int_equal(err.code, EINVAL);
	assert_non_null(strstr(err.msg, "nofile: at most 2048 with memory_mb 64"));
	assert_int_equal(parse("{\"memory_mb\":32}", &s, &err), 0);
	assert_int_equal(s.nofile, 1024);
	rn_spec_free(&s);
	assert_int_equal(parse("{\"memory_mb\":2048,\"nofile\":65536}", &s, &err), 0);
	rn_spec_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_image_ref),
		cmocka_unit_test(test_errors_name_field),
		cmocka_unit_test(test_nofile_bounded_by_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
