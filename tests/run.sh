#!/bin/bash
# Runs every test suite and prints one closing line: "N passed, N failed".
#  1. cmocka unit tests (ASan+UBSan build)
#  2. each tests/<suite>/run.sh, in SUITES order; each ends with
#     "N passed, N failed[, N skipped]"
#  3. the sandbox-level suites (runner, gateway, preview, security) once
#     more per other isolation driver the runner finds available here
#  4. a short libFuzzer run of every fuzz target
. "$(dirname "$0")/lib/harness.sh"

SUITES=${SUITES:-"layers agent seccomp runner gateway images snapshots pipeline preview cluster security egress fault wsconf client python-client mcp refusals openapi compat cli web soak install deploy oci vm"}
FUZZ_SECONDS=${FUZZ_SECONDS:-10}
h_begin sbx-tests
# failures counted here rather than in a suite's own output (a unit test,
# a suite that did not finish) are kept for the list at the end too
fail() { echo "FAIL: $1"; H_FAIL=$((H_FAIL + 1)); echo "FAIL: $1" >>"$T/run.out"; }

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
	[ "$n_bad" != 0 ] && { cat "$T/unit.out"; echo "FAIL: $(basename "$t"): $n_bad failed" >>"$T/run.out"; }
	h_count -q "$T/unit.sum"
done

for s in $SUITES; do
	[ -x "tests/$s/run.sh" ] || continue
	echo "== $s"
	"tests/$s/run.sh" 2>&1 | tee "$T/$s.out"
	h_count -q "$T/$s.out"
done

# The sandbox-level suites once more for every other driver this host
# offers (the runner's own probe says which): the same suites with the
# runners' --default-isolation set, not copies. An unavailable driver is
# one SKIP line with the probe's reason.
DRIVER_SUITES="runner gateway preview security egress snapshots"
RUNNER_BIN=bin/sandbox-runner AGENT_BIN=bin/sandbox-agent
if [ "$(id -u)" = 0 ] && [ -x "$RUNNER_BIN" ] && [ -x "$AGENT_BIN" ]; then
	python3 tests/runner/drivers.py "$RUNNER_BIN" "$AGENT_BIN" >"$T/drivers" 2>&1 ||
		echo "  (driver probe failed: $(tail -1 "$T/drivers"))"
else
	: >"$T/drivers"
fi
while read -r drv state; do
	[ -n "$drv" ] && [ "$drv" != jail ] || continue
	if [ "$state" != available ]; then
		echo "== $DRIVER_SUITES (isolation $drv)"
		skip "isolation $drv: ${state#unavailable: }"
		continue
	fi
	# a VM boots a kernel per sandbox (translated, without KVM): the
	# runner's vm checks (tests/runner/vm_checks.py), the preview suite,
	# the gateway's sandbox flow and the security probes of what a guest
	# kernel changes (VM_PROBES); about 7 minutes under TCG here
	suites=$DRIVER_SUITES checks= gwchecks= probes= pvchecks=
	[ "$drv" = vm ] && suites="runner preview gateway security" checks=vm gwchecks=flow \
		pvchecks=vm probes=${VM_PROBES:-"0 1 3 80 81 82 83"}
	for s in $suites; do
		[ -x "tests/$s/run.sh" ] || continue
		echo "== $s (isolation $drv)"
		# (probes: the security suite's probe numbers, none for the others)
		# shellcheck disable=SC2086
		RUNNER_CHECKS=$checks GATEWAY_CHECKS=$gwchecks PREVIEW_CHECKS=$pvchecks \
			SANDBOX_TEST_ISOLATION=$drv \
			"tests/$s/run.sh" $([ "$s" = security ] && echo $probes) 2>&1 | tee "$T/$s.$drv.out"
		h_count -q "$T/$s.$drv.out"
	done
done <"$T/drivers"

echo "== fuzz (${FUZZ_SECONDS}s per target)"
tests/fuzz/run.sh "$FUZZ_SECONDS" 2>&1 | tee "$T/fuzz.out"
h_count -q "$T/fuzz.out"

# CI shows only the last lines: name each failure again just above the
# closing line (its suite's file, the check, cut to one line)
if grep -q '^FAIL' "$T"/*.out 2>/dev/null; then
	echo
	echo "failed checks:"
	grep -H '^FAIL' "$T"/*.out | sed -E "s|^$T/||; s|\.out:FAIL: |: |" | cut -c1-200 | head -20
fi
echo
h_finish
