#!/bin/bash
# Image benchmark (tests/oci/bench_images.py): import time and disk per
# image, two images sharing a base storing it once, create-to-ready from an
# imported OCI image against the default image in the same run (goal:
# within 1.1x), with the machine's load. Needs root, the default image,
# busybox-static and release binaries; the store is only read (the
# imports go to a directory of the run's own).
set -u
cd "$(dirname "$0")/.."
RUNNER=bin/sandbox-runner
IMGDIR=${SANDBOX_IMAGE_DIR:-/var/cache/sandbox/images}
if [ "$(id -u)" != 0 ] || [ ! -x "$RUNNER" ] || [ ! -d "$IMGDIR/default/rootfs" ] ||
	! file -L /bin/busybox 2>/dev/null | grep -q static; then
	echo "SKIP: image bench needs root, $RUNNER, $IMGDIR/default/rootfs and busybox-static"
	exit 0
fi
exec timeout 900 python3 tests/oci/bench_images.py "$(realpath "$RUNNER")" "$(realpath "$IMGDIR")"
