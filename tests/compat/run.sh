#!/bin/bash
# Compat suite: the real @vercel/sandbox SDK (3.5.0, pinned in
# tests/compat/package.json) against the ASan gateway's /v2 and /v3 surface
# with a real runner and sandboxes, over HTTPS with a self-signed
# certificate (the SDK's domain() is https). Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
T=$(mktemp -d /tmp/compat-test.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
IMG=${SANDBOX_IMAGE_DIR:-/var/cache/sandbox/images}
GW=build/asan/bin/sandbox-gateway; [ -x $GW ] || GW=bin/sandbox-gateway

if [ "$(id -u)" != 0 ] || [ ! -x bin/sandbox-runner ] || [ ! -d "$IMG/default/rootfs" ]; then
	echo "SKIP: compat suite: needs root, bin/sandbox-runner and $IMG/default/rootfs"
	echo "0 passed, 0 failed, 1 skipped"; exit 0
fi
[ -d tests/compat/node_modules/@vercel/sandbox ] || make node-deps >/dev/null ||
	{ echo "FAIL: npm packages"; echo "0 passed, 1 failed"; exit 1; }

openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=localhost" \
	-addext "subjectAltName=DNS:localhost,DNS:*.localhost,IP:127.0.0.1" \
	-keyout "$T/key.pem" -out "$T/cert.pem" >/dev/null 2>&1
bin/sandbox-runner --name "compat$$" --socket "$T/r.sock" --state-dir "$T/state" --image-dir "$IMG" >"$T/runner.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$T/r.sock" ] && break; sleep 0.1; done
export GW_KEY=compat-key-$RANDOM$RANDOM
started=
for _ in 1 2 3; do   # a random port may be taken: try another
	GW_PORT=$((20000 + RANDOM % 10000))
	SANDBOX_API_KEYS=$GW_KEY $GW --port "$GW_PORT" --runner-socket "$T/r.sock" --preview-domain localhost \
		--cert "$T/cert.pem" --key "$T/key.pem" >"$T/gw.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 100); do
		curl -s -m 1 --cacert "$T/cert.pem" -o /dev/null "https://127.0.0.1:$GW_PORT/healthz" && { started=1; break 2; }
		kill -0 "${pids[-1]}" 2>/dev/null || break
		sleep 0.1
	done
done
[ -n "$started" ] || { echo "FAIL: gateway did not start"; tail -5 "$T/gw.log"; echo "0 passed, 1 failed"; exit 1; }
export GW_URL=https://127.0.0.1:$GW_PORT GW_PREVIEW=https://127.0.0.1:$GW_PORT NODE_EXTRA_CA_CERTS=$T/cert.pem

node tests/compat/compat.test.mjs >"$T/out" 2>&1
[ -n "${COMPAT_KEEP_LOG:-}" ] && cp "$T/gw.log" "$COMPAT_KEEP_LOG"
cat "$T/out"
pass=$(grep -c '^PASS' "$T/out") fail=$(grep -c '^FAIL' "$T/out")
grep -q '[0-9]* passed, [0-9]* failed' "$T/out" || { echo "FAIL: the test script did not finish"; fail=$((fail + 1)); }
grep -qF "$GW_KEY" "$T/gw.log" && { echo "FAIL: the API key is in the gateway log"; fail=$((fail + 1)); }
# stop the gateway first: leak checks run at exit
kill "${pids[-1]}" 2>/dev/null; wait "${pids[-1]}" 2>/dev/null
if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$T/gw.log"; then
	echo "FAIL: sanitizer report in the gateway log"; grep -A20 -E 'ERROR: |runtime error:' "$T/gw.log" | head -40
	fail=$((fail + 1))
else
	echo "PASS: no sanitizer report in the gateway log"; pass=$((pass + 1))
fi
if [ "$fail" != 0 ]; then echo "--- gateway log (tail)"; tail -20 "$T/gw.log"; fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
