# The seccomp policy's test tools (the policy itself, runner/driver_jail_seccomp.c,
# is linked into the runner by runner/runner.mk).
#   sandbox-seccomp-exec  applies no_new_privs + the policy, then execs
#   seccomp-probe         static probe binary run under the policy by
#                         tests/seccomp/run.sh (static so it also runs
#                         inside the image's chroot; no sanitizers)
SECCOMP_EXEC_SRCS := tests/seccomp/seccomp_exec.c runner/driver_jail_seccomp.c

$(BINDIR)/sandbox-seccomp-exec: $(call obj,$(SECCOMP_EXEC_SRCS)) $(LIBSBX)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_SECCOMP)

$(OUT)/tests/seccomp-probe: tests/seccomp/probe.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) -O1 -static -o $@ $< -lpthread

ALL_BINS += $(BINDIR)/sandbox-seccomp-exec $(OUT)/tests/seccomp-probe

# tests/unit/test_seccomp.c links the policy module and libseccomp.
$(OUT)/tests/test_seccomp: $(call obj,runner/driver_jail_seccomp.c)
# (libsbx.a again after the module, which needs sbx_err from it)
$(OUT)/tests/test_seccomp: LIBS_CJSON += $(LIBSBX) $(LIBS_SECCOMP)
