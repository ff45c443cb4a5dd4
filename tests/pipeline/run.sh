#!/bin/bash
# Pipelining suite: requests that follow one another on one API connection,
# against a real runner and the ASan gateway (tests/pipeline/pipeline.py):
# every route with pipelines of 2, 3 and 50 requests, then random
# connections with a fixed seed (PIPE_RANDOM_SEED, PIPE_RANDOM_N; `make
# fuzz` runs more). /healthz must answer throughout.
. "$(dirname "$0")/../lib/harness.sh"
if [ -n "$(h_services_missing)" ] || [ ! -x "$GW" ]; then
	h_skip_suite "pipeline suite needs root, bin/sandbox-runner, $GW and the image"
fi
h_begin pipe-test
KEY=pipe-$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')
SANDBOX_API_KEYS=$KEY start_services "pipe$$" --max-sandboxes-per-key 4 || h_abort "services did not start"
A="Authorization: Bearer $KEY"

sid=$(curl -s -m 60 -H "$A" -d '{"timeout_ms":900000}' "$GW_URL/v1/sandboxes" |
	python3 -c 'import json,sys;print(json.load(sys.stdin)["id"])' 2>/dev/null)
[ -n "$sid" ] || h_abort "no sandbox"
cid=$(curl -s -m 60 -H "$A" -d '{"cmd":"echo","args":["hi"]}' "$GW_URL/v1/sandboxes/$sid/commands" |
	python3 -c 'import json,sys;print(json.load(sys.stdin)["id"])' 2>/dev/null)
[ -n "$cid" ] || h_abort "no command"

export PYTHONDONTWRITEBYTECODE=1
python3 tests/pipeline/pipeline.py "$GW_PORT" "$KEY" "$sid" "$cid" "$GW_PID" >"$T/fixed.out" 2>&1
h_count "$T/fixed.out"
python3 tests/pipeline/pipeline.py --random "${PIPE_RANDOM_SEED:-28}" "${PIPE_RANDOM_N:-300}" \
	"$GW_PORT" "$KEY" "$sid" "$cid" "$GW_PID" >"$T/random.out" 2>&1
h_count "$T/random.out"

# what the pipelines created goes, and the gateway is whole
for s in $(curl -s -m 30 -H "$A" "$GW_URL/v1/sandboxes" | python3 -c 'import json,sys;[print(x["id"]) for x in json.load(sys.stdin)["sandboxes"]]'); do
	curl -s -m 60 -o /dev/null -X DELETE -H "$A" "$GW_URL/v1/sandboxes/$s"
done
check "healthz at the end" "$(curl -s -m 10 -o /dev/null -w '%{http_code}' "$GW_URL/healthz")" 200
stop_gateway_checked
h_finish
