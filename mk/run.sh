#!/bin/bash
# `make run`: a local runner plus the gateway on http://localhost:$PORT.
# Honours PORT (8080), SANDBOX_API_KEYS (unset: a development key is
# generated), PREVIEW_DOMAIN (localhost), SANDBOX_IMAGE_DIR. Ctrl-C stops
# both and removes the runtime directory.
set -u
cd "$(dirname "$0")/.."
PORT=${PORT:-8080}
export PREVIEW_DOMAIN=${PREVIEW_DOMAIN:-localhost}
IMG=${SANDBOX_IMAGE_DIR:-/var/cache/sandbox/images}
RUN=$(mktemp -d /tmp/sandbox-run.XXXXXX)
if [ -z "${SANDBOX_API_KEYS:-}" ]; then
	SANDBOX_API_KEYS="dev_$(head -c 18 /dev/urandom | base64 | tr -dc 'a-zA-Z0-9' | head -c 24)"
fi
export SANDBOX_API_KEYS
rpid= gpid=
stop() {
	trap - INT TERM EXIT
	[ -n "$gpid" ] && kill "$gpid" 2>/dev/null
	[ -n "$rpid" ] && kill "$rpid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$RUN"
	exit 0
}
trap stop INT TERM EXIT
bin/sandbox-runner --socket "$RUN/runner.sock" --state-dir "$RUN/state" --image-dir "$IMG" &
rpid=$!
for _ in $(seq 100); do [ -S "$RUN/runner.sock" ] && break; sleep 0.1; done
[ -S "$RUN/runner.sock" ] || { echo "runner did not start" >&2; stop; }
bin/sandbox-gateway --port "$PORT" --runner-socket "$RUN/runner.sock" \
	--preview-domain "$PREVIEW_DOMAIN" &
gpid=$!
for _ in $(seq 100); do curl -s -m 1 "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
echo "URL: http://localhost:$PORT"
echo "API key: ${SANDBOX_API_KEYS%%,*}"
wait "$gpid"
stop
