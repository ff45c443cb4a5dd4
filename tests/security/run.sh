#!/bin/bash
# Security probes of ../shared/SECURITY.md section 3 (groups A-D) against a
# real runner (jail driver) and the ASan+UBSan gateway, mostly as programs
# run inside sandboxes through the public API. Prints one PASS/FAIL/SKIP
# line per probe and ends with "N passed, N failed, N skipped".
# Needs root, `make` and `make VARIANT=asan all`, and the default image.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
RUNNER=${SEC_RUNNER:-bin/sandbox-runner}   # another build can be tried
GW=${SEC_GATEWAY:-build/asan/bin/sandbox-gateway}   # another build can be tried
IMGDIR=${SANDBOX_IMAGE_DIR:-/var/cache/sandbox/images}
NAME=${SEC_NAME:-sec$$}

if [ "$(id -u)" != 0 ] || [ ! -x "$RUNNER" ] || [ ! -x "$GW" ] || [ ! -d "$IMGDIR/default/rootfs" ]; then
	echo "SKIP: security suite needs root, $RUNNER, $GW and $IMGDIR/default/rootfs"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi

T=$(mktemp -d /tmp/sec-test.XXXXXX)
chmod 755 "$T"
rpid="" gpid=""
cleanup() {
	[ -n "$gpid" ] && kill "$gpid" 2>/dev/null
	[ -n "$rpid" ] && kill "$rpid" 2>/dev/null   # SIGTERM: the runner stops its sandboxes
	for _ in $(seq 150); do
		{ [ -z "$rpid" ] || ! kill -0 "$rpid" 2>/dev/null; } &&
			{ [ -z "$gpid" ] || ! kill -0 "$gpid" 2>/dev/null; } && break
		sleep 0.1
	done
	[ -n "$gpid" ] && kill -9 "$gpid" 2>/dev/null
	[ -n "$rpid" ] && kill -9 "$rpid" 2>/dev/null
	ip netns del sbxsecup 2>/dev/null
	ip link del sbxsecup0 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

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
(umask 000; exec env SEC_RUNNER_SECRET="$CANARY" "$RUNNER" --name "$NAME" --socket "$T/r.sock" \
	--state-dir "$T/state" --image-dir "$IMGDIR" \
	--default-isolation "${SANDBOX_TEST_ISOLATION:-jail}" >"$T/runner.log" 2>&1) &
rpid=$!
for _ in $(seq 100); do [ -S "$T/r.sock" ] && break; kill -0 $rpid 2>/dev/null || break; sleep 0.1; done
if [ ! -S "$T/r.sock" ]; then
	echo "FAIL: runner did not start: $(tail -5 "$T/runner.log")"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
PORT=$((21000 + RANDOM % 10000))
# a small ASan quarantine, so RSS figures measure the gateway, not ASan
env SANDBOX_API_KEYS="$KA,$KB" SEC_GW_SECRET="$CANARY" \
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:quarantine_size_mb=16} \
	"$GW" --port $PORT --runner-socket "$T/r.sock" --max-sandboxes-per-key 20 \
	--keys-file "$T/keys" >"$T/gw.log" 2>&1 &
gpid=$!
for _ in $(seq 100); do curl -s -m 1 "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done

export PYTHONDONTWRITEBYTECODE=1   # no __pycache__ in the checkout
export SEC_PORT=$PORT SEC_KA=$KA SEC_KB=$KB SEC_CANARY=$CANARY SEC_DIR=$T SEC_NAME=$NAME \
	SEC_RUNNER_PID=$rpid SEC_GW_PID=$gpid SEC_IMGDIR=$IMGDIR SEC_ROOT=$ROOT SEC_GW_BIN=$GW
timeout 480 python3 tests/security/main.py "$@" | tee "$T/out"
rc=${PIPESTATUS[0]}
[ $rc = 124 ] && echo "FAIL: security suite timed out"

# after an orderly shutdown nothing of the runner's sandboxes may remain
kill "$gpid"; kill "$rpid"
for _ in $(seq 150); do kill -0 "$rpid" 2>/dev/null || kill -0 "$gpid" 2>/dev/null || break; sleep 0.1; done
extra_fail=0
if ! tests/security/leaks.sh "$NAME" "$T/state" >"$T/leaks" 2>&1; then
	echo "FAIL: leftovers after the runner stopped:"; cat "$T/leaks"; extra_fail=1
fi
if grep -qE 'ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer' "$T/gw.log"; then
	echo "FAIL: sanitizer report in the gateway log:"
	grep -A20 -E 'ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer' "$T/gw.log" | head -40
	extra_fail=$((extra_fail + 1))
fi
if grep -q "$CANARY" "$T/gw.log" "$T/runner.log" || grep -q -e "$KA" -e "$KB" "$T/gw.log"; then
	echo "FAIL: a key or the canary is in a log"; extra_fail=$((extra_fail + 1))
fi
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$T/out" | tail -1)
if [ -z "$line" ]; then
	echo "0 passed, $((1 + extra_fail)) failed, 0 skipped"; exit 1
fi
if [ $extra_fail != 0 ] || [ $rc = 124 ]; then
	p=${line%% passed*}; f=$(echo "$line" | sed -E 's/.*passed, ([0-9]+) failed.*/\1/')
	s=$(echo "$line" | grep -oE '[0-9]+ skipped' | grep -oE '^[0-9]+' || echo 0)
	[ $rc = 124 ] && extra_fail=$((extra_fail + 1))
	echo "$p passed, $((f + extra_fail)) failed, $s skipped"
	exit 1
fi
exit $rc
