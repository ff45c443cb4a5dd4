#!/bin/bash
# /healthz while a flood of connections hits one public preview (issue 26):
# FLOOD (8000) connections, at most BATCH (1000) not yet answered at a
# time, each sending one request to a sandbox's preview and held open,
# while /healthz is asked on a fresh connection every 50 ms. Prints what
# the flood got, /healthz's p50/p99/worst wait and how many went
# unanswered, ROUNDS (2) times; the figure is the p99 over every round.
# The flood and the sampler are Python processes of their own on the same
# CPUs; each round prints the machine's load and the share of a CPU the
# gateway used, without which its waits mean little on a shared machine.
set -u
cd "$(dirname "$0")/.."
IMG=${SANDBOX_IMAGE_DIR:-/var/cache/sandbox/images}
BIN=${BENCH_BIN:-bin}
FLOOD=${FLOOD:-8000} BATCH=${BATCH:-1000} ROUNDS=${BENCH_ROUNDS:-2}
if [ "$(id -u)" != 0 ] || [ ! -x "$BIN/sandbox-gateway" ] || [ ! -d "$IMG/default/rootfs" ]; then
	echo "SKIP: flood bench needs root, $BIN/sandbox-gateway and $IMG/default/rootfs"
	exit 0
fi
T=$(mktemp -d /tmp/flood-bench.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
KEY=bench-key A="Authorization: Bearer $KEY"
ulimit -n "$(ulimit -Hn)"
"$BIN/sandbox-runner" --name "fb$$" --socket "$T/r.sock" --state-dir "$T/state" --image-dir "$IMG" >"$T/runner.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$T/r.sock" ] && break; sleep 0.05; done
P=$((20000 + RANDOM % 20000))
SANDBOX_API_KEYS=$KEY "$BIN/sandbox-gateway" --port $P --runner-socket "$T/r.sock" >"$T/gw.log" 2>&1 &
pids+=($!) GWPID=$!
for _ in $(seq 100); do curl -s -m 1 -o /dev/null http://127.0.0.1:$P/healthz && break; sleep 0.05; done
API=http://127.0.0.1:$P/v1/sandboxes
ID=$(curl -s -m 20 -H "$A" -d '{"ports":[3000],"timeout_ms":900000}' $API | python3 -c 'import json,sys;print(json.load(sys.stdin)["id"])')
[ -n "$ID" ] || { echo "FAIL: cannot create a sandbox"; exit 1; }
curl -s -m 10 -H "$A" -d '{"cmd":"sh","args":["-c","mkdir -p /tmp/w && echo hi >/tmp/w/index.html && cd /tmp/w && exec python3 -m http.server 3000"],"detached":true}' "$API/$ID/commands" >/dev/null
H=3000-$ID.localhost
# the peer: nginx answering a static /healthz on a port nobody floods,
# asked beside the gateway by the same sampler, so what this machine's
# scheduler costs any process at this load shows apart from the flood
CP=$((P + 1))
if command -v nginx >/dev/null; then
	mkdir -p "$T/nginx"
	cat >"$T/nginx/nginx.conf" <<NG
worker_processes 1;
daemon off;
pid $T/nginx/nginx.pid;
error_log $T/nginx/error.log;
events { worker_connections 1024; }
http { access_log off; server { listen 127.0.0.1:$CP; location / { return 200 "ok\n"; } } }
NG
	nginx -c "$T/nginx/nginx.conf" &
	pids+=($!)
	for _ in $(seq 50); do curl -s -m 1 -o /dev/null http://127.0.0.1:$CP/healthz && break; sleep 0.1; done
fi
for _ in $(seq 200); do
	[ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' -H "Host: $H" http://127.0.0.1:$P/)" = 200 ] && break
	sleep 0.1
done
python3 - "$P" "$H" "$FLOOD" "$BATCH" "$ROUNDS" "$GWPID" "$CP" <<'EOF'
import multiprocessing as mp, os, sys, time
sys.path.insert(0, "tests/security")
import flood as fl

def sample(ports, stop, out):
    """/healthz asked from a process of its own: in the flood's process
    its thread would wait for the flood's loop to let go of the
    interpreter, and that wait would count as the gateway's"""
    hs = [fl.HealthSampler(p, every=0.05, timeout=10.0) for p in ports]
    for h in hs:
        h.start()
    stop.wait()
    for h in hs:
        h.stop.set()
        h.join()
    out.put([(h.lat, h.misses) for h in hs])
port, host, n, batch, rounds = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
allv, misses, peerv = [], 0, []
cp = int(sys.argv[7])
try:
    peer = fl.HealthSampler(cp).one() and [cp]
except OSError:
    peer = []   # no nginx: no peer
def cpu():   # the gateway's user + system CPU seconds so far
    with open("/proc/%s/stat" % sys.argv[6]) as f:
        v = f.read().rsplit(")", 1)[1].split()
    return (int(v[11]) + int(v[12])) / os.sysconf("SC_CLK_TCK")
for r in range(rounds):
    load = os.getloadavg()[0]
    c0, t0 = cpu(), time.time()
    stop, out = mp.Event(), mp.Queue()
    sp = mp.Process(target=sample, args=([port] + peer, stop, out))
    sp.start()
    st = fl.flood(port, host, n, seconds=60, batch=batch)
    stop.set()
    got = out.get()
    lat, missed = got[0]
    pl = sorted(got[1][0]) if peer else []
    peerv += pl
    sp.join()
    busy = (cpu() - c0) / (time.time() - t0)
    v = sorted(lat)
    allv += lat
    misses += missed
    q = lambda p: v[min(len(v) - 1, int(len(v) * p))] * 1e3 if v else float("nan")
    print("round %d (load %.2f, the gateway on %.0f%% of a CPU): flood %d: %s answered, %d unanswered, %d failed connects; "
          "/healthz %d asked, p50 %.1f ms, p99 %.1f ms, worst %.1f ms, %d unanswered" % (
              r + 1, load, busy * 100, st["opened"], dict(sorted(st["statuses"].items())),
              st["pending"] + st["closed_no_answer"], st["connect_failed"],
              len(v) + missed, q(0.5), q(0.99), q(1.0) if v else float("nan"), missed))
    if pl:
        print("  peer (nginx, not flooded, same sampler): p50 %.1f ms, p99 %.1f ms, worst %.1f ms" % (
            pl[len(pl) // 2] * 1e3, pl[min(len(pl) - 1, int(len(pl) * 0.99))] * 1e3, pl[-1] * 1e3))
v = sorted(allv)
p99 = v[min(len(v) - 1, int(len(v) * 0.99))] * 1e3 if v else float("nan")
print("figure: /healthz p99 during a %d-connection preview flood|%.1f|ms|< 50" % (n, p99))
print("figure: /healthz worst wait during the floods|%.1f|ms|-" % (v[-1] * 1e3 if v else float("nan")))
if peerv:
    pv = sorted(peerv)
    pp = pv[min(len(pv) - 1, int(len(pv) * 0.99))] * 1e3
    print("figure: idle nginx's p99 beside it (the machine's own wait)|%.1f|ms|-" % pp)
    print("figure: /healthz p99 over the idle nginx's, during the floods|%.1f|ms|-" % (p99 - pp))
print("figure: /healthz unanswered during the floods|%d|count|< 1" % misses)
EOF
curl -s -m 10 -H "$A" -X DELETE $API/$ID >/dev/null
