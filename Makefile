# sandbox service: gateway, runner, guest agent, shared library, tests.
#   make            release binaries in bin/
#   make asan       ASan+UBSan binaries in build/asan/bin/
#   make test       install missing deps, build both, run every suite
#   make bench      benchmarks (ratios against baselines measured in the same run)
#   make run        start the service (gateway + local runner)
#   make fuzz FUZZ_TIME=300   longer fuzzing runs
#   make soak SOAK_SECONDS=600   load + faults soak (tests/soak; 60 s in make test)
#   make clean

VARIANT ?= release
CC      ?= cc

ifeq ($(VARIANT),asan)
OUT     := build/asan
BINDIR  := build/asan/bin
VFLAGS  := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else
OUT     := build/release
BINDIR  := bin
VFLAGS  := -O2 -g
endif

PKGS    := libwebsockets openssl libcjson libseccomp zlib
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wformat=2 -Werror
CFLAGS  := -std=c11 -D_GNU_SOURCE $(WARN) $(VFLAGS) -Ilib $(PKG_CFLAGS) -MMD -MP
LDFLAGS := $(filter -fsanitize=%,$(VFLAGS))

LIBS_CJSON    := $(shell pkg-config --libs libcjson 2>/dev/null)
LIBS_LWS      := $(shell pkg-config --libs libwebsockets openssl 2>/dev/null)
LIBS_SECCOMP  := $(shell pkg-config --libs libseccomp 2>/dev/null)
LIBS_CMOCKA   := $(shell pkg-config --libs cmocka 2>/dev/null)
LIBS_ZLIB     := $(shell pkg-config --libs zlib 2>/dev/null)

ALL_BINS :=
UNIT_TESTS :=

obj = $(patsubst %.c,$(OUT)/obj/%.o,$(1))

.PHONY: all asan test bench run image fuzz clean deps unit-tests node-deps soak
all:

include lib/lib.mk
include $(wildcard guest/guest.mk runner/runner.mk gateway/gateway.mk mk/image.mk \
                  cli/cli.mk tests/seccomp/seccomp.mk web-demo/web.mk)
include tests/tests.mk

all: $(ALL_BINS)

$(OUT)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

asan:
	$(MAKE) VARIANT=asan all unit-tests

deps:
	@mk/deps.sh

# npm packages of the browser side and the Node test clients (package.json);
# npm ci's own record of the install tells make whether it is current
node-deps: node_modules/.package-lock.json tests/compat/node_modules/.package-lock.json
ifeq ($(wildcard web-demo/web.mk),)
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
endif
# the @vercel/sandbox SDK of the compat suite, pinned in its own package.json
tests/compat/node_modules/.package-lock.json: tests/compat/package.json tests/compat/package-lock.json
	cd tests/compat && npm ci --no-audit --no-fund --loglevel=error

test: deps
	$(MAKE) node-deps
	@if [ -f web-demo/web.mk ]; then $(MAKE) web; fi
	$(MAKE) all
	$(MAKE) VARIANT=asan all unit-tests
	$(MAKE) fuzz-build
	@if [ -f mk/image.mk ]; then $(MAKE) image; fi
	tests/run.sh

run: deps all
	@if [ -f web-demo/web.mk ]; then $(MAKE) node-deps web; fi
	@if [ -f mk/image.mk ]; then $(MAKE) image; fi
	mk/run.sh

bench: deps all
	bench/run.sh

SOAK_SECONDS ?= 600
soak: deps all
	$(MAKE) node-deps
	SOAK_SECONDS=$(SOAK_SECONDS) tests/soak/run.sh

clean:
	rm -rf build bin

-include $(shell find build -name '*.d' 2>/dev/null)
