# Sourced by tests/client/run.sh and tests/web/run.sh: starts the real
# sandbox-runner and sandbox-gateway on a random port, the way
# tests/gateway/run.sh does, and stops them on exit.
#   start_services DIR NAME -> runner --name NAME (one runner per name per host,
#                           so suites running at once do not collide); sets GW_PORT, GW_URL, GW_KEY, GW_WEB_DIR (empty when
#                           the gateway has no --web-dir), GW_LOG, RUNNER_LOG
#   services_missing     -> why the services cannot run here (empty: they can)
# The caller's EXIT trap must call stop_services.

SVC_PIDS=()
IMG=${SANDBOX_IMAGE_DIR:-/var/cache/sandbox/images}

services_missing() {
	[ "$(id -u)" = 0 ] || { echo "needs root (the runner maps uid ranges)"; return; }
	[ -x bin/sandbox-runner ] && [ -x bin/sandbox-gateway ] || { echo "bin/ not built (make)"; return; }
	[ -d "$IMG/default/rootfs" ] || { echo "no image at $IMG/default/rootfs (make image)"; return; }
}

start_services() { # dir runner-name
	local dir=$1 name=$2
	GW_KEY=test-key-$RANDOM$RANDOM
	GW_LOG=$dir/gateway.log RUNNER_LOG=$dir/runner.log
	bin/sandbox-runner --name "$name" --socket "$dir/runner.sock" --state-dir "$dir/state" --image-dir "$IMG" >"$RUNNER_LOG" 2>&1 &
	SVC_PIDS+=($!)
	for _ in $(seq 100); do [ -S "$dir/runner.sock" ] && break; sleep 0.1; done
	[ -S "$dir/runner.sock" ] || { echo "runner did not start:"; tail -5 "$RUNNER_LOG"; return 1; }
	local web=()
	GW_WEB_DIR=
	if bin/sandbox-gateway --help 2>&1 | grep -q -- '--web-dir'; then
		GW_WEB_DIR=web-demo/dist
		web=(--web-dir "$GW_WEB_DIR")
	fi
	for _ in 1 2 3; do # a random port may be taken: try another
		GW_PORT=$((20000 + RANDOM % 10000))
		SANDBOX_API_KEYS=$GW_KEY bin/sandbox-gateway --port "$GW_PORT" --runner-socket "$dir/runner.sock" \
			"${web[@]}" >"$GW_LOG" 2>&1 &
		SVC_PIDS+=($!)
		for _ in $(seq 50); do
			if curl -s -m 1 -o /dev/null "http://127.0.0.1:$GW_PORT/healthz"; then
				GW_URL=http://127.0.0.1:$GW_PORT
				export GW_URL GW_KEY GW_PORT GW_WEB_DIR
				return 0
			fi
			kill -0 "${SVC_PIDS[-1]}" 2>/dev/null || break
			sleep 0.1
		done
	done
	echo "gateway did not start:"; tail -5 "$GW_LOG"
	return 1
}

stop_services() {
	local p
	for p in "${SVC_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${SVC_PIDS[@]}"; do wait "$p" 2>/dev/null; done
	SVC_PIDS=()
}
