#!/bin/bash
# Integration tests for sandbox-agent (ASan build when present): real
# commands, real UNIX/TCP sockets, a pid namespace for the PID 1 test.
# Last line: "N passed, N failed, N skipped". AGENT_KEEP_LOGS=1 keeps the
# work dir.
. "$(dirname "$0")/../lib/harness.sh"
agent=${AGENT_BIN:-build/asan/bin/sandbox-agent}
[ -x "$agent" ] || agent=bin/sandbox-agent
[ -x "$agent" ] || h_abort "sandbox-agent not built"
[ -n "${AGENT_KEEP_LOGS:-}" ] && H_KEEP=1
# test_agent.py stops the agents it started (by pid, in finally)
h_begin sbx-agent-test
cc -O2 -o "$T/flood_reader" tests/agent/flood_reader.c && export FLOOD_READER="$T/flood_reader"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
timeout --kill-after=10 600 python3 tests/agent/test_agent.py "$PWD/$agent" "$T"
exit $?
