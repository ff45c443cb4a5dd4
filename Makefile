# sandbox service: gateway, runner, guest agent, shared library, tests.
#   make            release binaries in bin/
#   make asan       ASan+UBSan binaries in build/asan/bin/
#   make test       install missing deps, build both, run every suite
#   make bench      benchmarks (ratios against baselines measured in the same run)
#   make bench-density   1000 idle sandboxes on one runner (bench/density)
#   make run        start the service (gateway + local runner)
#   make install PREFIX=/usr/local DESTDIR=   programs, web demo, systemd units
#   make fuzz FUZZ_TIME=300   longer fuzzing runs
#   make soak SOAK_SECONDS=600   load + faults soak (tests/soak; 60 s in make test)
#   make clean

VARIANT ?= release
CC      ?= cc

# Flags given by the caller (environment or command line) come after the
# project's own, so they add to them and never drop -Werror or the
# hardening. Taken once, at the top-level make: sub-makes see our CFLAGS
# in their environment, not the caller's.
CFLAGS  ?=
LDFLAGS ?=
ifeq ($(origin SBX_USER_CFLAGS),undefined)
export SBX_USER_CFLAGS := $(CFLAGS)
export SBX_USER_LDFLAGS := $(LDFLAGS)
endif

ifeq ($(VARIANT),asan)
OUT     := build/asan
BINDIR  := build/asan/bin
VFLAGS  := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else
OUT     := build/release
BINDIR  := bin
VFLAGS  := -O2 -g
endif

# The runner runs as root: every program is built hardened (checked
# buffer functions, stack canaries, position-independent, read-only
# relocations bound at start). The same flags hold for the ASan build and
# the fuzz targets (tests/tests.mk).
HARDEN_CFLAGS  := -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=3 -fstack-protector-strong -fPIE
HARDEN_LDFLAGS := -pie -Wl,-z,relro,-z,now

# Every package is found by pkg-config or the build stops here, naming it
# (an empty --cflags would otherwise surface as a missing header much
# later). Goals that only install packages, clean, or run sub-makes (which
# check for themselves) need none.
PKGS    := libwebsockets openssl libcjson libseccomp zlib
NOPKG_GOALS := deps node-deps clean test run bench bench-density soak image image-rebuild web guest-assets
ifneq ($(filter-out $(NOPKG_GOALS),$(or $(MAKECMDGOALS),all)),)
PKG_MISSING := $(shell for p in $(PKGS) cmocka; do pkg-config --exists $$p || echo $$p; done)
ifneq ($(PKG_MISSING),)
$(error pkg-config cannot find: $(PKG_MISSING). Install them with `make deps` (or set PKG_CONFIG_PATH))
endif
endif
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wformat=2 -Werror
override CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(VFLAGS) $(HARDEN_CFLAGS) -Ilib $(PKG_CFLAGS) \
                   -MMD -MP $(SBX_USER_CFLAGS)
override LDFLAGS := $(filter -fsanitize=%,$(VFLAGS)) $(HARDEN_LDFLAGS) $(SBX_USER_LDFLAGS)

LIBS_CJSON    := $(shell pkg-config --libs libcjson 2>/dev/null)
LIBS_LWS      := $(shell pkg-config --libs libwebsockets openssl 2>/dev/null)
LIBS_SECCOMP  := $(shell pkg-config --libs libseccomp 2>/dev/null)
LIBS_SSL      := $(shell pkg-config --libs openssl 2>/dev/null)
LIBS_CMOCKA   := $(shell pkg-config --libs cmocka 2>/dev/null)
LIBS_ZLIB     := $(shell pkg-config --libs zlib 2>/dev/null)

ALL_BINS :=
UNIT_TESTS :=

obj = $(patsubst %.c,$(OUT)/obj/%.o,$(1))

.PHONY: bench-density
.PHONY: all asan test bench run image fuzz clean deps unit-tests node-deps soak guest-assets
all:

include lib/lib.mk
include $(wildcard guest/guest.mk runner/runner.mk gateway/gateway.mk mk/image.mk mk/install.mk \
                  cli/cli.mk tests/seccomp/seccomp.mk web-demo/web.mk \
                  vsockd/vsockd.mk)
include tests/tests.mk

all: $(ALL_BINS)

# Objects depend on the flags they were compiled with: a change of flags
# (a pull that adds one, CFLAGS on the command line) rebuilds them instead
# of linking stale objects built without, say, the hardening flags.
FLAGS_STAMP := $(OUT)/flags
FLAGS_NOW   := $(CC) $(CFLAGS) | $(LDFLAGS)
$(shell mkdir -p $(OUT); [ "$$(cat $(FLAGS_STAMP) 2>/dev/null)" = '$(FLAGS_NOW)' ] || echo '$(FLAGS_NOW)' >$(FLAGS_STAMP))

$(OUT)/obj/%.o: %.c $(FLAGS_STAMP)
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
# the JS client package's own lock (ws, and TypeScript to check its declarations)
node-deps: clients/js/node_modules/.package-lock.json
clients/js/node_modules/.package-lock.json: clients/js/package.json clients/js/package-lock.json
	cd clients/js && npm ci --no-audit --no-fund --loglevel=error
# the Vite app of tests/images (vite.sh): its packages in an npm cache of its
# own, which the suite copies into a sandbox to install with no network there
node-deps: build/vite-app/.cached
build/vite-app/.cached: tests/images/vite-app/package.json tests/images/vite-app/package-lock.json
	rm -rf build/vite-app && mkdir -p build/vite-app
	cp tests/images/vite-app/package.json tests/images/vite-app/package-lock.json build/vite-app/
	cd build/vite-app && npm ci --cache "$$PWD/npm-cache" --ignore-scripts --no-audit --no-fund \
		--loglevel=error && rm -rf node_modules
	touch $@

test: deps
	$(MAKE) node-deps
	@if [ -f web-demo/web.mk ]; then $(MAKE) web; fi
	$(MAKE) all
	$(MAKE) VARIANT=asan all unit-tests
	$(MAKE) fuzz-build
	$(MAKE) guest-assets
	tests/run.sh

run: deps
	$(MAKE) all
	@if [ -f web-demo/web.mk ]; then $(MAKE) node-deps web; fi
	@if [ -f mk/image.mk ]; then $(MAKE) image; fi
	mk/run.sh

# what sandboxes boot from, for test and bench alike: the default image and
# the VM's guest kernel (a few minutes once; outside the bench's own wall
# time). Without them a fresh machine's bench skipped the sandboxes'
# figures and printed the VM's as n/a.
guest-assets:
	@if [ -f mk/image.mk ]; then $(MAKE) image; fi
	@mk/vm.sh >/dev/null || echo "vm: no guest kernel or initramfs (mk/vm.sh failed): the vm driver's checks are skipped, its figures print n/a"

bench: deps
	$(MAKE) all
	$(MAKE) guest-assets
	bench/run.sh

# 1000 idle jail sandboxes and 200 gvisor ones on one runner (issue 26):
# too heavy for bench's 15 minutes, so a target of its own
bench-density: deps
	$(MAKE) all
	@if [ -f mk/image.mk ]; then $(MAKE) image; fi
	bench/density/run.sh

SOAK_SECONDS ?= 600
soak: deps
	$(MAKE) all node-deps
	SOAK_SECONDS=$(SOAK_SECONDS) tests/soak/run.sh

clean:
	rm -rf build bin

-include $(shell find build -name '*.d' 2>/dev/null)
