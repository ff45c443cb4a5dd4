#!/bin/bash
# Browser suite: headless Chromium (Debian's /usr/bin/chromium, never a
# downloaded browser) driven by playwright-core, on the web demo served by the
# real gateway with a real runner and sandbox. Screenshots go to the
# directory printed first. Ends with "N passed, N failed, N skipped" (the
# closing line of web.test.js).
. "$(dirname "$0")/../lib/harness.sh"
GW=bin/sandbox-gateway

why=$(h_services_missing)
[ -n "$why" ] || [ -x "$GW" ] || why="bin/ not built (make)"
[ -n "$why" ] || [ -x /usr/bin/chromium ] || why="no /usr/bin/chromium (apt-get install chromium)"
[ -z "$why" ] || h_skip_suite "web suite: $why"
h_begin web-test
# The page under test is the current source: make web rebuilds dist/ only when it changed.
make -s web >"$T/make-web.log" 2>&1 || { cat "$T/make-web.log"; h_abort "make web"; }
if [ -z "${ARTIFACTS:-}" ]; then
	ARTIFACTS=tests/web/artifacts/$(date +%Y%m%d-%H%M%S)
	# keep the screenshots of the last few runs only
	ls -1dt tests/web/artifacts/*/ 2>/dev/null | tail -n +5 | xargs -r rm -rf
fi
mkdir -p "$ARTIFACTS"
export ARTIFACTS=$(cd "$ARTIFACTS" && pwd)
echo "screenshots: $ARTIFACTS"
export GW_KEY=test-key-$RANDOM$RANDOM GW_WEB_DIR=web-demo/dist
SANDBOX_API_KEYS=$GW_KEY start_services "web$$" --web-dir "$GW_WEB_DIR" || h_abort "services did not start"
# A second gateway on the same runner, its previews under preview.test (the browser maps the
# name to 127.0.0.1): cookie tossing across previews needs a registrable preview domain, as
# Chromium refuses Domain=localhost (tests/web/cookie_toss.js).
main_gw_pid=$GW_PID
pt_port=$(random_port)
SANDBOX_API_KEYS=$GW_KEY start_gateway "$GW" "$pt_port" "$T/gateway-preview-test.log" \
	--runner-socket "$T/runner.sock" --preview-domain preview.test &&
	export PREVIEW_TEST_URL=http://127.0.0.1:$pt_port
GW_PID=$main_gw_pid
node tests/web/web.test.js
rc=$?
if [ $rc != 0 ]; then
	echo "--- gateway log (tail; the gateways' and the runner's whole logs are kept beside the screenshots)"
	tail -20 "$GW_LOG"
	cp "$T"/*.log "$ARTIFACTS"/ 2>/dev/null
fi
exit $rc
