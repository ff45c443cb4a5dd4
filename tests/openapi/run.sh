#!/bin/bash
# OpenAPI suite: docs/openapi.yaml is a valid OpenAPI 3.1 document that
# describes the gateway's route table exactly (tests/openapi/document.test.mjs),
# whose error codes are docs/errors.md's, the clients' and sbx's
# (tests/openapi/errors.test.mjs),
# and the real gateway's answers to success and error cases of every route
# fit it (tests/openapi/conformance.test.mjs: an ASan gateway with two keys
# and a quota of two sandboxes per key, a real runner). Ends with
# "N passed, N failed, N skipped".
. "$(dirname "$0")/../lib/harness.sh"

[ -d node_modules/@seriousme/openapi-schema-validator ] && [ -d node_modules/ajv ] ||
	make node-deps >/dev/null || { echo "FAIL: npm packages (make node-deps)"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
h_begin openapi-test

node tests/openapi/document.test.mjs >"$T/document.out" 2>&1
cat "$T/document.out"
h_count -q "$T/document.out"

# one error vocabulary: the document's codes, docs/errors.md, both clients' and sbx's tables
if [ -x bin/sbx ]; then
	node tests/openapi/errors.test.mjs >"$T/errors.out" 2>&1
	cat "$T/errors.out"
	h_count -q "$T/errors.out"
else
	fail "errors: bin/sbx not built (make)"
fi

if [ -n "$(h_services_missing)" ]; then
	skip "conformance of real answers: $(h_services_missing)"
	h_finish
fi
export GW_KEY=openapi-key-$RANDOM$RANDOM GW_KEY2=openapi-other-$RANDOM$RANDOM
export METRICS_KEY=openapi-metrics-$RANDOM$RANDOM
SANDBOX_METRICS_KEY=$METRICS_KEY SANDBOX_API_KEYS=$GW_KEY,$GW_KEY2 start_services "openapi$$" \
	--max-sandboxes-per-key 2 || h_abort "gateway did not start"
node tests/openapi/conformance.test.mjs >"$T/conformance.out" 2>&1
cat "$T/conformance.out"
h_count -q "$T/conformance.out"
stop_gateway_checked
h_finish
