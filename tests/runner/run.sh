#!/bin/bash
# Integration suite of the runner with the real image, run once per driver:
# SANDBOX_TEST_ISOLATION (default jail) is the isolation of its sandboxes.
# Prefers the ASan build. Needs root (the jail maps uid ranges).
. "$(dirname "$0")/../lib/harness.sh"
RUNNER=build/asan/bin/sandbox-runner
[ -x "$RUNNER" ] || RUNNER=bin/sandbox-runner
AGENT=build/asan/bin/sandbox-agent
[ -x "$AGENT" ] || AGENT=bin/sandbox-agent
if [ ! -d "$IMG/default/rootfs" ] && [ -z "${SANDBOX_IMAGE_DIR:-}" ]; then
	echo "runner: no image at $IMG/default/rootfs, running make image"
	make image >/dev/null 2>&1 || true
fi
if [ "$(id -u)" != 0 ] || [ ! -x "$RUNNER" ] || [ ! -x "$AGENT" ]; then
	h_skip_suite "runner suite needs root and built binaries ($RUNNER, $AGENT)"
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
# bounded: the suite must end even if something hangs
timeout 600 python3 tests/runner/test_runner.py "$(realpath "$RUNNER")" \
	"$(realpath "$AGENT")"
rc=$?
[ $rc = 124 ] && h_abort "runner suite timed out"
exit $rc
