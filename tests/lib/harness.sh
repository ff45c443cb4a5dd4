# The shell suites' harness (tests/README.md), sourced by every
# tests/<suite>/run.sh:  . "$(dirname "$0")/../lib/harness.sh"
# It moves to the checkout's top, and gives:
#   h_begin NAME          T: a temp dir /tmp/NAME.XXXXXX; at exit every process
#                         the suite started through the harness (or h_track)
#                         gets SIGTERM (SIGKILL after 15 s: a runner stops its
#                         sandboxes first), then suite_cleanup if the suite
#                         defines one, and T is removed (kept when H_KEEP is
#                         set: its path is printed at the start)
#   pass MSG | fail MSG | skip MSG     one PASS:/FAIL:/SKIP: line, counted
#   check NAME GOT WANT   pass when GOT = WANT, else fail showing both
#   h_count [-q] FILE     add a sub-suite's counts: the numbers of its closing
#                         line (none: it did not finish, one more failure);
#                         its PASS:/FAIL:/SKIP: lines are printed too, unless
#                         -q (the caller showed them already)
#   h_count_lines [-q] FILE [N]   the same for a sub-suite that prints no
#                         closing line: its PASS:/FAIL:/SKIP: lines count; given
#                         N, other than N PASS/FAIL lines is one more failure
#   h_finish              the closing line "N passed, N failed, N skipped";
#                         exits 1 on a failure, else 0
#   h_skip_suite WHY      the whole suite cannot run here: SKIP, closing line
#   h_abort WHY           a failure after which nothing can be checked: FAIL,
#                         closing line
#   h_track PID           stop PID at exit as well
#   h_services_missing    why a runner and sandboxes cannot run here (empty:
#                         they can): root, bin/sandbox-runner, the image
#   start_runner NAME SOCK STATE [ARGS...]
#                         bin/sandbox-runner (RUNNER to change) named NAME
#                         (carry the suite's pid: one runner per name per host)
#                         on SOCK; its log is RUNNER_LOG (T/runner.NAME.log); RUNNER_PID;
#                         1 if it died or its socket did not take a connection in 10 s
#   start_gateway BIN PORT LOG [ARGS...]
#                         BIN --port PORT ARGS (the environment gives keys),
#                         output appended to LOG; GW_PID; waits for healthz;
#                         1 if it died or did not answer in 10 s (GW_WAIT
#                         tries of 0.1 s to change)
#   start_services NAME [ARGS...]
#                         start_runner NAME on T/runner.sock, then GW (the
#                         ASan gateway where built, else bin/) with ARGS on
#                         a random port (up to three: one may be taken), its
#                         log GW_LOG; exports GW_PORT and GW_URL
#   wait_healthz PORT [TRIES] [PID]    0 once /healthz answers (over HTTP, or
#                         HTTPS for a gateway with --cert); 1 after TRIES tries
#                         of 0.1 s (100), at once if PID died
#   random_port           a port below the ephemeral range (20000-31999)
#   stop_gateway_checked  stop GW_PID (ASan's leak check runs at exit), then
#                         one check: no sanitizer report in GW_LOG; on any
#                         failure so far, the log's tail
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

H_PASS=0 H_FAIL=0 H_SKIP=0
H_PIDS=()
IMG=${SANDBOX_IMAGE_DIR:-/var/cache/sandbox/images}
RUNNER=${RUNNER:-bin/sandbox-runner}
GW=${GW:-build/asan/bin/sandbox-gateway}
[ -x "$GW" ] || GW=bin/sandbox-gateway
T=

pass() { echo "PASS: $1"; H_PASS=$((H_PASS + 1)); }
fail() { echo "FAIL: $1"; H_FAIL=$((H_FAIL + 1)); }
skip() { echo "SKIP: $1"; H_SKIP=$((H_SKIP + 1)); }
check() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1 (got '$2', want '$3')"; fi; }

h_finish() {
	echo "$H_PASS passed, $H_FAIL failed, $H_SKIP skipped"
	[ "$H_FAIL" = 0 ]
	exit
}
h_skip_suite() { skip "$1"; h_finish; }
h_abort() { fail "$1"; h_finish; }

h_count() { # [-q] file
	local quiet= line p f k
	[ "$1" = -q ] && { quiet=1; shift; }
	[ -n "$quiet" ] || grep -E '^(PASS|FAIL|SKIP)' "$1"
	line=$(grep -E '^([A-Za-z]+: )?[0-9]+ passed, [0-9]+ failed' "$1" | tail -1)
	line=${line#*: }
	if [ -z "$line" ]; then
		fail "$(basename "$1" .out): did not finish"; tail -20 "$1"
		return
	fi
	p=${line%% passed*}
	f=$(echo "$line" | sed -E 's/.*passed, ([0-9]+) failed.*/\1/')
	k=$(echo "$line" | sed -nE 's/.*failed, ([0-9]+) skipped.*/\1/p')
	H_PASS=$((H_PASS + p)) H_FAIL=$((H_FAIL + f)) H_SKIP=$((H_SKIP + ${k:-0}))
}

h_count_lines() { # [-q] file [n]
	local quiet= p f
	[ "$1" = -q ] && { quiet=1; shift; }
	[ -n "$quiet" ] || grep -E '^(PASS|FAIL|SKIP)' "$1"
	p=$(grep -c '^PASS' "$1") f=$(grep -c '^FAIL' "$1")
	H_PASS=$((H_PASS + p)) H_FAIL=$((H_FAIL + f)) H_SKIP=$((H_SKIP + $(grep -c '^SKIP' "$1")))
	[ $# -lt 2 ] || [ $((p + f)) = "$2" ] || { fail "$(basename "$1" .out): did not finish"; tail -20 "$1"; }
}

h_track() { H_PIDS+=("$1"); }

h_stop_all() {
	local p alive
	for p in "${H_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for _ in $(seq 150); do
		alive=0
		for p in "${H_PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ $alive = 0 ] && break
		sleep 0.1
	done
	for p in "${H_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	H_PIDS=()
}

h_cleanup() {
	h_stop_all
	[ -n "$(type -t suite_cleanup)" ] && suite_cleanup
	[ -n "$T" ] && [ -z "${H_KEEP:-}" ] && rm -rf "$T"
}

h_begin() { # name
	T=$(mktemp -d "/tmp/$1.XXXXXX")
	[ -n "${H_KEEP:-}" ] && echo "work dir (kept): $T"
	trap h_cleanup EXIT
}

h_services_missing() {
	[ "$(id -u)" = 0 ] || { echo "needs root (the runner maps uid ranges)"; return; }
	[ -x "$RUNNER" ] || { echo "$RUNNER not built (make)"; return; }
	[ -d "$IMG/default/rootfs" ] || { echo "no image at $IMG/default/rootfs (make image)"; return; }
}

random_port() { echo $((20000 + RANDOM % 12000)); }

wait_healthz() { # port [tries] [pid]
	local port=$1 tries=${2:-100} pid=${3:-}
	for _ in $(seq "$tries"); do
		curl -s -m 1 -o /dev/null "http://127.0.0.1:$port/healthz" && return 0
		curl -s -m 1 -o /dev/null -k "https://127.0.0.1:$port/healthz" && return 0
		[ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null && return 1
		sleep 0.1
	done
	return 1
}

# Debian's docker-registry (the reference registry) on loopback, storing in
# $T/registry, tracked for the suite's cleanup (so not in a subshell);
# sets REGISTRY_PORT once it answers /v2/ (10 s at most; a registry that
# never answers fails the suite's pushes, which say so).
start_registry() {
	local port
	port=$(random_port)
	printf 'version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: 127.0.0.1:%s\n' \
		"$T/registry" "$port" >"$T/registry.yml"
	docker-registry serve "$T/registry.yml" >"$T/registry.log" 2>&1 &
	h_track $!
	for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/v2/" && break; sleep 0.1; done
	REGISTRY_PORT=$port
}

start_runner() { # name sock state [args...]
	local name=$1 sock=$2 state=$3
	shift 3
	RUNNER_LOG=$T/runner.$name.log
	"$RUNNER" --name "$name" --socket "$sock" --state-dir "$state" --image-dir "$IMG" "$@" \
		>>"$RUNNER_LOG" 2>&1 &
	RUNNER_PID=$!
	h_track $RUNNER_PID
	# the runner renames its socket into place once it listens: a
	# socket there takes connections (docs/runner.md, --socket)
	for _ in $(seq 100); do
		[ -S "$sock" ] && return 0
		kill -0 $RUNNER_PID 2>/dev/null || break
		sleep 0.1
	done
	echo "runner $name did not start:"; tail -5 "$RUNNER_LOG"
	return 1
}

start_gateway() { # bin port log [args...]
	local bin=$1 port=$2 log=$3
	shift 3
	"$bin" --port "$port" "$@" >>"$log" 2>&1 &
	GW_PID=$!
	h_track $GW_PID
	wait_healthz "$port" "${GW_WAIT:-100}" $GW_PID || return 1
	# the answer must be this gateway's: in a parallel run another one may
	# hold the port while this one died with "Address already in use"
	ss -ltnpH "sport = :$port" | grep -q "pid=$GW_PID," && return 0
	echo "start_gateway: port $port answers, but not from gateway $GW_PID:"; tail -3 "$log"
	return 1
}

start_services() { # name [gateway args...]
	local name=$1
	shift
	start_runner "$name" "$T/runner.sock" "$T/state" || return 1
	GW_LOG=$T/gateway.log
	for _ in 1 2 3; do
		GW_PORT=$(random_port)
		if start_gateway "$GW" "$GW_PORT" "$GW_LOG" --runner-socket "$T/runner.sock" "$@"; then
			GW_URL=http://127.0.0.1:$GW_PORT
			export GW_PORT GW_URL
			return 0
		fi
	done
	echo "gateway did not start:"; tail -5 "$GW_LOG"
	return 1
}

stop_gateway_checked() {
	kill "$GW_PID" 2>/dev/null; wait "$GW_PID" 2>/dev/null
	if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$GW_LOG"; then
		fail "sanitizer report in the gateway log"; grep -A20 -E 'ERROR: |runtime error:' "$GW_LOG" | head -40
	else
		pass "no sanitizer report in the gateway log"
	fi
	if [ "$H_FAIL" != 0 ]; then echo "--- gateway log (tail)"; tail -20 "$GW_LOG"; fi
}
