#!/bin/bash
# The density step of issue 26 (make bench-density; too heavy for make
# bench's 15 minutes): 1000 jail sandboxes of memory_mb 256 with
# --memory-overcommit, against goals, then 200 gvisor ones (reported only).
# DENSITY_JAIL / DENSITY_GVISOR change the counts (0 skips). Needs root, the
# default image and release binaries.
set -u
cd "$(dirname "$0")/../.."
RUNNER=bin/sandbox-runner GATEWAY=bin/sandbox-gateway
IMG=${SANDBOX_IMAGE_DIR:-/var/cache/sandbox/images}/default/rootfs
if [ "$(id -u)" != 0 ] || [ ! -x "$RUNNER" ] || [ ! -x "$GATEWAY" ] || [ ! -d "$IMG" ]; then
	echo "SKIP: density bench needs root, $RUNNER, $GATEWAY and $IMG"
	exit 0
fi
rc=0
for step in "jail ${DENSITY_JAIL:-1000} 1" "gvisor ${DENSITY_GVISOR:-200} 0"; do
	set -- $step
	[ "$2" -gt 0 ] || continue
	timeout 1800 python3 bench/density/bench_density.py "$(realpath "$RUNNER")" \
		"$(realpath "$GATEWAY")" "$1" "$2" "$3" || rc=1
done
exit $rc
