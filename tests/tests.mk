# cmocka unit tests: tests/unit/test_<name>.c -> $(OUT)/tests/test_<name>
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_TESTS := $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(UNIT_SRCS))

unit-tests: $(UNIT_TESTS)

# The one link rule of every unit test. A test of a module names the
# module's objects as prerequisites beside the module's own rules
#   $(OUT)/tests/test_x: $(call obj,part/x.c)
# and any libraries the module needs besides cJSON in UNIT_LIBS_test_x.
# libsbx.a goes after all objects (they may need it), whatever the order
# make lists the prerequisites in.
$(OUT)/tests/test_%: $(OUT)/obj/tests/unit/test_%.o $(LIBSBX)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(filter-out $(LIBSBX),$^) $(LIBSBX) $(LIBS_CMOCKA) \
		$(UNIT_LIBS_$(@F)) $(LIBS_CJSON) -lm

# libFuzzer targets: tests/fuzz/fuzz_<name>.c, built with clang against the
# library sources compiled in the same command (coverage needs them all).
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(FUZZ_SRCS))
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -Ilib -Iguest $(PKG_CFLAGS) \
               -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
               $(HARDEN_CFLAGS) $(HARDEN_LDFLAGS)

.PHONY: fuzz-build
fuzz-build: $(FUZZ_BINS)

build/fuzz/%: tests/fuzz/%.c $(LIBSBX_SRCS) $(wildcard lib/*.h tests/fuzz/*.h)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -o $@ $< $(LIBSBX_SRCS) $(FUZZ_EXTRA_$*) $(LIBS_CJSON) -lm

FUZZ_TIME ?= 300
fuzz: fuzz-build
	tests/fuzz/run.sh $(FUZZ_TIME)
	PIPE_RANDOM_SEED=$$(od -An -N2 -tu2 /dev/urandom | tr -d ' ') PIPE_RANDOM_N=$$(( $(FUZZ_TIME) * 20 )) \
		tests/pipeline/run.sh
