#!/bin/bash
# Runner benchmark: create-to-ready and create-to-first-output (p50/p99 over
# 100 sandboxes) against bwrap in the same run, and the memory of 200 idle
# sandboxes. Needs root, the default image and release binaries.
set -u
cd "$(dirname "$0")/.."
RUNNER=bin/sandbox-runner
AGENT=bin/sandbox-agent KIND=agent
IMG=${SANDBOX_IMAGE_DIR:-/var/cache/sandbox/images}/default/rootfs
if [ "$(id -u)" != 0 ] || [ ! -x "$RUNNER" ] || [ ! -x "$AGENT" ] || [ ! -d "$IMG" ]; then
	echo "SKIP: runner bench needs root, $RUNNER, $AGENT and $IMG"
	exit 0
fi
exec timeout 900 python3 tests/runner/bench_runner.py "$(realpath "$RUNNER")" "$(realpath "$AGENT")" "$KIND"
