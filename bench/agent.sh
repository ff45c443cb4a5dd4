#!/bin/bash
# sandbox-agent benchmark (release build):
#  1. throughput of `head -c 2G /dev/zero` through the agent to one client,
#     as a ratio to a plain pipe read of the same data in the same run
#     (goal >= 0.5);
#  2. chunk latency from a command's write() to the client's receipt,
#     p50/p99 over 2000 small writes 1 ms apart (goal p99 < 1 ms idle).
set -u
cd "$(dirname "$0")/.."
agent=bin/sandbox-agent
[ -x "$agent" ] || { echo "bin/sandbox-agent not built"; exit 1; }
work=$(mktemp -d /tmp/sbx-agent-bench.XXXXXX)
apid=
cleanup() {
	[ -n "$apid" ] && kill "$apid" 2>/dev/null && wait "$apid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
cc -O2 -o "$work/reader" tests/agent/flood_reader.c || exit 1
bytes=${AGENT_BENCH_BYTES:-2147483648}

"$agent" --listen "unix:$work/a.sock" --log-level warn 2>"$work/agent.log" &
apid=$!
for _ in $(seq 100); do [ -S "$work/a.sock" ] && break; sleep 0.05; done

# Best of 3 alternating runs each, to damp a busy machine's noise.
# baseline: the same producer, read straight from a pipe in 64 KiB reads
best_base=0 best_res=
for round in 1 2 3; do
	t0=$(date +%s%N)
	head -c "$bytes" /dev/zero | dd of=/dev/null bs=64K iflag=fullblock status=none
	t1=$(date +%s%N)
	us=$(( (t1 - t0) / 1000 ))
	if [ "$best_base" = 0 ] || [ "$us" -lt "$best_base" ]; then best_base=$us; fi

	"$work/reader" "$work/a.sock" - - "head -c $bytes /dev/zero" >"$work/res" &
	rpid=$!
	while kill -0 "$rpid" 2>/dev/null; do
		rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$apid/status" 2>/dev/null || echo 0)
		[ "${rss:-0}" -gt "${peak:-0}" ] && peak=$rss
		sleep 0.1
	done
	wait "$rpid"
	best_res=$(python3 - "$best_res" "$(tail -1 "$work/res")" <<'PY'
import json, sys
a = json.loads(sys.argv[1]) if sys.argv[1] else None
b = json.loads(sys.argv[2])
rate = lambda r: (r["bytes"] - r["truncated"]) / r["secs"]
print(json.dumps(b if a is None or rate(b) > rate(a) else a))
PY
)
done
echo "agent peak RSS during the floods: $((${peak:-0} / 1024)) MiB (retention 16 MiB)"
echo "figure: agent peak RSS during floods|$((${peak:-0} / 1024))|MiB|-"
python3 - "$bytes" "$best_base" "$best_res" <<'PY'
import json, sys
total, base, r = int(sys.argv[1]), int(sys.argv[2]) / 1e6, json.loads(sys.argv[3])
got = r["bytes"] - r["truncated"]
pipe = total / base / 2**20
agent = got / r["secs"] / 2**20
print("throughput (best of 3): plain pipe %.0f MiB/s, through agent %.0f MiB/s (%d MiB "
      "delivered, %d MiB dropped for lag), ratio %.2f (goal >= 0.5)" %
      (pipe, agent, got >> 20, r["truncated"] >> 20, agent / pipe))
print("figure: agent throughput|%.0f|MiB/s|-" % agent)
print("figure: agent throughput / plain pipe|%.2f|ratio|>= 0.5" % (agent / pipe))
PY

python3 - "$work/a.sock" <<'PY'
import os, struct, sys, time
sys.path.insert(0, "tests/agent")
import agentc
prog = ("import os,struct,time\n"
        "for i in range(2000):\n"
        "    os.write(1, struct.pack('<Q', time.monotonic_ns()))\n"
        "    time.sleep(0.001)\n")
c = agentc.Conn(sys.argv[1])
c.req({"op": "exec", "cmd": "python3", "args": ["-c", prog], "attach": True})
assert c.json()["ok"]
lat = []
while True:
    f = c.frame()
    if f is None:
        break
    now = time.monotonic_ns()
    if f[0] == agentc.STDOUT:
        for i in range(0, len(f[1]) - 7, 8):
            lat.append((now - struct.unpack_from("<Q", f[1], i)[0]) / 1000.0)
lat.sort()
p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]
print("chunk latency (write -> client receipt, %d chunks): p50 %.0f us, p99 %.0f us, "
      "max %.0f us (goal p99 < 1000 us)" % (len(lat), p(0.5), p(0.99), lat[-1]))
print("figure: agent chunk latency p50|%.0f|us|-" % p(0.5))
print("figure: agent chunk latency p99|%.0f|us|< 1000" % p(0.99))
PY
