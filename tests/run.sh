#!/bin/bash
# Runs every test suite and prints one closing line: "N passed, N failed".
#  1. cmocka unit tests (ASan+UBSan build)
#  2. each tests/<suite>/run.sh, in SUITES order; each ends with
#     "N passed, N failed[, N skipped]"
#  3. a short libFuzzer run of every fuzz target
. "$(dirname "$0")/lib/harness.sh"

SUITES="agent seccomp runner gateway preview security fault wsconf client mcp compat cli web soak install"
FUZZ_SECONDS=${FUZZ_SECONDS:-10}
h_begin sbx-tests

echo "== unit tests (cmocka, ASan+UBSan)"
for t in build/asan/tests/test_*; do
	[ -x "$t" ] || continue
	if "$t" >"$T/unit.out" 2>&1; then rc=0; else rc=$?; fi
	n_ok=$(grep -oE '\[  PASSED  \] [0-9]+' "$T/unit.out" | grep -oE '[0-9]+$' || echo 0)
	n_bad=$(grep -oE '\[  FAILED  \] [0-9]+' "$T/unit.out" | grep -oE '[0-9]+$' | head -1 || echo 0)
	[ -n "$n_bad" ] || n_bad=0
	[ "$rc" != 0 ] && [ "$n_bad" = 0 ] && n_bad=1
	echo "  $(basename "$t"): $n_ok passed, $n_bad failed"
	echo "$n_ok passed, $n_bad failed" >"$T/unit.sum"
	[ "$n_bad" != 0 ] && cat "$T/unit.out"
	h_count -q "$T/unit.sum"
done

for s in $SUITES; do
	[ -x "tests/$s/run.sh" ] || continue
	echo "== $s"
	"tests/$s/run.sh" 2>&1 | tee "$T/$s.out"
	h_count -q "$T/$s.out"
done

echo "== fuzz (${FUZZ_SECONDS}s per target)"
tests/fuzz/run.sh "$FUZZ_SECONDS" 2>&1 | tee "$T/fuzz.out"
h_count -q "$T/fuzz.out"

echo
h_finish
