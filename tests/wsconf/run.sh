#!/bin/bash
# RFC 6455 server conformance of the gateway's command stream endpoint
# (wsconf.py: raw-socket client, Autobahn-like categories) against the ASan
# gateway, a real runner and sandbox. Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
IMG=${SANDBOX_IMAGE_DIR:-/var/cache/sandbox/images}
GW=build/asan/bin/sandbox-gateway
[ -x "$GW" ] || GW=bin/sandbox-gateway
if [ "$(id -u)" != 0 ] || [ ! -x bin/sandbox-runner ] || [ ! -x "$GW" ] || [ ! -d "$IMG/default/rootfs" ]; then
	echo "SKIP: wsconf needs root, bin/sandbox-runner, a gateway build and $IMG/default/rootfs"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
T=$(mktemp -d /tmp/wsconf.XXXXXX)
KEY=wsc-key-$RANDOM$RANDOM
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done; done
	rm -rf "$T"
}
trap cleanup EXIT
bin/sandbox-runner --name "wsc$$" --socket "$T/r.sock" --state-dir "$T/state" --image-dir "$IMG" >"$T/runner.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$T/r.sock" ] && break; sleep 0.1; done
port=$((20000 + RANDOM % 10000))
SANDBOX_API_KEYS=$KEY $GW --port $port --runner-socket "$T/r.sock" >"$T/gw.log" 2>&1 &
gw=$!
pids=($gw "${pids[@]}")
for _ in $(seq 100); do curl -s -m 1 "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
sid=$(curl -s -m 30 -H "Authorization: Bearer $KEY" -d '{"timeout_ms":600000}' "http://127.0.0.1:$port/v1/sandboxes" |
	python3 -c 'import json,sys;print(json.load(sys.stdin).get("id",""))' 2>/dev/null)
if [ -z "$sid" ]; then
	echo "FAIL: create a sandbox"; tail -5 "$T/runner.log"
	echo "0 passed, 1 failed"; exit 1
fi
python3 tests/wsconf/wsconf.py "http://127.0.0.1:$port" "$KEY" "$sid" | tee "$T/out"
line=$(tail -1 "$T/out")
p=$(echo "$line" | sed -nE 's/^([0-9]+) passed.*/\1/p') f=$(echo "$line" | sed -nE 's/.*passed, ([0-9]+) failed.*/\1/p')
s=$(echo "$line" | sed -nE 's/.*failed, ([0-9]+) skipped.*/\1/p'); s=${s:-0}
[ -n "$p" ] || { p=0 f=1; echo "FAIL: wsconf.py did not finish"; }
if kill -0 $gw 2>/dev/null; then p=$((p + 1)); echo "PASS: the gateway is alive at the end"
else f=$((f + 1)); echo "FAIL: the gateway died"; tail -20 "$T/gw.log"; fi
if grep -q 'ERROR: AddressSanitizer\|runtime error' "$T/gw.log"; then
	f=$((f + 1)); echo "FAIL: sanitizer report"; grep -A20 'ERROR: AddressSanitizer\|runtime error' "$T/gw.log" | head -40
else p=$((p + 1)); echo "PASS: no sanitizer report"; fi
curl -s -m 30 -X DELETE -H "Authorization: Bearer $KEY" "http://127.0.0.1:$port/v1/sandboxes/$sid" >/dev/null
echo "$p passed, $f failed, $s skipped"
[ "$f" = 0 ]
