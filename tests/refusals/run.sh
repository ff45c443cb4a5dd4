#!/bin/bash
# Refusals suite: the same refusal through /v1 REST, the MCP tools and the
# @vercel/sandbox routes gives the same status and error code
# (tests/refusals/refusals.test.mjs holds the table). One ASan gateway with
# two keys and a quota of one sandbox per key, a real runner. Ends with
# "N passed, N failed, N skipped".
. "$(dirname "$0")/../lib/harness.sh"

if [ -n "$(h_services_missing)" ]; then
	h_skip_suite "refusals suite: $(h_services_missing)"
fi
h_begin refusals-test

export GW_KEY=refusals-key-$RANDOM$RANDOM GW_KEY2=refusals-other-$RANDOM$RANDOM
SANDBOX_API_KEYS=$GW_KEY,$GW_KEY2 start_services "refusals$$" --max-sandboxes-per-key 1 ||
	h_abort "gateway did not start"

HTTP_RECORD=$T/http.ndjson node tests/refusals/refusals.test.mjs >"$T/out" 2>&1
cat "$T/out"
h_count -q "$T/out"
# every /v1 answer the table got fits docs/openapi.yaml
node tests/openapi/records.mjs "$T/http.ndjson" "openapi" >"$T/records.out" 2>&1
cat "$T/records.out"
h_count -q "$T/records.out"
stop_gateway_checked
h_finish
