#!/bin/bash
# Security probes of ../shared/SECURITY.md section 3 (groups A-D) against a
# real runner (jail driver) and the ASan+UBSan gateway, mostly as programs
# run inside sandboxes through the public API. Prints one PASS/FAIL/SKIP
# line per probe and ends with "N passed, N failed, N skipped".
# Needs root, `make` and `make VARIANT=asan all`, and the default image.
. "$(dirname "$0")/../lib/harness.sh"
ROOT=$PWD
RUNNER=${SEC_RUNNER:-bin/sandbox-runner}   # another build can be tried
GW=${SEC_GATEWAY:-build/asan/bin/sandbox-gateway}   # another build can be tried
IMGDIR=$IMG
NAME=${SEC_NAME:-sec$$}

if [ -n "$(h_services_missing)" ] || [ ! -x "$GW" ]; then
	h_skip_suite "security suite needs root, $RUNNER, $GW and $IMGDIR/default/rootfs"
fi

h_begin sec-test
chmod 755 "$T"
suite_cleanup() {
	ip netns del sbxsecup 2>/dev/null
	ip link del sbxsecup0 2>/dev/null
}

# A secret of the host side that must never be readable inside: in the
# runner's and gateway's environment, the gateway's keys file and a file in
# the runner's state dir.
CANARY=canary$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
KA=ka-$(head -c 9 /dev/urandom | od -An -tx1 | tr -d ' \n')
KB=kb-$(head -c 9 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '# keys of the security suite\n%s\n' "$CANARY" >"$T/keys"
chmod 600 "$T/keys"
mkdir -p "$T/state"
echo "$CANARY" >"$T/state/canary"

# umask 000: nothing of a sandbox may depend on the umask the operator
# started the runner with (the agent's socket once came out 0777)
# one run per driver (tests/run.sh): SANDBOX_TEST_ISOLATION is the isolation
# of every sandbox; probes of the jail's own mechanism skip under another
umask_was=$(umask)
umask 000
# SEC_RUNNER_ARGS: more of the runner's flags (e.g. --warm-pool 2: the
# probes then run in sandboxes the pool made ahead)
# shellcheck disable=SC2086
SEC_RUNNER_SECRET="$CANARY" start_runner "$NAME" "$T/r.sock" "$T/state" \
	--default-isolation "${SANDBOX_TEST_ISOLATION:-jail}" ${SEC_RUNNER_ARGS:-} ||
	h_abort "runner did not start"
umask "$umask_was"
rpid=$RUNNER_PID
# a random port may be taken by the time the gateway binds it: up to three
# ports, as start_services does; without a gateway no probe can run
gw_up=
for _ in 1 2 3; do
	PORT=$(random_port)
	# a small ASan quarantine, so RSS figures measure the gateway, not ASan
	SANDBOX_API_KEYS="$KA,$KB" SEC_GW_SECRET="$CANARY" \
		ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:quarantine_size_mb=16} \
		start_gateway "$GW" $PORT "$T/gw.log" --runner-socket "$T/r.sock" --max-sandboxes-per-key 20 \
		--keys-file "$T/keys" && { gw_up=1; break; }
done
[ -n "$gw_up" ] || { tail -5 "$T/gw.log"; h_abort "gateway did not start"; }
gpid=$GW_PID

export PYTHONDONTWRITEBYTECODE=1   # no __pycache__ in the checkout
export SEC_PORT=$PORT SEC_KA=$KA SEC_KB=$KB SEC_CANARY=$CANARY SEC_DIR=$T SEC_NAME=$NAME \
	SEC_RUNNER_PID=$rpid SEC_GW_PID=$gpid SEC_IMGDIR=$IMGDIR SEC_ROOT=$ROOT SEC_GW_BIN=$GW
timeout 480 python3 tests/security/main.py "$@" | tee "$T/out"
rc=${PIPESTATUS[0]}
[ $rc = 124 ] && fail "security suite timed out"
h_count -q "$T/out"
[ $rc != 0 ] && [ $rc != 124 ] && [ "$H_FAIL" = 0 ] && fail "main.py exited $rc"

# after an orderly shutdown nothing of the runner's sandboxes may remain
h_stop_all
if ! tests/security/leaks.sh "$NAME" "$T/state" >"$T/leaks" 2>&1; then
	fail "leftovers after the runner stopped:"; cat "$T/leaks"
fi
if grep -qE 'ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer' "$T/gw.log"; then
	fail "sanitizer report in the gateway log:"
	grep -A20 -E 'ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer' "$T/gw.log" | head -40
fi
if grep -q "$CANARY" "$T/gw.log" "$RUNNER_LOG" || grep -q -e "$KA" -e "$KB" "$T/gw.log"; then
	fail "a key or the canary is in a log"
fi
h_finish
