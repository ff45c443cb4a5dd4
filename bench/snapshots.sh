#!/bin/bash
# Snapshot benchmark (tests/snapshots/bench_snapshots.py), jail and gvisor
# (each where the host offers it): snapshot time and disk for 10 and 200 MiB
# writable layers, create from a snapshot against a
# plain create in the same run, fork x10, pause/resume with 256 MiB held
# (gvisor: checkpoint to disk and restore, and the checkpoint's size on disk).
# Needs root, the default image and release binaries.
set -u
cd "$(dirname "$0")/.."
RUNNER=bin/sandbox-runner
IMGDIR=${SANDBOX_IMAGE_DIR:-/var/cache/sandbox/images}
if [ "$(id -u)" != 0 ] || [ ! -x "$RUNNER" ] || [ ! -d "$IMGDIR/default/rootfs" ]; then
	echo "SKIP: snapshot bench needs root, $RUNNER and $IMGDIR/default/rootfs"
	exit 0
fi
exec timeout 900 python3 tests/snapshots/bench_snapshots.py "$(realpath "$RUNNER")" "$IMGDIR"
