#!/bin/bash
# `make run`: the gateway on http://localhost:$PORT with its embedded local
# runner (jail driver). Honours PORT (8080), SANDBOX_API_KEYS (unset: a
# development key is generated), PREVIEW_DOMAIN (localhost),
# SANDBOX_IMAGE_DIR. Ctrl-C stops the gateway, which stops its runner and
# every sandbox and removes its runtime directory.
set -u
cd "$(dirname "$0")/.."
PORT=${PORT:-8080}
export PREVIEW_DOMAIN=${PREVIEW_DOMAIN:-localhost}
export SANDBOX_IMAGE_DIR=${SANDBOX_IMAGE_DIR:-/var/cache/sandbox/images}
if [ -z "${SANDBOX_API_KEYS:-}" ]; then
	SANDBOX_API_KEYS="dev_$(head -c 18 /dev/urandom | base64 | tr -dc 'a-zA-Z0-9' | head -c 24)"
fi
export SANDBOX_API_KEYS
gpid=
stop() {
	trap - INT TERM
	[ -n "$gpid" ] && kill -TERM "$gpid" 2>/dev/null
	wait "$gpid" 2>/dev/null
	exit 0
}
trap stop INT TERM
bin/sandbox-gateway --port "$PORT" --preview-domain "$PREVIEW_DOMAIN" &
gpid=$!
for _ in $(seq 300); do
	curl -s -m 1 "http://127.0.0.1:$PORT/healthz" >/dev/null && break
	kill -0 "$gpid" 2>/dev/null || { echo "the gateway did not start (see above)" >&2; exit 1; }
	sleep 0.1
done
echo "URL: http://localhost:$PORT"
echo "API key: ${SANDBOX_API_KEYS%%,*}"
wait "$gpid"
