#!/bin/bash
# Python client suite: clients/python (package sbxgw) installed into a
# throwaway venv over Debian's python3 and its packages, against the real
# gateway, runner and sandboxes: the README's first example as it stands,
# then client_test.py (the flows of tests/client, sync and asyncio, and
# streams cut mid-message and resumed byte for byte) and operations_test.py
# (snapshots, fork, pause, images, network policy and log, the paged list). Ends with
# "N passed, N failed, N skipped".
. "$(dirname "$0")/../lib/harness.sh"
PY=/usr/bin/python3 # Debian's: its python3-httpx, -setuptools and -wheel (mk/deps.sh)

why=$(h_services_missing)
[ -n "$why" ] || [ -x "$GW" ] || why="bin/ not built (make)"
[ -n "$why" ] || "$PY" -c 'import httpx, setuptools, venv, wheel' 2>/dev/null ||
	why="$PY lacks httpx, setuptools, wheel or venv (mk/deps.sh installs them)"
[ -z "$why" ] || h_skip_suite "python-client suite: $why"
h_begin python-client
export PYTHONDONTWRITEBYTECODE=1

# A copy, so the build leaves nothing in the checkout.
cp -r clients/python "$T/src" && rm -rf "$T/src/build" "$T/src/"*.egg-info
"$PY" -m venv --system-site-packages "$T/venv" || h_abort "venv"
if "$T/venv/bin/pip" install --no-build-isolation --no-index --no-cache-dir "$T/src" >"$T/pip.log" 2>&1; then
	pass "install: pip install --no-build-isolation into a venv, nothing from the index"
else
	tail -20 "$T/pip.log"
	h_abort "install: pip install --no-build-isolation"
fi

# Typed (PEP 561): mypy --strict sees the installed package's types; a typed
# example passes, misuse is caught.
if "$PY" -m mypy --version >/dev/null 2>&1; then
	mypy() { (cd "$T" && "$PY" -m mypy --strict --python-executable "$T/venv/bin/python" \
		--cache-dir "$T/mypy-cache" --no-error-summary "$@"); }
	mypy "$PWD/tests/python-client/typed_example.py" >"$T/mypy.out" 2>&1
	check "typed: mypy --strict passes a typed example against the installed package" "$?:$(cat "$T/mypy.out")" "0:"
	mypy "$PWD/tests/python-client/typed_misuse.py" >"$T/mypy.out" 2>&1
	check "typed: mypy --strict catches misuse (errors on lines 6, 7)" \
		"$(grep -oE '^[^:]*typed_misuse.py:[0-9]+: error' "$T/mypy.out" | sed 's/.*py:\([0-9]*\).*/\1/' | tr '\n' ' ')" "6 7 "
else
	skip "typed: mypy is missing (mk/deps.sh installs Debian's mypy)"
fi

export GW_KEY=test-key-$RANDOM$RANDOM
# an image dir of the suite's own (the shared default linked in), so the
# images an operations case imports never land in the shared store
mkdir -p "$T/images" && ln -s "$(readlink -f "$IMG/default")" "$T/images/default" && IMG=$T/images
SANDBOX_API_KEYS=$GW_KEY start_services "pyclient$$" || h_abort "services did not start"
export SANDBOX_URL=$GW_URL SANDBOX_API_KEY=$GW_KEY GW_URL GW_PORT TOP=$PWD

running() {
	curl -s -H "Authorization: Bearer $GW_KEY" "$GW_URL/v1/sandboxes" |
		"$PY" -c 'import json,sys; print(sum(s["status"] == "running" for s in json.load(sys.stdin)["sandboxes"]))'
}

# The README's first code block, as it stands, with only the two variables set.
awk '/^```python$/ { f = 1; next } f && /^```$/ { exit } f' clients/python/README.md >"$T/example.py"
(cd "$T" && timeout 600 "$T/venv/bin/python" example.py) >"$T/example.out" 2>&1
check "readme example: exit status" "$?" 0
check "readme example: run's exit code" "$(grep -c '^exit code: 3$' "$T/example.out")" 1
check "readme example: run's stdout" "$(grep -c '^stdout: hello from Linux$' "$T/example.out")" 1
check "readme example: run's stderr" "$(grep -c '^stderr: oops$' "$T/example.out")" 1
check "readme example: streamed lines, in order" "$(grep -o 'tick [0-9]' "$T/example.out" | tr '\n' ' ')" "tick 0 tick 1 tick 2 "
check "readme example: every chunk is stdout" "$(grep -c '^\[stderr\]' "$T/example.out")" 0
check "readme example: the command's exit" "$(grep -c '^exited with 0$' "$T/example.out")" 1
check "readme example: its sandbox was stopped" "$(running)" 0
[ "$H_FAIL" = 0 ] || { echo "--- example output"; cat "$T/example.out"; }
# Its second code block, the asyncio one, as it stands too.
awk '/^```python$/ { n++; if (n == 2) { f = 1; next } } f && /^```$/ { exit } f' clients/python/README.md >"$T/example_async.py"
out=$(cd "$T" && timeout 600 "$T/venv/bin/python" example_async.py 2>&1)
check "readme asyncio example: its output" "$out" "$(printf 'hi\n1\n2\n3')"
check "readme asyncio example: its sandbox was stopped" "$(running)" 0

(cd "$T" && "$T/venv/bin/python" "$TOP/tests/python-client/client_test.py") 2>&1 | tee "$T/client.out"
h_count -q "$T/client.out"
(cd "$T" && "$T/venv/bin/python" "$TOP/tests/python-client/operations_test.py") 2>&1 | tee "$T/operations.out"
h_count -q "$T/operations.out"
check "no sandbox left running" "$(running)" 0
stop_gateway_checked # streams cut mid-frame above: the ASan gateway's leak check
h_finish
