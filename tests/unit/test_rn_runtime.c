/* Unit tests of the agent runtime's preload list (runner/rn_runtime.c):
 * a runtime prepared from a real dynamically linked program names its
 * shared objects, in ldd's order and by their paths inside, and not the
 * loader; a list that is absent, empty, too long, relative or holds a NUL
 * is no list (the agent's libraries are then searched for). */
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../runner/rn_runtime.h"
#include "sbx_fs.h"

struct fixture {
	char top[64];
	char dir[96];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->top, sizeof(f->top), "/tmp/test_rn_runtime.XXXXXX");
	if (!mkdtemp(f->top))
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s/runtime", f->top);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	sbx_rmtree(f->top);
	free(f);
	return 0;
}

static void put_list(const struct fixture *f, const char *text, size_t n)
{
	char path[160];
	int fd;

	snprintf(path, sizeof(path), "%s/" RN_RUNTIME_PRELOAD, f->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, n), (ssize_t)n);
	close(fd);
}

/* /bin/true links libc only: the list is libc by its path inside, the
 * loader is the loader and not in the list, and the file is there. */
static void prepared_from_a_real_program(void **state)
{
	struct fixture *f = *state;
	char loader[64], list[RN_RUNTIME_PRELOAD_MAX], path[PATH_MAX];
	struct sbx_err err = { 0, "" };

	assert_int_equal(rn_runtime_prepare("/bin/true", f->dir, loader, sizeof loader, &err), 0);
	assert_int_equal(strncmp(loader, "ld-", 3), 0);
	assert_int_equal(rn_runtime_preload(f->dir, list, sizeof list), 0);
	assert_string_equal(list, RN_RUNTIME_MOUNT "/lib/libc.so.6");
	assert_null(strstr(list, loader));
	/* every name in it is a file the runtime holds */
	snprintf(path, sizeof(path), "%s/lib/libc.so.6", f->dir);
	assert_int_equal(access(path, R_OK), 0);
}

static void refused_lists(void **state)
{
	struct fixture *f = *state;
	char list[RN_RUNTIME_PRELOAD_MAX], small[8], big[RN_RUNTIME_PRELOAD_MAX + 8];
	struct sbx_err err = { 0, "" };
	char loader[64];

	assert_int_equal(rn_runtime_prepare("/bin/true", f->dir, loader, sizeof loader, &err), 0);
	put_list(f, "", 0);
	assert_int_equal(rn_runtime_preload(f->dir, list, sizeof list), -1);
	assert_string_equal(list, "");
	put_list(f, "lib/libc.so.6", 13);                      /* relative */
	assert_int_equal(rn_runtime_preload(f->dir, list, sizeof list), -1);
	assert_string_equal(list, "");
	put_list(f, "/.sandbox/lib/a\0b", 17);                 /* a NUL inside */
	assert_int_equal(rn_runtime_preload(f->dir, list, sizeof list), -1);
	put_list(f, "/.sandbox/lib/libc.so.6", 23);
	assert_int_equal(rn_runtime_preload(f->dir, small, sizeof small), -1);   /* too long for it */
	assert_string_equal(small, "");
	assert_int_equal(rn_runtime_preload(f->dir, list, sizeof list), 0);
	memset(big, '/', sizeof big);
	put_list(f, big, sizeof big);                           /* over the maximum */
	assert_int_equal(rn_runtime_preload(f->dir, list, sizeof list), -1);
	sbx_rmtree(f->dir);                                     /* no runtime at all */
	assert_int_equal(rn_runtime_preload(f->dir, list, sizeof list), -1);
	assert_string_equal(list, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(prepared_from_a_real_program, setup, teardown),
		cmocka_unit_test_setup_teardown(refused_lists, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
