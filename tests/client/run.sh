#!/bin/bash
# Client suite: the JS client (clients/js) under Node 20 against the real
# gateway, runner and sandboxes: its flows (client.test.js), its errors and
# environment defaults (errors.test.js), snapshots, fork, pause, images,
# network policy and log, the paged list (operations.test.js), and the
# package as packed and installed (package.sh). Ends with "N passed, N failed, N skipped".
. "$(dirname "$0")/../lib/harness.sh"
GW=bin/sandbox-gateway

why=$(h_services_missing)
[ -n "$why" ] || [ -x "$GW" ] || why="bin/ not built (make)"
[ -z "$why" ] || h_skip_suite "client suite: $why"
[ -d node_modules/ws ] || npm ci --no-audit --no-fund --loglevel=error || h_abort "npm ci"
[ -x clients/js/node_modules/.bin/tsc ] || (cd clients/js && npm ci --no-audit --no-fund --loglevel=error) ||
	h_abort "npm ci in clients/js"
h_begin client-test
export GW_KEY=test-key-$RANDOM$RANDOM
# an image dir of the suite's own (the shared default linked in), so the
# images operations.test.js imports never land in the shared store
mkdir -p "$T/images" && ln -s "$(readlink -f "$IMG/default")" "$T/images/default" && IMG=$T/images
SANDBOX_API_KEYS=$GW_KEY start_services "client$$" --web-dir web-demo/dist || h_abort "services did not start"
# a second gateway whose runner is not there (runner_unavailable)
for _ in 1 2 3; do
	GW2_PORT=$(random_port)
	SANDBOX_API_KEYS=$GW_KEY start_gateway "$GW" "$GW2_PORT" "$T/gateway2.log" --runner-socket "$T/no-runner.sock" &&
		break
	GW2_PORT=
done
[ -n "$GW2_PORT" ] || h_abort "the second gateway did not start"
export GW2_URL=http://127.0.0.1:$GW2_PORT

node tests/client/client.test.js 2>&1 | tee "$T/client.out"
h_count -q "$T/client.out"
node tests/client/errors.test.js 2>&1 | tee "$T/errors.out"
h_count -q "$T/errors.out"
node tests/client/operations.test.js 2>&1 | tee "$T/operations.out"
h_count -q "$T/operations.out"
. tests/client/package.sh
if [ "$H_FAIL" != 0 ]; then echo "--- gateway log (tail)"; tail -20 "$GW_LOG"; fi
h_finish
