# cmocka unit tests: tests/unit/test_<name>.c -> $(OUT)/tests/test_<name>
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_TESTS := $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(UNIT_SRCS))

unit-tests: $(UNIT_TESTS)

$(OUT)/tests/%: $(OUT)/obj/tests/unit/%.o $(LIBSBX)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_CMOCKA) $(LIBS_CJSON) -lm

# libFuzzer targets: tests/fuzz/fuzz_<name>.c, built with clang against the
# library sources compiled in the same command (coverage needs them all).
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(FUZZ_SRCS))
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -Ilib -Iguest $(PKG_CFLAGS) \
               -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all

.PHONY: fuzz-build
fuzz-build: $(FUZZ_BINS)

build/fuzz/%: tests/fuzz/%.c $(LIBSBX_SRCS) $(wildcard lib/*.h tests/fuzz/*.h)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -o $@ $< $(LIBSBX_SRCS) $(FUZZ_EXTRA_$*) $(LIBS_CJSON) -lm

FUZZ_TIME ?= 300
fuzz: fuzz-build
	tests/fuzz/run.sh $(FUZZ_TIME)
