#!/bin/bash
# Client suite: web-demo/client.js under Node 20 against the real gateway,
# runner and sandboxes. Ends with "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/../.."
. tests/client/services.sh
T=$(mktemp -d /tmp/client-test.XXXXXX)
cleanup() { stop_services; rm -rf "$T"; }
trap cleanup EXIT

why=$(services_missing)
if [ -n "$why" ]; then echo "SKIP: client suite: $why"; echo "0 passed, 0 failed, 1 skipped"; exit 0; fi
[ -d node_modules/ws ] || npm ci --no-audit --no-fund --loglevel=error || { echo "FAIL: npm ci"; echo "0 passed, 1 failed"; exit 1; }
start_services "$T" "client$$" || { echo "FAIL: services did not start"; echo "0 passed, 1 failed"; exit 1; }
node tests/client/client.test.js
rc=$?
if [ $rc != 0 ]; then echo "--- gateway log (tail)"; tail -20 "$GW_LOG"; fi
exit $rc
