#!/bin/bash
# Cluster benchmark (issue 15), on the one-host cluster of tests/cluster/lib.sh:
# three sandbox-runners, each in its own network namespace behind a bridge,
# reached over mutual TLS; release gateways on loopback.
#  1. creates per second through one gateway with several clients at once
#     (CLIENTS curl processes, CREATES creates in all), over three runners
#     versus over one (the same runner, a gateway that lists only it); best
#     of 3 each, alternating. All three runners share this host's CPUs, so
#     this measures what spreading costs or gains in the gateway and the
#     runners' own serial work (a create blocks its runner's loop for its
#     setup), not what three hosts would give.
#  2. the latency a stream chunk gains through a remote runner (TLS, the
#     runner relaying the agent's bytes) over a local one (UNIX socket, the
#     agent's socket passed to the gateway): 20 commands in one sandbox
#     write CLOCK_REALTIME every 20 ms for 5 s; two bench/ws_reader clients
#     read every command at the same time, one through each gateway, so
#     both see the same chunks under the same load. And what a request
#     gains (a GET of the sandbox: one runner round trip, on a kept-alive
#     control connection for the remote runner, docs/runner.md).
#  3. how soon a lost runner's sandboxes answer 503 (goal from the issue:
#     2 s after a kill -9), and a vanished host's (its link down: nothing
#     answers), with when the gateway marks the runner down.
# Needs root, bin/sandbox-gateway, bin/sandbox-runner (with --listen-tls),
# the default image, ip, nsenter.
. "$(dirname "$0")/../tests/lib/harness.sh"
set -u
GW=bin/sandbox-gateway
CLIENTS=${CLIENTS:-8} CREATES=${CREATES:-48}
why=$(h_services_missing)
[ -z "$why" ] && [ ! -x "$GW" ] && why="$GW not built (make)"
[ -z "$why" ] && ! "$RUNNER" --help 2>&1 | grep -q -- --listen-tls && why="$RUNNER has no --listen-tls"
for tool in ip nsenter cc; do [ -z "$why" ] && ! command -v $tool >/dev/null && why="needs $tool"; done
if [ -n "$why" ]; then
	echo "SKIP: cluster bench: $why"
	exit 0
fi
h_begin sbx-clb
. tests/cluster/lib.sh
suite_cleanup() { cl_teardown; }
trap 'exit 1' INT TERM
die() { echo "FAIL: cluster bench: $*"; for f in "$T"/*.log; do echo "--- $f"; tail -5 "$f"; done; exit 1; }

KEY=bench-$$-$RANDOM
CL_RUNNER_MB=$((CREATES * 128 + 1024))   # one runner takes every create of a round
cl_init || die "no free 10.x.y.0/24"
cl_net_up || die "cannot make the bridge and namespaces"
cl_certs || die "deploy/certs.sh failed"
for i in 1 2 3; do cl_runner_start $i || die "runner ${CL_NAME[i]} did not start"; done
cc -O2 -Wall -o "$T/ws_reader" bench/ws_reader.c -lcrypto || die "ws_reader does not build"

A3=,${CL_ADDR[2]}:$CL_RPORT,${CL_ADDR[3]}:$CL_RPORT
cl_gateway three --runners "${CL_ADDR[1]}:$CL_RPORT$A3" --max-sandboxes-per-key 200 || die "gateway (three runners)"
T3=$CL_PORT
cl_gateway one --runners "${CL_ADDR[1]}:$CL_RPORT" --max-sandboxes-per-key 200 || die "gateway (one runner)"
T1=$CL_PORT
cl_start_gw local "$GW" --runners "unix:$T/r1.sock" --max-sandboxes-per-key 200 || die "gateway (local runner)"
UL=$CL_PORT
# every gateway has identified its runners (a create before would be refused)
for p in $T3 $T1 $UL; do
	for _ in $(seq 100); do
		n=$(curl -s -m 5 -H "Authorization: Bearer $KEY" "http://127.0.0.1:$p/v1/runners" | grep -o '"state":"up"' | wc -l)
		[ "$p" = "$T3" ] && [ "$n" = 3 ] && break
		[ "$p" != "$T3" ] && [ "$n" = 1 ] && break
		sleep 0.1
	done
done

api() { curl -s -m 120 -H "Authorization: Bearer $KEY" "$@"; }
# one round: CREATES creates through the gateway on PORT, CLIENTS at once;
# prints "<seconds> <runner names of the creates...>", then deletes them all
round() { # port
	local p=$1 t0 t1
	t0=$(date +%s.%N)
	seq "$CREATES" | xargs -P "$CLIENTS" -I{} curl -s -m 120 -H "Authorization: Bearer $KEY" \
		-d '{"memory_mb":128,"timeout_ms":600000}' -o "$T/create.{}" "http://127.0.0.1:$p/v1/sandboxes"
	t1=$(date +%s.%N)
	ids=$(cat "$T"/create.* | grep -o '"id":"sbx_[^"]*"' | cut -d'"' -f4)
	echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') $(for i in $ids; do s=${i#sbx_}; echo "${s%_*}"; done | sort | uniq -c | awk '{printf "%s:%s ", $2, $1}')"
	echo "$ids" | xargs -P "$CLIENTS" -I{} curl -s -m 60 -o /dev/null -X DELETE \
		-H "Authorization: Bearer $KEY" "http://127.0.0.1:$p/v1/sandboxes/{}"
	rm -f "$T"/create.*
	[ "$(echo "$ids" | grep -c sbx_)" = "$CREATES" ] || echo "  (only $(echo "$ids" | grep -c sbx_) of $CREATES creates succeeded)" >&2
}
: >"$T/rounds"
for r in 1 2 3; do
	echo "three $(round "$T3")" | tee -a "$T/rounds"
	echo "one $(round "$T1")" | tee -a "$T/rounds"
done
python3 - "$T/rounds" "$CREATES" "$CLIENTS" <<'PY' || exit 1
import sys
best = {}
n = int(sys.argv[2])
for line in open(sys.argv[1]):
    kind, secs = line.split()[:2]
    if float(secs) > 0:
        best[kind] = max(best.get(kind, 0), n / float(secs))
if len(best) != 2:
    print("FAIL: creates not measured"); sys.exit(1)
print("creates/s with %s clients, %d creates, best of 3: three runners %.1f, one runner %.1f"
      % (sys.argv[3], n, best["three"], best["one"]))
print("figure: creates/s, three runners (one host, TLS)|%.1f|1/s|-" % best["three"])
print("figure: creates/s, one runner (TLS)|%.1f|1/s|-" % best["one"])
print("figure: creates/s three runners / one|%.2f|ratio|-" % (best["three"] / best["one"]))
PY

# ---- 2. chunk latency: remote (TLS) runner vs local (UNIX) ----
S=$(api -d '{"timeout_ms":600000}' "http://127.0.0.1:$T1/v1/sandboxes" | grep -o '"id":"[^"]*"' | head -1 | cut -d'"' -f4)
[ -n "$S" ] || die "cannot create the latency sandbox"
api -o /dev/null "http://127.0.0.1:$UL/v1/sandboxes/$S"    # the local gateway adopts it
PROG='import os, random, sys, time
sys.stdin.readline()
time.sleep(random.random() * 0.02)
end = time.time() + 5
while time.time() < end:
    os.write(1, b"%d\n" % time.time_ns())
    time.sleep(0.02)
'
BODY=$(python3 -c 'import json,sys;print(json.dumps({"cmd":"python3","args":["-c",sys.argv[1]],"detached":True}))' "$PROG")
: >"$T/remote.urls"; : >"$T/local.urls"
for _ in $(seq 20); do
	c=$(api -d "$BODY" "http://127.0.0.1:$T1/v1/sandboxes/$S/commands" | grep -o '"id":"[^"]*"' | head -1 | cut -d'"' -f4)
	[ -n "$c" ] || die "cannot start a latency command"
	echo "ws://127.0.0.1:$T1/v1/sandboxes/$S/commands/$c/stream?access_token=$KEY" >>"$T/remote.urls"
	echo "ws://127.0.0.1:$UL/v1/sandboxes/$S/commands/$c/stream?access_token=$KEY" >>"$T/local.urls"
done
sleep 2   # the pythons have started
# the remote reader opens first and sends nothing; the local one sends
# "go" once all its streams are open: both read every chunk as it comes
"$T/ws_reader" lat -timeout 30 -f "$T/remote.urls" >"$T/remote.json" 2>"$T/remote.err" &
rr=$!
sleep 1
"$T/ws_reader" lat -send go -timeout 30 -f "$T/local.urls" >"$T/local.json" 2>"$T/local.err"
wait $rr
python3 - "$T/local.json" "$T/remote.json" <<'PY' || exit 1
import json, sys
try:
    loc, rem = (json.load(open(p)) for p in sys.argv[1:3])
    loc["p50_us"], rem["p50_us"]
except (ValueError, KeyError) as e:
    print("FAIL: latency not measured (%s)" % e); sys.exit(1)
print("chunk latency, 20 streams: local (UNIX) p50 %.2f ms p99 %.2f ms (%d chunks); "
      "remote (TLS) p50 %.2f ms p99 %.2f ms (%d chunks)" % (
      loc["p50_us"] / 1e3, loc["p99_us"] / 1e3, loc["samples"],
      rem["p50_us"] / 1e3, rem["p99_us"] / 1e3, rem["samples"]))
print("figure: stream chunk latency p50, local runner (UNIX)|%.2f|ms|-" % (loc["p50_us"] / 1e3))
print("figure: stream chunk latency p50, remote runner (TLS)|%.2f|ms|-" % (rem["p50_us"] / 1e3))
print("figure: added latency per chunk, remote over local, p50|%.2f|ms|-" % ((rem["p50_us"] - loc["p50_us"]) / 1e3))
print("figure: added latency per chunk, remote over local, p99|%.2f|ms|-" % ((rem["p99_us"] - loc["p99_us"]) / 1e3))
PY

# a request's cost: GET of the sandbox (one runner round trip: a new UNIX
# connection each time for the local runner, a kept-alive TLS one for the
# remote one), 300 in a
# row on one kept-alive client connection to each gateway, alternating
python3 - "$UL" "$T1" "$S" "$KEY" <<'PY' || exit 1
import http.client, sys, time
ul, t1, sid, key = sys.argv[1:5]
conns = {k: http.client.HTTPConnection("127.0.0.1", int(p), timeout=30) for k, p in (("local", ul), ("remote", t1))}
lat = {"local": [], "remote": []}
for i in range(300):
    for k, c in conns.items():
        t = time.perf_counter()
        c.request("GET", "/v1/sandboxes/" + sid, headers={"Authorization": "Bearer " + key})
        r = c.getresponse(); r.read()
        if r.status != 200:
            print("FAIL: GET through the %s gateway: %d" % (k, r.status)); sys.exit(1)
        lat[k].append((time.perf_counter() - t) * 1e3)
p50 = {k: sorted(v)[len(v) // 2] for k, v in lat.items()}
print("GET of a sandbox, p50 of 300: local runner (UNIX) %.2f ms, remote runner (TLS) %.2f ms" % (p50["local"], p50["remote"]))
print("figure: request p50 (GET sandbox), local runner (UNIX)|%.2f|ms|-" % p50["local"])
print("figure: request p50 (GET sandbox), remote runner (TLS)|%.2f|ms|-" % p50["remote"])
print("figure: added latency per request, remote over local, p50|%.2f|ms|< 0.5" % (p50["remote"] - p50["local"]))
PY

# ---- 3. how soon a lost runner's sandboxes answer 503 ----
# kill -9 (the host is there: its kernel resets the connections) and a
# host that vanishes (its link down: nothing answers at all, the status
# probe decides: no reply in 1.5 s, twice running). Through the gateway of
# three runners.
on_c() { # a sandbox on the third runner, made through the three-runner gateway
	local id s
	for _ in 1 2 3 4 5 6; do
		id=$(api -d '{"memory_mb":128,"timeout_ms":600000}' "http://127.0.0.1:$T3/v1/sandboxes" | grep -o '"id":"[^"]*"' | head -1 | cut -d'"' -f4)
		s=${id#sbx_}
		[ "${s%_*}" = "${CL_NAME[3]}" ] && { echo "$id"; return; }
	done
}
# ms until /v1/runners says the third runner is down (written to FILE)
until_down() { # t0_ms file
	for _ in $(seq 1000); do
		if api "http://127.0.0.1:$T3/v1/runners" | python3 -c '
import json, sys
sys.exit(0 if any(r.get("name") == sys.argv[1] and r.get("state") == "down" for r in json.load(sys.stdin)["runners"]) else 1)' "${CL_NAME[3]}"; then
			echo $(($(date +%s%3N) - $1)) >"$2"
			return
		fi
		sleep 0.02
	done
	echo never >"$2"
}
# ms until a GET of the sandbox answers 503 (each GET waits for its answer:
# a GET that hangs counts), and, watched at the same time, until the
# gateway marks the runner down
until_503() { # id t0_ms
	local c t503=never dp
	until_down "$2" "$T/down" &
	dp=$!
	for _ in $(seq 1000); do
		c=$(curl -s -m 30 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $KEY" "http://127.0.0.1:$T3/v1/sandboxes/$1")
		[ "$c" = 503 ] && { t503=$(($(date +%s%3N) - $2)); break; }
		sleep 0.02
	done
	wait $dp
	echo "$t503 $(cat "$T/down")"
}
S3=$(on_c)
[ -n "$S3" ] || die "no sandbox landed on ${CL_NAME[3]}"
t0=$(date +%s%3N); cl_runner_kill9 3
read -r k503 kdown <<<"$(until_503 "$S3" "$t0")"
cl_runner_start 3 || die "runner ${CL_NAME[3]} did not start again"
for _ in $(seq 100); do
	api "http://127.0.0.1:$T3/v1/runners" | grep -q "\"name\":\"${CL_NAME[3]}\",[^}]*\"state\":\"up\"" && break
	sleep 0.1
done
S3=$(on_c)
[ -n "$S3" ] || die "no sandbox landed on ${CL_NAME[3]} after its restart"
t0=$(date +%s%3N); ip -n "${CL_NS[3]}" link set "${CL_TAG}p3" down
read -r v503 vdown <<<"$(until_503 "$S3" "$t0")"
ip -n "${CL_NS[3]}" link set "${CL_TAG}p3" up
echo "runner killed (-9): 503 after $k503 ms, marked down after $kdown ms; host vanished (link down): 503 after $v503 ms, down after $vdown ms"
echo "figure: 503 after a runner's kill -9|$k503|ms|< 2000"
echo "figure: 503 after a runner's host vanished (no answer at all)|$v503|ms|-"
echo "figure: runner marked down after its host vanished|$vdown|ms|< 2500"
