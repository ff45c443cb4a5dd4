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
SANDBOX_API_KEYS=$GW_KEY,$GW_KEY2 start_services "mcp$$" || h_abort "gateway did not start"

node tests/mcp/mcp.test.mjs >"$T/out" 2>&1
cat "$T/out"
h_count -q "$T/out"
# whole strings: a NUL refused in every argument but write_files' contents
node tests/mcp/nul.test.mjs >"$T/nul.out" 2>&1
h_count "$T/nul.out"
grep -qF "$GW_KEY" "$GW_LOG" && fail "the API key is in the gateway log"
# audit: each tool's operation has its access line, as a REST request does
if grep -qE 'access mcp run_command sandbox=sbx_[a-z0-9_]+ 200 ' "$GW_LOG" &&
	grep -qE 'access mcp create_sandbox sandbox=- 201 ' "$GW_LOG"; then
	pass "audit: tool calls have access lines naming the tool and the operation"
else
	fail "audit: no access line for a tool call"; grep "access" "$GW_LOG" | tail -8
fi
stop_gateway_checked
h_finish
