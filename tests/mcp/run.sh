#!/bin/bash
# MCP suite: the official MCP SDK client (tests/mcp/mcp.test.mjs) against
# the ASan gateway's POST /mcp with a real runner and sandboxes. Ends with
# "N passed, N failed[, N skipped]".
set -u
cd "$(dirname "$0")/../.."
T=$(mktemp -d /tmp/mcp-test.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
IMG=${SANDBOX_IMAGE_DIR:-/var/cache/sandbox/images}
GW=build/asan/bin/sandbox-gateway; [ -x $GW ] || GW=bin/sandbox-gateway

if [ "$(id -u)" != 0 ] || [ ! -x bin/sandbox-runner ] || [ ! -d "$IMG/default/rootfs" ]; then
	echo "SKIP: mcp suite: needs root, bin/sandbox-runner and $IMG/default/rootfs"
	echo "0 passed, 0 failed, 1 skipped"; exit 0
fi
[ -d node_modules/@modelcontextprotocol/sdk ] || make node-deps >/dev/null ||
	{ echo "FAIL: npm packages"; echo "0 passed, 1 failed"; exit 1; }

bin/sandbox-runner --name "mcp$$" --socket "$T/r.sock" --state-dir "$T/state" --image-dir "$IMG" >"$T/runner.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$T/r.sock" ] && break; sleep 0.1; done
export GW_KEY=mcp-key-$RANDOM$RANDOM GW_KEY2=mcp-other-$RANDOM$RANDOM
started=
for _ in 1 2 3; do   # a random port may be taken: try another
	GW_PORT=$((20000 + RANDOM % 10000))
	SANDBOX_API_KEYS=$GW_KEY,$GW_KEY2 $GW --port "$GW_PORT" --runner-socket "$T/r.sock" >"$T/gw.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 100); do
		curl -s -m 1 -o /dev/null "http://127.0.0.1:$GW_PORT/healthz" && { started=1; break 2; }
		kill -0 "${pids[-1]}" 2>/dev/null || break
		sleep 0.1
	done
done
[ -n "$started" ] || { echo "FAIL: gateway did not start"; tail -5 "$T/gw.log"; echo "0 passed, 1 failed"; exit 1; }
export GW_PORT GW_URL=http://127.0.0.1:$GW_PORT

node tests/mcp/mcp.test.mjs >"$T/out" 2>&1
cat "$T/out"
pass=$(grep -c '^PASS' "$T/out") fail=$(grep -c '^FAIL' "$T/out")
grep -qF "$GW_KEY" "$T/gw.log" && { echo "FAIL: the API key is in the gateway log"; fail=$((fail + 1)); }
# audit: each tool's operation has its access line, as a REST request does
if grep -qE 'access mcp run_command sandbox=sbx_[a-z0-9_]+ 200 ' "$T/gw.log" &&
	grep -qE 'access mcp create_sandbox sandbox=- 201 ' "$T/gw.log"; then
	echo "PASS: audit: tool calls have access lines naming the tool and the operation"; pass=$((pass + 1))
else
	echo "FAIL: audit: no access line for a tool call"; grep "access" "$T/gw.log" | tail -8; fail=$((fail + 1))
fi
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
