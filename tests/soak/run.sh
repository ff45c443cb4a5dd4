#!/bin/bash
# Soak: soak.mjs against a real runner and the release gateway for
# SOAK_SECONDS (60 here, 600 with `make soak`), then a leak check.
# Ends with "N passed, N failed, N skipped".
. "$(dirname "$0")/../lib/harness.sh"
SECS=${SOAK_SECONDS:-60}
GW=${SOAK_GATEWAY:-bin/sandbox-gateway}
if [ -n "$(h_services_missing)" ] || [ ! -x "$GW" ] || [ ! -d node_modules/ws ]; then
	h_skip_suite "soak needs root, bin/sandbox-runner, $GW, $IMG/default/rootfs and node_modules/ws"
fi
h_begin soak
KEY=soak-key-$RANDOM$RANDOM
start_runner "soak$$" "$T/r.sock" "$T/state"
runner=$RUNNER_PID
# (another port if the one picked was taken: another program may hold it)
for _ in 1 2 3; do
	port=$(random_port)
	SANDBOX_API_KEYS=$KEY SANDBOX_METRICS_KEY=soak-metrics start_gateway $GW $port "$T/gw.log" \
		--runner-socket "$T/r.sock" --max-sandboxes-per-key 200 && break
done
gw=$GW_PID
if ! kill -0 $gw 2>/dev/null || ! kill -0 $runner 2>/dev/null; then
	tail -5 "$RUNNER_LOG" "$T/gw.log"
	h_abort "gateway or runner did not start"
fi
echo "soak for ${SECS}s: gateway $GW (pid $gw) on :$port, runner soak (pid $runner)"
node tests/soak/soak.mjs "http://127.0.0.1:$port" "$KEY" "$SECS" $gw $runner | tee "$T/out"
h_count -q "$T/out"
if kill -0 $gw 2>/dev/null && kill -0 $runner 2>/dev/null; then pass "gateway and runner alive at the end"
else fail "gateway or runner died"; tail -20 "$T/gw.log" "$RUNNER_LOG"; fi
if out=$(tests/fault/leaks.sh "soak$$" "$T/state" 2>&1); then pass "leak check after the soak finds nothing"
else fail "leak check after the soak"; echo "$out" | head -20; fi
h_finish
