#!/bin/bash
# Integration tests for sandbox-agent (ASan build when present): real
# commands, real UNIX/TCP sockets, a pid namespace for the PID 1 test.
# Last line: "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/../.."
agent=${AGENT_BIN:-build/asan/bin/sandbox-agent}
[ -x "$agent" ] || agent=bin/sandbox-agent
if [ ! -x "$agent" ]; then
	echo "sandbox-agent not built"
	echo "0 passed, 1 failed"
	exit 1
fi
work=$(mktemp -d /tmp/sbx-agent-test.XXXXXX)
[ -n "${AGENT_KEEP_LOGS:-}" ] && echo "work dir: $work"
cleanup() {
	# test_agent.py stops the agents it started (by pid, in finally)
	[ -n "${AGENT_KEEP_LOGS:-}" ] || rm -rf "$work"
}
trap cleanup EXIT INT TERM
cc -O2 -o "$work/flood_reader" tests/agent/flood_reader.c && export FLOOD_READER="$work/flood_reader"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
timeout --kill-after=10 600 python3 tests/agent/test_agent.py "$PWD/$agent" "$work"
exit $?
