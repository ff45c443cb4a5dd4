#!/bin/bash
# Preview proxy benchmark: wrk against one small node:http server running in
# a sandbox, three ways in one run:
#   direct  wrk -> server
#   nginx   wrk -> nginx (reverse proxy, upstream keepalive) -> server
#   gateway wrk -> sandbox-gateway preview proxy -> server
# Where nginx runs: inside the sandbox's network namespace (nsenter -n; the
# sandbox is deny-all, so nothing on the host can reach its port otherwise),
# and the direct and nginx runs of wrk too. So all three hit the very same
# server process, and nginx gets the shortest path it could have. The
# gateway reaches the guest's port straight too: a local runner passes
# it the guest's TCP socket once per client connection (the runner's
# `connect`, made inside the sandbox's network), which the gateway then
# reuses for every request on that connection; the cost of that one
# connect is in the gateway's figures.
# Prints requests/s and p99 latency for each (medians of the rounds) and
# the ratios; the added p99 over direct is the median of each round's own
# difference (the three run in turn in every round), with its spread.
set -u
cd "$(dirname "$0")/.."
IMG=${SANDBOX_IMAGE_DIR:-/var/cache/sandbox/images}
DUR=${BENCH_SECONDS:-4} CONN=${BENCH_CONNECTIONS:-32} ROUNDS=${BENCH_ROUNDS:-5}
if [ "$(id -u)" != 0 ] || [ ! -x bin/sandbox-gateway ] || [ ! -d "$IMG/default/rootfs" ] ||
   ! command -v wrk >/dev/null || ! command -v nginx >/dev/null; then
	echo "SKIP: proxy bench needs root, bin/sandbox-gateway, $IMG/default/rootfs, wrk and nginx"
	exit 0
fi
T=$(mktemp -d /tmp/proxy-bench.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
KEY=bench-key A="Authorization: Bearer $KEY"

bin/sandbox-runner --name "pb$$" --socket "$T/r.sock" --state-dir "$T/state" --image-dir "$IMG" >"$T/runner.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$T/r.sock" ] && break; sleep 0.05; done
P=$((20000 + RANDOM % 20000))
SANDBOX_API_KEYS=$KEY bin/sandbox-gateway --port $P --runner-socket "$T/r.sock" >"$T/gw.log" 2>&1 &
pids+=($!) GWPID=$!
for _ in $(seq 100); do curl -s -m 1 -o /dev/null http://127.0.0.1:$P/healthz && break; sleep 0.05; done
API=http://127.0.0.1:$P/v1/sandboxes
ID=$(curl -s -m 20 -H "$A" -d '{"ports":[3000],"vcpus":1}' $API | python3 -c 'import json,sys;print(json.load(sys.stdin)["id"])')
[ -n "$ID" ] || { echo "FAIL: cannot create a sandbox"; exit 1; }
cat >"$T/hello.js" <<'EOF'
require('node:http').createServer((req, res) => {
  res.setHeader('content-type', 'text/plain');
  res.end('hello from the sandbox\n');
}).listen(3000, '127.0.0.1');
EOF
curl -s -m 10 -H "$A" --data-binary @"$T/hello.js" -X PUT "$API/$ID/files?path=hello.js" >/dev/null
curl -s -m 10 -H "$A" -d '{"cmd":"node","args":["hello.js"],"detached":true}' "$API/$ID/commands" >/dev/null
H=3000-$ID.localhost
for _ in $(seq 100); do
	[ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' -H "Host: $H" http://127.0.0.1:$P/)" = 200 ] && break
	sleep 0.1
done
PID=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["pid"])' "$T/state/sandboxes/$ID/state.json")
NS="nsenter -t $PID -n"

mkdir -p "$T/nginx"
cat >"$T/nginx/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $T/nginx/nginx.pid;
error_log $T/nginx/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $T/nginx/body;
  proxy_temp_path $T/nginx/proxy;
  fastcgi_temp_path $T/nginx/fastcgi;
  uwsgi_temp_path $T/nginx/uwsgi;
  scgi_temp_path $T/nginx/scgi;
  upstream app { server 127.0.0.1:3000; keepalive 64; }
  server {
    listen 127.0.0.1:3080;
    location / {
      proxy_pass http://app;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$host;
      proxy_set_header X-Forwarded-For \$remote_addr;
      proxy_set_header X-Forwarded-Proto \$scheme;
      proxy_buffering off;
    }
  }
}
EOF
$NS nginx -c "$T/nginx/nginx.conf" &
pids+=($!) NGPID=$!
for _ in $(seq 50); do $NS curl -s -m 1 -o /dev/null http://127.0.0.1:3080/ && break; sleep 0.1; done

# CPU time (ns) of a process, its threads and its children's (nginx's
# worker): requests/s swings with the machine's other work, CPU per
# request much less (still some: a busy machine batches more per wakeup)
cpu_ns() {
	local s=0 p t a
	for p in $1 $(pgrep -P "$1"); do
		for t in /proc/$p/task/*/schedstat; do read -r a _ <"$t" && s=$((s + a)); done
	done
	echo $s
}
run() { # name wrk-prefix url [header]: appends "rps p99ms cpu-us-a-request" to $T/res.<name>
	local out rps p99 pid c0 n us=0
	case $1 in nginx) pid=$NGPID ;; gateway) pid=$GWPID ;; *) pid= ;; esac
	[ -n "$pid" ] && c0=$(cpu_ns $pid)
	out=$($2 wrk -t1 -c"$C" -d"${DUR}s" --latency ${4:+-H "$4"} "$3" 2>&1)
	n=$(echo "$out" | awk '/requests in/{print $1}')
	[ -n "$pid" ] && [ "${n:-0}" -gt 0 ] && us=$(( ($(cpu_ns $pid) - c0) / n / 1000 ))
	rps=$(echo "$out" | awk '/^Requests\/sec/{print $2}')
	p99=$(echo "$out" | awk '$1=="99%"{v=$2; if (v ~ /us$/) {sub(/us/,"",v); v/=1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v*=1000}; print v}')
	echo "$out" | grep -E 'Non-2xx|Socket errors' | sed "s/^/  $1: /"
	echo "$rps $p99 $us" >>"$T/res.$1"
}
# The machine is shared: the three run in turn, ROUNDS times, and the
# medians are compared (a burst of other work then hits all three alike).
report() { # connections: medians of the rounds and the ratios
	python3 - "$T" "$1" <<'EOF'
import statistics, sys
med = {}
for n in ("direct", "nginx", "gateway"):
    rows = [tuple(map(float, l.split())) for l in open(f"{sys.argv[1]}/res.{n}") if len(l.split()) == 3]
    med[n] = (statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows))
    print(f"{n:8} {med[n][0]:10.0f} req/s  p99 {med[n][1]:7.2f} ms   (rounds: " +
          ", ".join(f"{r[0]:.0f}/{r[1]:.2f}" for r in rows) + ")")
(rd, pd), (rn, pn), (rg, pg) = med["direct"], med["nginx"], med["gateway"]
print(f"gateway/nginx requests/s: {rg / rn:.2f}   gateway/direct: {rg / rd:.2f}   nginx/direct: {rn / rd:.2f}")
# CPU per request of the proxy itself (its threads, nginx's worker too)
cpu = {n: statistics.median(float(l.split()[2]) for l in open(f"{sys.argv[1]}/res.{n}") if len(l.split()) == 3)
       for n in ("nginx", "gateway")}
print(f"CPU a request, median of the rounds: gateway {cpu['gateway']:.0f} us, nginx {cpu['nginx']:.0f} us")
# added p99: the three ran in turn in each round, so each round's
# difference compares like with like; the median of those, with their
# spread (a round where the baseline had an outlier shows as one low end,
# not as the figure)
rows = {n: [tuple(map(float, l.split())) for l in open(f"{sys.argv[1]}/res.{n}") if len(l.split()) == 3]
        for n in ("direct", "nginx", "gateway")}
def added(n):
    d = sorted(x[1] - y[1] for x, y in zip(rows[n], rows["direct"]))
    return statistics.median(d), d[0], d[-1]
(pg_add, pg_lo, pg_hi), (pn_add, pn_lo, pn_hi) = added("gateway"), added("nginx")
print(f"added p99 over direct, median of {len(rows['direct'])} interleaved rounds [spread]: "
      f"gateway {pg_add:+.2f} ms [{pg_lo:+.2f} .. {pg_hi:+.2f}], nginx {pn_add:+.2f} ms [{pn_lo:+.2f} .. {pn_hi:+.2f}]"
      + ("   (the spread crosses 0: within this machine's noise)" if pg_lo < 0 < pg_hi else ""))
pg, pd, pn = pg_add, 0.0, pn_add
c = sys.argv[2]
print(f"figure: preview proxy requests/s ({c} conns)|{rg:.0f}|req/s|-")
print(f"figure: preview proxy / nginx requests/s ({c} conns)|{rg / rn:.2f}|ratio|>= 1.2")
# a proxy cannot serve faster than the server behind it: direct / nginx is
# the most any proxy could reach against nginx in this run
print(f"figure: preview proxy / direct requests/s ({c} conns)|{rg / rd:.2f}|ratio|-")
print(f"figure: ceiling for proxy / nginx here, direct / nginx ({c} conns)|{rd / rn:.2f}|ratio|-")
if rd / rn < 1.2:
    print(f"  (a proxy that cost nothing would reach {rd / rn:.2f}x nginx here: the server in "
          f"the sandbox, not a proxy, bounds these rounds)")
print(f"figure: preview proxy added p99 over direct ({c} conns, rounds)|{pg - pd:.2f}|ms|-")
print(f"figure: nginx added p99 over direct ({c} conns)|{pn - pd:.2f}|ms|-")
print(f"figure: preview proxy CPU a request ({c} conns)|{cpu['gateway']:.0f}|us|-")
print(f"figure: nginx CPU a request ({c} conns)|{cpu['nginx']:.0f}|us|-")
EOF
}
# Two loads: CONN connections (throughput; every process competes for the
# two CPUs, so p99 there is mostly queueing) and 1 connection (the latency a
# request pays for the hop itself).
for C in "$CONN" 1; do
	rm -f "$T"/res.*
	echo "wrk -t1 -c$C -d${DUR}s x $ROUNDS rounds, one node:http server in a sandbox, 2 vCPUs shared by everything"
	for _ in $(seq "$ROUNDS"); do
		run direct "$NS" http://127.0.0.1:3000/
		run nginx "$NS" http://127.0.0.1:3080/
		run gateway "" http://127.0.0.1:$P/ "Host: $H"
	done
	report "$C"
done
# the added latency itself: requests in turn on one connection each
python3 bench/interleave.py "$PID" "$P" "$H" "${BENCH_REQUESTS:-3000}"
curl -s -m 10 -H "$A" -X DELETE $API/$ID >/dev/null

