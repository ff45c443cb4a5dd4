#!/bin/bash
# Egress proxy benchmark (docs/runner.md "Network policies", "Credential
# brokering"): one sandbox, one server (nginx, HTTP and HTTPS, in a network
# namespace this script makes on 198.18.0.0/24 (RFC 2544's benchmarking
# range; BENCH_NET=A.B.C for another /24), never the real internet),
# three policies applied in turn by PATCH in the same run:
#   allow-all   the sandbox's TCP goes out directly (NAT), no proxy
#   spliced     {"allow":["bench.test"]}: the runner's egress proxy reads
#               the SNI/Host and splices
#   decrypted   {"allow":{"bench.test":[transform]}}: the proxy ends TLS
#               with its CA, injects a header and re-encrypts
# Per policy: the time of a new connection with one small GET (N of them
# one after another, pooled over the rounds, which take turns; p50/p99;
# the latency added is the difference with allow-all's pool, printed with
# the spread of the per-round differences, so a difference inside the
# noise shows as one: a p99 spread across zero is the machine's tail, not
# the proxy's) and the throughput of one GET of a large file, HTTP
# and HTTPS (medians of the rounds), with the runner's CPU time per MB of
# that GET (which scheduling on a busy machine does not move, unlike the
# throughput). Prints the ratios and the machine's load. The GET is 256 MiB,
# five rounds: with 64 MiB (some 50 ms at these rates) and three rounds the
# ratios swung from 0.66x to 1.58x between two quiet runs.
set -u
cd "$(dirname "$0")/.."
IMG=${SANDBOX_IMAGE_DIR:-/var/cache/sandbox/images}
N=${BENCH_CONNS:-300} MB=${BENCH_MB:-256} ROUNDS=${BENCH_ROUNDS:-5} BN=${BENCH_NET:-198.18.0}
if [ "$(id -u)" != 0 ] || [ ! -x bin/sandbox-gateway ] || [ ! -d "$IMG/default/rootfs" ] ||
   ! command -v nginx >/dev/null || ! command -v ip >/dev/null; then
	echo "SKIP: egress bench needs root, bin/, $IMG/default/rootfs, nginx and ip"
	exit 0
fi
T=$(mktemp -d /tmp/egress-bench.XXXXXX)
chmod 755 "$T"
NS=sbxeb$$
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	[ -f "$T/nginx.pid" ] && kill "$(cat "$T/nginx.pid" 2>/dev/null)" 2>/dev/null
	wait 2>/dev/null
	ip netns del $NS 2>/dev/null
	ip link del ${NS}0 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

# the server's CA and certificate
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=egress-bench-ca \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
	-addext subjectKeyIdentifier=hash -keyout "$T/ca.key" -out "$T/ca.pem" >/dev/null 2>&1 &&
openssl req -newkey rsa:2048 -nodes -subj /CN=bench.test -keyout "$T/srv.key" -out "$T/srv.csr" >/dev/null 2>&1 &&
printf 'subjectAltName=DNS:bench.test\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid,issuer\n' >"$T/san" &&
openssl x509 -req -in "$T/srv.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial -days 1 \
	-extfile "$T/san" -out "$T/srv.pem" >/dev/null 2>&1 || { echo "FAIL: test CA"; exit 1; }

# the server: nginx on $BN.1 in a namespace behind a veth, and a
# DNS answer for bench.test
ip netns add $NS && ip link add ${NS}0 type veth peer name inet0 netns $NS &&
ip addr add $BN.254/24 dev ${NS}0 && ip link set ${NS}0 up &&
ip -n $NS link set lo up && ip -n $NS link set inet0 up &&
ip -n $NS addr add $BN.1/24 dev inet0 && ip -n $NS route add default via $BN.254 ||
	{ echo "FAIL: network namespace"; exit 1; }
mkdir -p "$T/www"
head -c $((MB * 1048576)) /dev/zero >"$T/www/big"
echo ok >"$T/www/small"
cat >"$T/nginx.conf" <<NGX
worker_processes 1;
daemon off;
pid $T/nginx.pid;
error_log $T/nginx.err;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  server {
    listen $BN.1:80;
    listen $BN.1:443 ssl;
    ssl_certificate $T/srv.pem;
    ssl_certificate_key $T/srv.key;
    root $T/www;
  }
}
NGX
ip netns exec $NS nginx -c "$T/nginx.conf" -e "$T/nginx.err" &
pids+=($!)
cat >"$T/dns.py" <<'PY'
import socket
import sys
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind((sys.argv[1], 53))
while True:
    q, a = u.recvfrom(512)
    i = 12
    while q[i]:
        i += 1 + q[i]
    end, qtype = i + 5, q[i + 1] << 8 | q[i + 2]
    ok = q[12:i + 1] == b"\x05bench\x04test\x00" and qtype == 1
    r = q[:2] + (b"\x81\x80\0\1\0\1\0\0\0\0" if ok else b"\x81\x80\0\1\0\0\0\0\0\0") + q[12:end]
    if ok:
        r += b"\xc0\x0c\0\1\0\1\0\0\0\x3c\0\4" + socket.inet_aton(sys.argv[1])
    u.sendto(r, a)
PY
ip netns exec $NS python3 "$T/dns.py" $BN.1 &
pids+=($!)

SANDBOX_DNS_UPSTREAM=$BN.1 SANDBOX_EGRESS_TRUST_FILE="$T/ca.pem" \
	bin/sandbox-runner --name "eb$$" --socket "$T/r.sock" --state-dir "$T/state" --image-dir "$IMG" \
	>"$T/runner.log" 2>&1 &
pids+=($!)
RPID=$!
for _ in $(seq 100); do [ -S "$T/r.sock" ] && break; sleep 0.1; done
KEY=bench-key A="Authorization: Bearer $KEY"
P=$((20000 + RANDOM % 20000))
SANDBOX_API_KEYS=$KEY bin/sandbox-gateway --port $P --runner-socket "$T/r.sock" >"$T/gw.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -s -m 1 -o /dev/null http://127.0.0.1:$P/healthz && break; sleep 0.1; done
API=http://127.0.0.1:$P/v1/sandboxes
ID=$(curl -s -m 60 -H "$A" -d '{"network":"allow-all","vcpus":1}' $API |
	python3 -c 'import json,sys;print(json.load(sys.stdin)["id"])' 2>/dev/null)
[ -n "$ID" ] || { echo "FAIL: cannot create a sandbox"; tail -5 "$T/runner.log"; exit 1; }
curl -s -m 10 -H "$A" --data-binary @bench/egress_cl.py -X PUT "$API/$ID/files?path=/tmp/ecl.py" >/dev/null
curl -s -m 10 -H "$A" --data-binary @"$T/ca.pem" -X PUT "$API/$ID/files?path=/tmp/ca.pem" >/dev/null

# cl ARGS...: the client's JSON answer
cl() {
	local body
	body=$(python3 -c 'import json,sys;print(json.dumps({"cmd":"python3","args":["/tmp/ecl.py"]+sys.argv[1:]}))' "$@")
	curl -s -m 600 -H "$A" -d "$body" "$API/$ID/commands" |
		python3 -c 'import json,sys;d=json.load(sys.stdin);print(d["stdout"].strip() or "null")'
}
policy() {
	curl -s -m 30 -H "$A" -X PATCH -d "{\"network\":$1}" "$API/$ID/network" -o /dev/null -w '%{http_code}'
}

declare -A LAT TP R CPU
# the runner's CPU time (user + system, all threads, in clock ticks): what
# the proxy costs per byte, which a busy machine's scheduling does not change
cpu_ticks() { awk '{print $14 + $15}' "/proc/$RPID/stat"; }
pol_of() {
	case $1 in
	allow-all) echo '"allow-all"' ;;
	spliced) echo '{"allow":["bench.test"]}' ;;
	decrypted) echo '{"allow":{"bench.test":[{"transform":[{"headers":{"x-bench":"injected"}}]}]}}' ;;
	esac
}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
# the policies take turns within each round, so a busy spell of the
# machine falls on all of them alike; one unmeasured warm-up first
for mode in allow-all spliced decrypted; do
	[ "$(policy "$(pol_of $mode)")" = 200 ] || { echo "FAIL: PATCH $mode"; exit 1; }
	cl lat https bench.test 3 >/dev/null
done
for _ in $(seq "$ROUNDS"); do
	for mode in allow-all spliced decrypted; do
		[ "$(policy "$(pol_of $mode)")" = 200 ] || { echo "FAIL: PATCH $mode"; exit 1; }
		for scheme in http https; do
			LAT[$mode.$scheme]+="$(cl lat $scheme bench.test "$N") "
			c0=$(cpu_ticks)
			TP[$mode.$scheme]+="$(cl tput $scheme bench.test) "
			CPU[$mode.$scheme]+="$(($(cpu_ticks) - c0)) "
		done
	done
done
for mode in allow-all spliced decrypted; do
	for scheme in http https; do
		# shellcheck disable=SC2086
		R[$mode.$scheme]=$(python3 - ${LAT[$mode.$scheme]} -- ${TP[$mode.$scheme]} <<'PY'
import json, statistics, sys
a = sys.argv[1:]
k = a.index("--")
lat = [json.loads(x) for x in a[:k]]
tp = [json.loads(x) for x in a[k + 1:]]
if not lat or any(x is None for x in lat + tp):
    print("failed")
    sys.exit()
def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]
pool = [v for x in lat for v in x]
rounds = ",".join("%.3f:%.3f" % (pct(x, 50), pct(x, 99)) for x in lat)
print("%.3f %.3f %.1f %s" % (pct(pool, 50), pct(pool, 99), statistics.median(tp), rounds))
PY
)
		echo "$mode $scheme: connection+GET p50/p99 ms (pooled), MB/s, per-round p50:p99: ${R[$mode.$scheme]}"
	done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
for mode in allow-all spliced decrypted; do
	for scheme in http https; do
		# shellcheck disable=SC2086
		python3 - "$mode $scheme" "$MB" "$(getconf CLK_TCK)" ${CPU[$mode.$scheme]} <<'PY'
import statistics, sys
name, mb, hz = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
ms = statistics.median(int(x) for x in sys.argv[4:]) * 1000 / hz / (mb * 1.048576)
print("%s: the runner's CPU per MB of the large GET (median of the rounds): %.2f ms" % (name, ms))
print("figure: egress %s runner CPU per MB|%.2f|ms|-" % (name, ms))
PY
	done
done
echo "machine load (1/5/15 min): before $load_before, after $load_after; $(nproc) cores"

python3 - "${R[allow-all.http]}" "${R[allow-all.https]}" "${R[spliced.http]}" "${R[spliced.https]}" \
	"${R[decrypted.http]}" "${R[decrypted.https]}" <<'PY'
import sys
names = ["allow-all.http", "allow-all.https", "spliced.http", "spliced.https", "decrypted.http", "decrypted.https"]
r = {}
for n, v in zip(names, sys.argv[1:]):
    if v == "failed":
        print("FAIL: %s did not complete" % n)
        sys.exit(1)
    f = v.split()
    r[n] = [float(x) for x in f[:3]] + [[[float(y) for y in x.split(":")] for x in f[3].split(",")]]
for mode in ("spliced", "decrypted"):
    for scheme in ("http", "https"):
        base, got = r["allow-all." + scheme], r[mode + "." + scheme]
        add50, add99 = got[0] - base[0], got[1] - base[1]
        d50 = [g[0] - b[0] for g, b in zip(got[3], base[3])]
        d99 = [g[1] - b[1] for g, b in zip(got[3], base[3])]
        ratio = got[2] / base[2] if base[2] else 0
        print("%s %s: %+.2f ms p50 (per round %+.2f .. %+.2f), %+.2f ms p99 (per round %+.2f .. %+.2f) "
              "per connection; throughput %.2fx of allow-all"
              % (mode, scheme, add50, min(d50), max(d50), add99, min(d99), max(d99), ratio))
        print("figure: egress %s %s latency added p50|%.2f|ms|-" % (mode, scheme, add50))
        print("figure: egress %s %s latency added p99|%.2f|ms|-" % (mode, scheme, add99))
        print("figure: egress %s %s throughput vs allow-all|%.2f|x|>= 0.8" % (mode, scheme, ratio))
PY
