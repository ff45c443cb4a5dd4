#!/bin/bash
# Soak: soak.mjs against a real runner and the release gateway for
# SOAK_SECONDS (60 here, 600 with `make soak`), then a leak check.
# Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
SECS=${SOAK_SECONDS:-60}
IMG=${SANDBOX_IMAGE_DIR:-/var/cache/sandbox/images}
GW=${SOAK_GATEWAY:-bin/sandbox-gateway}
if [ "$(id -u)" != 0 ] || [ ! -x bin/sandbox-runner ] || [ ! -x "$GW" ] || [ ! -d "$IMG/default/rootfs" ] ||
   [ ! -d node_modules/ws ]; then
	echo "SKIP: soak needs root, bin/sandbox-runner, $GW, $IMG/default/rootfs and node_modules/ws"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
T=$(mktemp -d /tmp/soak.XXXXXX)
KEY=soak-key-$RANDOM$RANDOM
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do for _ in $(seq 150); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done; done
	rm -rf "$T"
}
trap cleanup EXIT
bin/sandbox-runner --name "soak$$" --socket "$T/r.sock" --state-dir "$T/state" --image-dir "$IMG" >"$T/runner.log" 2>&1 &
runner=$!
pids+=($runner)
for _ in $(seq 100); do [ -S "$T/r.sock" ] && break; sleep 0.1; done
port=$((20000 + RANDOM % 10000))
SANDBOX_API_KEYS=$KEY SANDBOX_METRICS_KEY=soak-metrics $GW --port $port --runner-socket "$T/r.sock" --max-sandboxes-per-key 200 >"$T/gw.log" 2>&1 &
gw=$!
pids=($gw "${pids[@]}")
for _ in $(seq 100); do curl -s -m 1 "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
if ! kill -0 $gw 2>/dev/null || ! kill -0 $runner 2>/dev/null; then
	echo "FAIL: gateway or runner did not start"; tail -5 "$T/runner.log" "$T/gw.log"
	echo "0 passed, 1 failed"; exit 1
fi
echo "soak for ${SECS}s: gateway $GW (pid $gw) on :$port, runner soak (pid $runner)"
node tests/soak/soak.mjs "http://127.0.0.1:$port" "$KEY" "$SECS" $gw $runner | tee "$T/out"
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$T/out" | tail -1)
p=$(echo "$line" | sed -nE 's/^([0-9]+) passed.*/\1/p') f=$(echo "$line" | sed -nE 's/.*passed, ([0-9]+) failed.*/\1/p')
[ -n "$p" ] || { p=0 f=1; echo "FAIL: soak.mjs did not finish"; }
if kill -0 $gw 2>/dev/null && kill -0 $runner 2>/dev/null; then p=$((p + 1)); echo "PASS: gateway and runner alive at the end"
else f=$((f + 1)); echo "FAIL: gateway or runner died"; tail -20 "$T/gw.log" "$T/runner.log"; fi
if out=$(tests/fault/leaks.sh soak "$T/state" 2>&1); then p=$((p + 1)); echo "PASS: leak check after the soak finds nothing"
else f=$((f + 1)); echo "FAIL: leak check after the soak"; echo "$out" | head -20; fi
echo "$p passed, $f failed"
[ "$f" = 0 ]
