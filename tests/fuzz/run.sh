#!/bin/bash
# Runs each libFuzzer target for N seconds (first argument) over its seed
# corpus in tests/fuzz/corpus/<target>/ (new inputs go to a scratch dir, so
# the checkout is not modified). Every file in tests/fuzz/regressions/<target>/
# is replayed first: crashes found once stay fixed.
set -u
cd "$(dirname "$0")/../.."
secs=${1:-10}
passed=0 failed=0
for bin in build/fuzz/fuzz_*; do
	[ -x "$bin" ] || continue
	name=$(basename "$bin")
	reg="tests/fuzz/regressions/$name"
	if [ -d "$reg" ] && [ -n "$(ls -A "$reg")" ]; then
		if "$bin" -runs=0 "$reg"/* >/tmp/$name.reg.log 2>&1; then
			echo "  $name regressions: ok"; passed=$((passed + 1))
		else
			echo "  $name regressions: FAILED"; tail -30 /tmp/$name.reg.log; failed=$((failed + 1))
		fi
	fi
	scratch=$(mktemp -d /tmp/$name.corpus.XXXXXX)
	seeds="tests/fuzz/corpus/$name"
	[ -d "$seeds" ] || seeds=""
	if "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=0 "$scratch" $seeds >/tmp/$name.log 2>&1; then
		echo "  $name: ${secs}s, $(grep -oE '#[0-9]+' /tmp/$name.log | tail -1 | tr -d '#') execs, no crash"
		passed=$((passed + 1))
	else
		echo "  $name: CRASH"; tail -40 /tmp/$name.log; failed=$((failed + 1))
	fi
	rm -rf "$scratch"
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" = 0 ]
