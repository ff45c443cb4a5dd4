#!/bin/bash
# Isolation drivers side by side, in one run: create-to-ready p50/p99, host
# memory per idle sandbox and streaming throughput for every driver the
# runner finds available (jail, gvisor), bwrap as the peer. Goals (gvisor):
# create-to-ready p50 < 250 ms, < 16 MiB per idle sandbox, streaming >= 0.5x
# of the jail. Needs root, the default image and release binaries.
set -u
cd "$(dirname "$0")/.."
RUNNER=bin/sandbox-runner AGENT=bin/sandbox-agent
IMG=${SANDBOX_IMAGE_DIR:-/var/cache/sandbox/images}/default/rootfs
if [ "$(id -u)" != 0 ] || [ ! -x "$RUNNER" ] || [ ! -x "$AGENT" ] || [ ! -d "$IMG" ]; then
	echo "SKIP: drivers bench needs root, $RUNNER, $AGENT and $IMG"
	exit 0
fi
exec timeout 900 python3 tests/runner/bench_drivers.py "$(realpath "$RUNNER")" "$(realpath "$AGENT")"
