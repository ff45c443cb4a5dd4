# sandbox-runner: the control daemon and the jail driver. jail_seccomp.c
# (the seccomp policy, another module) is picked up by the wildcard when it
# exists; jail_child.c includes its header only if present.
RUNNER_SRCS := $(wildcard runner/*.c)

$(BINDIR)/sandbox-runner: $(call obj,$(RUNNER_SRCS)) $(LIBSBX)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_CJSON) $(LIBS_SECCOMP) -lm

ALL_BINS += $(BINDIR)/sandbox-runner

# cmocka test of the create-request parser (a pure module).
$(OUT)/tests/test_runner_spec: $(call obj,runner/rn_spec.c)

# libFuzzer target tests/fuzz/fuzz_runner_req.c needs the parser.
FUZZ_EXTRA_fuzz_runner_req := runner/rn_spec.c
build/fuzz/fuzz_runner_req: runner/rn_spec.c runner/rn_spec.h
