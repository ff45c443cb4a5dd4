#!/bin/bash
# Runs each libFuzzer target for N seconds (first argument) over its seed
# corpus in tests/fuzz/corpus/<target>/ (new inputs go to a scratch dir, so
# the checkout is not modified). Every file in tests/fuzz/regressions/<target>/
# is replayed first: crashes found once stay fixed.
. "$(dirname "$0")/../lib/harness.sh"
secs=${1:-10}
h_begin sbx-fuzz
for bin in build/fuzz/fuzz_*; do
	[ -x "$bin" ] || continue
	name=$(basename "$bin")
	reg="tests/fuzz/regressions/$name"
	if [ -d "$reg" ] && [ -n "$(ls -A "$reg")" ]; then
		if "$bin" -runs=0 "$reg"/* >"$T/$name.reg.log" 2>&1; then
			pass "$name regressions"
		else
			fail "$name regressions"; tail -30 "$T/$name.reg.log"
		fi
	fi
	scratch=$T/$name.corpus
	mkdir -p "$scratch"
	seeds="tests/fuzz/corpus/$name"
	[ -d "$seeds" ] || seeds=""
	if "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=0 "$scratch" $seeds >"$T/$name.log" 2>&1; then
		pass "$name: ${secs}s, $(grep -oE '#[0-9]+' "$T/$name.log" | tail -1 | tr -d '#') execs, no crash"
	else
		fail "$name: crash"; tail -40 "$T/$name.log"
	fi
	rm -rf "$scratch"
done
h_finish
