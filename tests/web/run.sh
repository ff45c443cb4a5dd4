#!/bin/bash
# Browser suite: headless Chromium (Debian's /usr/bin/chromium, never a
# downloaded browser) driven by playwright-core, on the web demo served by the
# real gateway with a real runner and sandbox. Screenshots go to the
# directory printed first. Ends with "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/../.."
. tests/client/services.sh
T=$(mktemp -d /tmp/web-test.XXXXXX)
cleanup() { stop_services; rm -rf "$T"; }
trap cleanup EXIT

why=$(services_missing)
[ -n "$why" ] || [ -x /usr/bin/chromium ] || why="no /usr/bin/chromium (apt-get install chromium)"
if [ -n "$why" ]; then echo "SKIP: web suite: $why"; echo "0 passed, 0 failed, 1 skipped"; exit 0; fi
# The page under test is the current source: make web rebuilds dist/ only when it changed.
make -s web >"$T/make-web.log" 2>&1 || { cat "$T/make-web.log"; echo "FAIL: make web"; echo "0 passed, 1 failed"; exit 1; }
if [ -z "${ARTIFACTS:-}" ]; then
	ARTIFACTS=tests/web/artifacts/$(date +%Y%m%d-%H%M%S)
	# keep the screenshots of the last few runs only
	ls -1dt tests/web/artifacts/*/ 2>/dev/null | tail -n +5 | xargs -r rm -rf
fi
mkdir -p "$ARTIFACTS"
export ARTIFACTS=$(cd "$ARTIFACTS" && pwd)
echo "screenshots: $ARTIFACTS"
start_services "$T" "web$$" || { echo "FAIL: services did not start"; echo "0 passed, 1 failed"; exit 1; }
[ -n "$GW_WEB_DIR" ] || { echo "FAIL: this gateway has no --web-dir"; echo "0 passed, 1 failed"; exit 1; }
node tests/web/web.test.js
rc=$?
if [ $rc != 0 ]; then echo "--- gateway log (tail)"; tail -20 "$GW_LOG"; fi
exit $rc
