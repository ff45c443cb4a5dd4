#!/bin/bash
# Integration suite of the runner with the real image, run once per driver:
# SANDBOX_TEST_ISOLATION (default jail) is the isolation of its sandboxes.
# Prefers the ASan build. Needs root (the jail maps uid ranges).
set -u
cd "$(dirname "$0")/../.."
RUNNER=build/asan/bin/sandbox-runner
[ -x "$RUNNER" ] || RUNNER=bin/sandbox-runner
AGENT=build/asan/bin/sandbox-agent
[ -x "$AGENT" ] || AGENT=bin/sandbox-agent
IMG=${SANDBOX_IMAGE_DIR:-/var/cache/sandbox/images}/default/rootfs
if [ ! -d "$IMG" ] && [ -z "${SANDBOX_IMAGE_DIR:-}" ]; then
	echo "runner: no image at $IMG, running make image"
	make image >/dev/null 2>&1 || true
fi
if [ "$(id -u)" != 0 ] || [ ! -x "$RUNNER" ] || [ ! -x "$AGENT" ]; then
	echo "SKIP: runner suite needs root and built binaries ($RUNNER, $AGENT)"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
# bounded: the suite must end even if something hangs
timeout 600 python3 tests/runner/test_runner.py "$(realpath "$RUNNER")" \
	"$(realpath "$AGENT")"
rc=$?
[ $rc = 124 ] && { echo "FAIL: runner suite timed out"; echo "0 passed, 1 failed"; exit 1; }
exit $rc
