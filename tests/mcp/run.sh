#!/bin/bash
# MCP suite: the official MCP SDK client (tests/mcp/mcp.test.mjs) against
# the ASan gateway's POST /mcp with a real runner and sandboxes. Ends with
# "N passed, N failed[, N skipped]".
. "$(dirname "$0")/../lib/harness.sh"

if [ -n "$(h_services_missing)" ]; then
	h_skip_suite "mcp suite: needs root, bin/sandbox-runner and $IMG/default/rootfs"
fi
[ -d node_modules/@modelcontextprotocol/sdk ] || make node-deps >/dev/null || h_abort "npm packages"
h_begin mcp-test

export GW_KEY=mcp-key-$RANDOM$RANDOM GW_KEY2=mcp-other-$RANDOM$RANDOM
# origins a browser page may call /mcp from besides the gateway's own URL
export MCP_PUBLIC_URL=https://sandbox.example.test MCP_ALLOWED=http://app.example.test:3000,https://ide.example.test
SANDBOX_API_KEYS=$GW_KEY,$GW_KEY2 start_services "mcp$$" \
	--public-url "$MCP_PUBLIC_URL" --mcp-allowed-origins "$MCP_ALLOWED" || h_abort "gateway did not start"

node_suite() { # name, then the command
	local name=$1
	shift
	"$@" >"$T/$name.out" 2>&1
	cat "$T/$name.out"
	h_count -q "$T/$name.out"
}
node_suite sdk node tests/mcp/mcp.test.mjs
node_suite origin node tests/mcp/origin.test.mjs
# the default cap (64), and more sessions than the old shared table held
node_suite sessions env CAP=64 OPEN=1100 node tests/mcp/sessions.test.mjs
# whole strings: a NUL refused in every argument but write_files' contents
node_suite nul node tests/mcp/nul.test.mjs
grep -qF "$GW_KEY" "$GW_LOG" && fail "the API key is in the gateway log"
# audit: each tool's operation has its access line, as a REST request does
if grep -qE 'access mcp run_command sandbox=sbx_[a-z0-9_]+ 200 ' "$GW_LOG" &&
	grep -qE 'access mcp create_sandbox sandbox=- 201 ' "$GW_LOG"; then
	pass "audit: tool calls have access lines naming the tool and the operation"
else
	fail "audit: no access line for a tool call"; grep "access" "$GW_LOG" | tail -8
fi
stop_gateway_checked

# --mcp-sessions-per-key: another cap, on a gateway of its own
export SANDBOX_API_KEYS=$GW_KEY,$GW_KEY2
GW_LOG=$T/gateway-cap.log
for _ in 1 2 3; do
	GW_PORT=$(random_port)
	start_gateway "$GW" "$GW_PORT" "$GW_LOG" --runner-socket "$T/runner.sock" --mcp-sessions-per-key 3 && break
	GW_PORT=
done
if [ -n "$GW_PORT" ]; then
	GW_URL=http://127.0.0.1:$GW_PORT node_suite sessions-cap env CAP=3 OPEN=5 node tests/mcp/sessions.test.mjs
	stop_gateway_checked
else
	fail "a gateway with --mcp-sessions-per-key 3 did not start"; tail -5 "$GW_LOG"
fi

# flags that are not what they say are refused at start, naming the value
flag_refused() { # name, what the message must hold, then the flags
	local name=$1 want=$2 rc
	shift 2
	SANDBOX_API_KEYS=k timeout 20 "$GW" --runner-socket "$T/runner.sock" --port 1 "$@" >"$T/flag.out" 2>&1
	rc=$?
	if [ $rc = 2 ] && grep -qF -- "$want" "$T/flag.out"; then
		pass "$name: exit 2 naming it"
	else
		fail "$name: exit $rc"; cat "$T/flag.out"
	fi
}
flag_refused "--mcp-allowed-origins with a path" "'http://app.example/x' is not an origin" \
	--mcp-allowed-origins http://app.example:3000,http://app.example/x
flag_refused "--mcp-allowed-origins with an empty entry" "--mcp-allowed-origins: '' is not an origin" \
	--mcp-allowed-origins http://app.example:3000,
flag_refused "--public-url without a scheme" "--public-url: 'sandbox.example.test'" --public-url sandbox.example.test
flag_refused "--mcp-sessions-per-key 0" "--mcp-sessions-per-key: '0'" --mcp-sessions-per-key 0
"$GW" --help >"$T/help.out" 2>&1
missing=
for f in public-url mcp-allowed-origins mcp-sessions-per-key; do
	grep -q -- "^  --$f[ ].*(default" "$T/help.out" || missing="$missing $f"
done
check "--help lists the MCP flags with their defaults" "$missing" ""
h_finish
