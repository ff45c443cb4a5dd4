#!/bin/bash
# Gateway WebSocket streams benchmark (release build, real runner, real
# sandboxes, our own C client bench/ws_reader.c):
#  1. throughput of a sandboxed `head -c 1G /dev/zero` to one WebSocket
#     client, best of 3, against (a) the same command read straight from
#     the sandbox's agent socket (agent-only) and (b) websocketd serving it
#     unsandboxed on loopback (the peer; goal gateway/websocketd >= 1);
#  2. chunk latency, command write to WebSocket receipt, p50/p99 with 100
#     streams at once (goal p99 < 2 ms), best of 2, against the same read
#     through the runner's `connect` (the gateway's upstream path, without
#     the gateway) and straight from the agents;
#  3. gateway memory per open idle WebSocket stream (goal < 16 KiB).
# Needs root, bin/sandbox-gateway, bin/sandbox-runner and the default image.
set -u
cd "$(dirname "$0")/.."
GW=bin/sandbox-gateway
RUNNER=bin/sandbox-runner
IMG=${SANDBOX_IMAGE_DIR:-/var/cache/sandbox/images}
if [ "$(id -u)" != 0 ] || [ ! -x $GW ] || [ ! -x $RUNNER ] || [ ! -d "$IMG/default/rootfs" ]; then
	echo "SKIP: streams bench needs root, $GW, $RUNNER and $IMG/default/rootfs"
	exit 0
fi
BYTES=1073741824
NSB=5                # sandboxes: 1000 idle streams at 200 each (agent nofile 1024)
# a short path: sandboxes' agent sockets live under it (sun_path is 108 bytes)
work=$(mktemp -d /tmp/sbx-wsb.XXXXXX)
rpid= gpid= wpid= ipid=
rc=0
load0=$(cut -d' ' -f1 /proc/loadavg)
cleanup() {
	exec 3>&- 2>/dev/null   # ends the idle reader, if it is still holding
	for p in $ipid $wpid $gpid; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	# the runner stops every sandbox it made before it exits
	[ -n "$rpid" ] && kill "$rpid" 2>/dev/null && wait "$rpid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
cc -O2 -Wall -o "$work/ws_reader" bench/ws_reader.c -lcrypto || exit 1
cc -O2 -o "$work/flood_reader" tests/agent/flood_reader.c || exit 1
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
id_of() { grep -o '"id":"[^"]*"' | head -1 | cut -d'"' -f4; }

# ---- the service: a runner of our own name, a gateway on it ----
$RUNNER --name bstreams --socket "$work/r.sock" --state-dir "$work/state" \
	--image-dir "$IMG" >"$work/runner.log" 2>&1 &
rpid=$!
for _ in $(seq 100); do [ -S "$work/r.sock" ] && break; sleep 0.05; done
[ -S "$work/r.sock" ] || { echo "FAIL: runner did not start"; tail -5 "$work/runner.log"; exit 1; }
KEY=bench-$RANDOM$RANDOM
PORT=$(free_port)
SANDBOX_API_KEYS=$KEY $GW --port "$PORT" --runner-socket "$work/r.sock" \
	--max-sandboxes-per-key 50 >"$work/gw.log" 2>&1 &
gpid=$!
U=http://127.0.0.1:$PORT/v1/sandboxes
for _ in $(seq 100); do curl -s -m 1 "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.05; done
api() { curl -s -m 60 -H "Authorization: Bearer $KEY" "$@"; }
# exec a detached command; body: the JSON request; prints its id
run() { api -d "$2" "$U/$1/commands" | id_of; }
# exec N detached commands in one curl (one connection, kept alive: a curl
# start-up costs ~0.1 s on a busy machine); prints their ids
run_n() { # sandbox body n
	local urls=() i
	for i in $(seq "$3"); do urls+=("$U/$1/commands"); done
	api -w '\n' -d "$2" "${urls[@]}" | grep -o '"id":"[^"]*"' | cut -d'"' -f4
}
stream_url() { echo "ws://127.0.0.1:$PORT/v1/sandboxes/$1/commands/$2/stream?access_token=$KEY"; }
# the sandbox's agent socket, from the runner's control API (docs/runner.md)
agent_sock() {
	python3 -c 'import sys; sys.path.insert(0, "tests/runner"); import rnclient
print(rnclient.request(sys.argv[1], {"op": "get", "id": sys.argv[2]})["sandbox"]["agent_socket"])' \
		"$work/r.sock" "$1"
}

sbx=() socks=()
for i in $(seq $NSB); do
	s=$(api -d '{"timeout_ms":900000}' "$U" | id_of)
	[ -n "$s" ] || { echo "FAIL: cannot create a sandbox"; tail -5 "$work/gw.log"; exit 1; }
	sbx+=("$s")
	socks+=("$(agent_sock "$s")")
done

# ---- 3. memory per idle stream (first, on a gateway that has not yet
# grown its heap for other streams: freed memory would be reused) ----
: >"$work/idle.urls"
for i in $(seq 0 $((NSB - 1))); do
	# 4 sleeping commands per sandbox, 50 streams each
	for c in $(run_n "${sbx[$i]}" '{"cmd":"sleep","args":["3600"],"detached":true}' 4); do
		for _ in $(seq 50); do stream_url "${sbx[$i]}" "$c" >>"$work/idle.urls"; done
	done
done
nidle=$(wc -l <"$work/idle.urls")
fds() { ls "/proc/$gpid/fd" | wc -l; }
curl -s -m 5 "http://127.0.0.1:$PORT/healthz" >/dev/null
sleep 0.5
rss0=$(rss_kib $gpid) fd0=$(fds)
mkfifo "$work/hold"
"$work/ws_reader" idle -f "$work/idle.urls" <"$work/hold" >"$work/idle.out" 2>"$work/idle.err" &
ipid=$!
exec 3>"$work/hold"    # the reader holds its streams until this closes
for _ in $(seq 600); do grep -q '^open' "$work/idle.out" && break; kill -0 $ipid 2>/dev/null || break; sleep 0.1; done
# every stream is attached upstream once the gateway holds a client and
# an upstream descriptor for each
for _ in $(seq 100); do [ $(($(fds) - fd0)) -ge $((2 * nidle)) ] && break; sleep 0.1; done
sleep 1
rss1=$(rss_kib $gpid) fd1=$(fds)
exec 3>&-
wait $ipid
ipid=
if ! grep -q '^open' "$work/idle.out"; then
	echo "FAIL: idle streams did not open: $(head -3 "$work/idle.err")"
	rc=1
	mem_line="memory per idle stream: not measured"
else
	mem_line=$(awk -v a="$rss0" -v b="$rss1" -v n="$nidle" -v f=$((fd1 - fd0)) -v r="$(tail -1 "$work/idle.out")" \
		'BEGIN { printf "memory per idle stream: %.1f KiB (goal < 16 KiB; gateway RSS %d -> %d KiB with %d streams open, +%d descriptors; %s)", (b - a) / n, a, b, n, f, r }')
fi

# ---- 1. throughput, best of 3 rounds of each, alternating ----
sb=${sbx[0]} asock=${socks[0]}
WPORT=$(free_port)
if command -v websocketd >/dev/null; then
	websocketd --address=127.0.0.1 --port="$WPORT" --binary=true \
		head -c $BYTES /dev/zero >"$work/wsd.log" 2>&1 &
	wpid=$!
	for _ in $(seq 50); do curl -s -m 1 -o /dev/null "http://127.0.0.1:$WPORT/" && break; sleep 0.1; done
fi
: >"$work/tput"
for round in 1 2 3; do
	c=$(run "$sb" "{\"cmd\":\"sh\",\"args\":[\"-c\",\"read go; head -c $BYTES /dev/zero\"],\"detached\":true}")
	echo "gateway $("$work/ws_reader" tput -send go "$(stream_url "$sb" "$c")" 2>>"$work/tput.err")" >>"$work/tput"
	# flood_reader's bytes include the truncated ones; ws_reader's do not
	echo "agent $("$work/flood_reader" "$asock" - - "head -c $BYTES /dev/zero" | tail -1)" >>"$work/tput"
	[ -n "$wpid" ] && echo "websocketd $("$work/ws_reader" tput -raw "ws://127.0.0.1:$WPORT/" 2>>"$work/tput.err")" >>"$work/tput"
done
python3 - "$work/tput" "$BYTES" <<'PY' || rc=1
import json, sys
best = {}
for line in open(sys.argv[1]):
    who, _, js = line.partition(" ")
    try:
        r = json.loads(js)
    except ValueError:
        continue
    got = r["bytes"] - (r["truncated"] if who == "agent" else 0)
    rate = got / r["secs"] / 2**20
    r["rate"], r["got"] = rate, got
    if who not in best or rate > best[who]["rate"]:
        best[who] = r
g, a, w = best.get("gateway"), best.get("agent"), best.get("websocketd")
if not g:
    print("FAIL: no gateway throughput measured")
f = lambda r: "%.0f MiB/s" % r["rate"] if r else "n/a"
ratio = lambda x, y: "%.2f" % (x["rate"] / y["rate"]) if x and y else "n/a"
print("stream throughput (best of 3): gateway %s, agent-only %s (ratio %s), websocketd %s "
      "(ratio %s, goal >= 1)" % (f(g), f(a), ratio(g, a), f(w), ratio(g, w)))
if not g:
    sys.exit(1)
for who, r in best.items():
    short = int(sys.argv[2]) - r["got"] - r["truncated"]
    print("  %s: %d MiB delivered in %.2f s, %d bytes truncated%s" % (
        who, r["got"] >> 20, r["secs"], r["truncated"],
        ", %d bytes missing" % short if short else ""))
PY
[ -n "$wpid" ] || echo "  (websocketd not installed: mk/deps.sh installs it)"

# ---- 2. chunk latency, 100 streams at once over 4 sandboxes ----
# Each command waits for "go" on stdin (python has started by then), waits
# a random phase within the period so the 100 streams do not all write in
# the same instant, then writes CLOCK_REALTIME in ns as a line every 20 ms
# for 5 s. The host and the sandboxes share CLOCK_REALTIME.
python3 - >"$work/lat.json" <<'PY'
import json
prog = """import os, random, sys, time
sys.stdin.readline()
time.sleep(random.random() * 0.02)
end = time.time() + 5
while time.time() < end:
    os.write(1, b'%d\\n' % time.time_ns())
    time.sleep(0.02)
"""
print(json.dumps({"cmd": "python3", "args": ["-c", prog], "detached": True}))
PY
# the same 100 commands' output read three ways: through the gateway
# (WebSocket), through the runner's `connect` splice (the gateway's own
# upstream path, without the gateway) and straight from the agents
lat_run() { # gateway|runner|agent -> one JSON line
	local k c
	: >"$work/lat.urls"
	for k in 0 1 2 3; do
		for c in $(run_n "${sbx[$k]}" @"$work/lat.json" 25); do
			case $1 in
			gateway) stream_url "${sbx[$k]}" "$c" ;;
			runner) echo "runner:$work/r.sock#${sbx[$k]}#$c" ;;
			agent) echo "agent:${socks[$k]}#$c" ;;
			esac
		done >>"$work/lat.urls"
	done
	[ "$(wc -l <"$work/lat.urls")" = 100 ] || { echo '{"error":"cannot start 100 commands"}'; return; }
	sleep 2   # let the 100 pythons finish starting
	"$work/ws_reader" lat -send go -timeout 30 -f "$work/lat.urls" 2>>"$work/lat.err"
}
# best of 2 rounds each (by p99), alternating, as for throughput
: >"$work/lat"
for round in 1 2; do
	for kind in gateway runner agent; do echo "$kind $(lat_run $kind)" >>"$work/lat"; done
done
python3 - "$work/lat" <<'PY' || rc=1
import json, sys
best = {}
for line in open(sys.argv[1]):
    who, _, js = line.partition(" ")
    try:
        r = json.loads(js)
        r["p99_us"]
    except (ValueError, KeyError):
        continue
    if who not in best or r["p99_us"] < best[who]["p99_us"]:
        best[who] = r
g, n, a = best.get("gateway"), best.get("runner"), best.get("agent")
if not g:
    print("FAIL: latency not measured")
    sys.exit(1)
ms = lambda r, k: r[k] / 1e3
print("chunk latency (100 streams, best of 2): p50 %.2f ms, p99 %.2f ms (goal p99 < 2 ms); "
      "max %.2f ms, %d chunks, %d/%d streams ended" % (ms(g, "p50_us"), ms(g, "p99_us"),
      ms(g, "max_us"), g["samples"], g["done"], g["conns"]))
for name, r in (("runner connect, no gateway", n), ("agent-only", a)):
    if r:
        print("  %s: p50 %.2f ms, p99 %.2f ms, max %.2f ms (%d chunks); gateway p99 / this p99 %.2f" % (
              name, ms(r, "p50_us"), ms(r, "p99_us"), ms(r, "max_us"), r["samples"],
              g["p99_us"] / r["p99_us"] if r["p99_us"] > 0 else 0))
PY
# ws_reader prints every error message a stream got
cat "$work"/*.err 2>/dev/null >"$work/errors"
spurious=$(grep -c '"code":"conflict".*exited' "$work/errors")
[ "$spurious" -gt 0 ] && echo "  note: $spurious streams got an error message {\"code\":\"conflict\",\"message\":\"command ... exited\"} as their command ended (their stdin had been used)"
grep -v '"code":"conflict".*exited' "$work/errors" | head -3
echo "$mem_line"
echo "  (a shared machine: load average $load0 at the start, $(cut -d' ' -f1 /proc/loadavg) at the end, $(nproc) cores)"
exit $rc
