#!/bin/bash
# Client suite: the JS client (clients/js) under Node 20 against the real gateway,
# runner and sandboxes. Ends with "N passed, N failed, N skipped" (the
# closing line of client.test.js).
. "$(dirname "$0")/../lib/harness.sh"
GW=bin/sandbox-gateway

why=$(h_services_missing)
[ -n "$why" ] || [ -x "$GW" ] || why="bin/ not built (make)"
[ -z "$why" ] || h_skip_suite "client suite: $why"
[ -d node_modules/ws ] || npm ci --no-audit --no-fund --loglevel=error || h_abort "npm ci"
h_begin client-test
export GW_KEY=test-key-$RANDOM$RANDOM
SANDBOX_API_KEYS=$GW_KEY start_services "client$$" --web-dir web-demo/dist || h_abort "services did not start"
node tests/client/client.test.js
rc=$?
if [ $rc != 0 ]; then echo "--- gateway log (tail)"; tail -20 "$GW_LOG"; fi
exit $rc
