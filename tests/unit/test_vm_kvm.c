/* Unit tests of runner/driver_vm_kvm.c: whether KVM boots our guest
 * kernel here. A real KVM that works cannot be had on every host, so the
 * QEMU here is a mock: a shell script (fake_qemu_*) that writes what a
 * booting guest would to the serial file it is given, or nothing, and
 * ends as a guest would (exit 0 after a panic with -no-reboot) or not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../runner/driver_vm.h"

struct fx {
	char dir[64];
	char qemu[128], args[128];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test-vm-kvm.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->qemu, sizeof(f->qemu), "%s/fake_qemu", f->dir);
	snprintf(f->args, sizeof(f->args), "%s/args", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* the mock: its arguments one a line into args, the serial file's path
 * in $ser, then body */
static void fake_qemu(struct fx *f, const char *body)
{
	FILE *o = fopen(f->qemu, "w");

	assert_non_null(o);
	fprintf(o, "#!/bin/sh\n"
		"for a in \"$@\"; do echo \"$a\"; done > %s\n"
		"ser=\n"
		"while [ $# -gt 0 ]; do [ \"$1\" = -serial ] && ser=${2#file:}; shift; done\n"
		"%s\n", f->args, body);
	fclose(o);
	assert_int_equal(chmod(f->qemu, 0755), 0);
}

static int args_have(struct fx *f, const char *line)
{
	char buf[512];
	FILE *i = fopen(f->args, "r");
	int found = 0;

	assert_non_null(i);
	while (fgets(buf, sizeof(buf), i)) {
		buf[strcspn(buf, "\n")] = 0;
		if (!strcmp(buf, line))
			found = 1;
	}
	fclose(i);
	return found;
}

static void test_guest_that_boots_and_panics_is_kvm(void **state)
{
	struct fx *f = *state;

	fake_qemu(f, "echo 'Linux version 6.12' > \"$ser\"; echo 'Kernel panic' >> \"$ser\"; exit 0");
	assert_int_equal(vm_kvm_boots(f->qemu, "/the/kernel"), 1);
	/* what the probe asks of QEMU: KVM, our kernel, a panic that ends it */
	assert_true(args_have(f, "kvm"));
	assert_true(args_have(f, "/the/kernel"));
	assert_true(args_have(f, "-no-reboot"));
	assert_true(args_have(f, "console=ttyS0 earlyprintk=serial panic=-1"));
}

/* kvm-pvm: the guest spins before its first line; the probe gives up
 * after the silent bound, kills it, and says TCG */
static void test_silent_guest_is_not_kvm(void **state)
{
	struct fx *f = *state;
	char pidf[160], buf[32] = "";
	FILE *p;

	snprintf(pidf, sizeof(pidf), "%s/pid", f->dir);
	fake_qemu(f, "");
	/* (exec: the pid written is the one the probe must kill) */
	p = fopen(f->qemu, "a");
	assert_non_null(p);
	fprintf(p, "echo $$ > %s; exec sleep 120\n", pidf);
	fclose(p);
	assert_int_equal(vm_kvm_boots(f->qemu, "/the/kernel"), 0);
	p = fopen(pidf, "r");
	assert_non_null(p);
	assert_non_null(fgets(buf, sizeof(buf), p));
	fclose(p);
	/* killed and reaped: no such process any more */
	assert_int_equal(kill(atoi(buf), 0), -1);
}

/* a busy host: the guest prints at once but ends after the silent bound */
static void test_slow_guest_that_prints_is_waited_for(void **state)
{
	struct fx *f = *state;

	fake_qemu(f, "echo 'Linux version 6.12' > \"$ser\"; sleep 4; exit 0");
	assert_int_equal(vm_kvm_boots(f->qemu, "/the/kernel"), 1);
}

static void test_guest_that_ends_in_error_is_not_kvm(void **state)
{
	struct fx *f = *state;

	fake_qemu(f, "echo 'Linux version 6.12' > \"$ser\"; exit 1");
	assert_int_equal(vm_kvm_boots(f->qemu, "/the/kernel"), 0);
	fake_qemu(f, "kill -9 $$");
	assert_int_equal(vm_kvm_boots(f->qemu, "/the/kernel"), 0);
}

static void test_missing_qemu_is_not_kvm(void **state)
{
	struct fx *f = *state;
	char none[160];

	snprintf(none, sizeof(none), "%s/no-such-qemu", f->dir);
	assert_int_equal(vm_kvm_boots(none, "/the/kernel"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_guest_that_boots_and_panics_is_kvm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_silent_guest_is_not_kvm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slow_guest_that_prints_is_waited_for, setup, teardown),
		cmocka_unit_test_setup_teardown(test_guest_that_ends_in_error_is_not_kvm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_qemu_is_not_kvm, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
