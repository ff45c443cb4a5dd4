#!/bin/bash
# Runs every test suite and prints one closing line: "N passed, N failed".
#  1. cmocka unit tests (ASan+UBSan build)
#  2. each tests/<suite>/run.sh, in SUITES order; each ends with
#     "N passed, N failed[, N skipped]"
#  3. the sandbox-level suites (runner, gateway, preview, security) once
#     more per other isolation driver the runner finds available here
#  4. a short libFuzzer run of every fuzz target
set -u
cd "$(dirname "$0")/.."

SUITES=${SUITES:-"agent seccomp runner gateway preview security fault wsconf client mcp cli web soak"}
FUZZ_SECONDS=${FUZZ_SECONDS:-10}
passed=0 failed=0 skipped=0
log=$(mktemp -d /tmp/sbx-tests.XXXXXX)

add_counts() { # file
	local line
	line=$(grep -E '^([A-Za-z]+: )?[0-9]+ passed, [0-9]+ failed' "$1" | tail -1)
	if [ -z "$line" ]; then
		echo "  (no closing line: counted as 1 failure)"
		failed=$((failed + 1)); return
	fi
	line=${line#*: }
	local p f s
	p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
	f=$(echo "$line" | sed -E 's/.*passed, ([0-9]+) failed.*/\1/')
	s=$(echo "$line" | grep -oE '[0-9]+ skipped' | grep -oE '[0-9]+' || echo 0)
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
}

echo "== unit tests (cmocka, ASan+UBSan)"
for t in build/asan/tests/test_*; do
	[ -x "$t" ] || continue
	if "$t" >"$log/unit.out" 2>&1; then rc=0; else rc=$?; fi
	n_ok=$(grep -oE '\[  PASSED  \] [0-9]+' "$log/unit.out" | grep -oE '[0-9]+$' || echo 0)
	n_bad=$(grep -oE '\[  FAILED  \] [0-9]+' "$log/unit.out" | grep -oE '[0-9]+$' | head -1 || echo 0)
	[ -n "$n_bad" ] || n_bad=0
	[ "$rc" != 0 ] && [ "$n_bad" = 0 ] && n_bad=1
	echo "  $(basename "$t"): $n_ok passed, $n_bad failed"
	[ "$n_bad" != 0 ] && cat "$log/unit.out"
	passed=$((passed + n_ok)); failed=$((failed + n_bad))
done

for s in $SUITES; do
	[ -x "tests/$s/run.sh" ] || continue
	echo "== $s"
	"tests/$s/run.sh" 2>&1 | tee "$log/$s.out"
	add_counts "$log/$s.out"
done

# The sandbox-level suites once more for every other driver this host
# offers (the runner's own probe says which): the same suites with the
# runners' --default-isolation set, not copies. An unavailable driver is
# one SKIP line with the probe's reason.
DRIVER_SUITES="runner gateway preview security"
RUNNER_BIN=bin/sandbox-runner AGENT_BIN=bin/sandbox-agent
if [ "$(id -u)" = 0 ] && [ -x "$RUNNER_BIN" ] && [ -x "$AGENT_BIN" ]; then
	python3 tests/runner/drivers.py "$RUNNER_BIN" "$AGENT_BIN" >"$log/drivers" 2>&1 ||
		echo "  (driver probe failed: $(tail -1 "$log/drivers"))"
else
	: >"$log/drivers"
fi
while read -r drv state; do
	[ -n "$drv" ] && [ "$drv" != jail ] || continue
	if [ "$state" != available ]; then
		echo "== $DRIVER_SUITES (isolation $drv)"
		echo "SKIP: isolation $drv: ${state#unavailable: }"
		skipped=$((skipped + 1))
		continue
	fi
	for s in $DRIVER_SUITES; do
		[ -x "tests/$s/run.sh" ] || continue
		echo "== $s (isolation $drv)"
		SANDBOX_TEST_ISOLATION=$drv "tests/$s/run.sh" 2>&1 | tee "$log/$s.$drv.out"
		add_counts "$log/$s.$drv.out"
	done
done <"$log/drivers"

echo "== fuzz (${FUZZ_SECONDS}s per target)"
if tests/fuzz/run.sh "$FUZZ_SECONDS" >"$log/fuzz.out" 2>&1; then
	cat "$log/fuzz.out"; add_counts "$log/fuzz.out"
else
	cat "$log/fuzz.out"; add_counts "$log/fuzz.out"
	grep -qE '[0-9]+ passed, [0-9]+ failed' "$log/fuzz.out" || failed=$((failed + 1))
fi

rm -rf "$log"
echo
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
