#!/bin/bash
# RFC 6455 server conformance of the gateway's command stream endpoint
# (wsconf.py: raw-socket client, Autobahn-like categories) against the ASan
# gateway, a real runner and sandbox. Ends with "N passed, N failed, N skipped".
. "$(dirname "$0")/../lib/harness.sh"
GW=build/asan/bin/sandbox-gateway
[ -x "$GW" ] || GW=bin/sandbox-gateway
if [ -n "$(h_services_missing)" ] || [ ! -x "$GW" ]; then
	h_skip_suite "wsconf needs root, bin/sandbox-runner, a gateway build and $IMG/default/rootfs"
fi
h_begin wsconf
KEY=wsc-key-$RANDOM$RANDOM
start_runner "wsc$$" "$T/r.sock" "$T/state"
port=$(random_port)
SANDBOX_API_KEYS=$KEY start_gateway $GW $port "$T/gw.log" --runner-socket "$T/r.sock"
gw=$GW_PID
sid=$(curl -s -m 30 -H "Authorization: Bearer $KEY" -d '{"timeout_ms":600000}' "http://127.0.0.1:$port/v1/sandboxes" |
	python3 -c 'import json,sys;print(json.load(sys.stdin).get("id",""))' 2>/dev/null)
if [ -z "$sid" ]; then
	tail -5 "$RUNNER_LOG"
	h_abort "create a sandbox"
fi
python3 tests/wsconf/wsconf.py "http://127.0.0.1:$port" "$KEY" "$sid" | tee "$T/out"
h_count -q "$T/out"
if kill -0 $gw 2>/dev/null; then pass "the gateway is alive at the end"
else fail "the gateway died"; tail -20 "$T/gw.log"; fi
if grep -q 'ERROR: AddressSanitizer\|runtime error' "$T/gw.log"; then
	fail "sanitizer report"; grep -A20 'ERROR: AddressSanitizer\|runtime error' "$T/gw.log" | head -40
else pass "no sanitizer report"; fi
curl -s -m 30 -X DELETE -H "Authorization: Bearer $KEY" "http://127.0.0.1:$port/v1/sandboxes/$sid" >/dev/null
h_finish
