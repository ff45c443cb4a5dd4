#!/bin/bash
# Cluster suite (issue 15), honestly simulated on one host: a bridge of our
# own, three sandbox-runners each in its own network namespace with its own
# address on it (mutual TLS on :7443 beside their UNIX sockets), and
# gateways on loopback: g1 finds the runners in a static list, g2 through a
# DNS name served by tests/cluster/dns.py (g2 runs under `unshare -m` with a
# resolv.conf pointing there), g3 meets impostors, g4 reads SRV records.
# Clients are curl, tests/cluster/stream.mjs (WebSocket streams) and
# tests/cluster/tlspeer.py (raw TLS / control-socket peers, a fake runner).
# Names, addresses and the DNS server's loopback address derive from this
# shell's pid (tests/cluster/lib.sh): parallel runs do not meet. Everything
# is torn down by one function, on the normal path and by the exit trap.
. "$(dirname "$0")/../lib/harness.sh"
h_begin cluster-test

if [ -n "$(h_services_missing)" ]; then
	h_skip_suite "cluster suite: $(h_services_missing)"
fi
for tool in ip nsenter unshare openssl node; do
	command -v $tool >/dev/null || h_skip_suite "cluster suite: needs $tool"
done
. tests/cluster/lib.sh
. tests/cluster/images.sh
suite_cleanup() { cl_teardown; }

KEY=key-cluster-$$ KEY2=key-cluster-other-$$
A="Authorization: Bearer $KEY" A2="Authorization: Bearer $KEY2"
OP="Authorization: Bearer $CL_METRICS_KEY"   # the operator's: all of /v1/runners
MB=256   # memory_mb of every sandbox here: the runners' caps stay far away

cl_init || h_abort "no free 10.x.y.0/24 for the bridge"
cl_net_up || h_abort "cannot make the bridge and network namespaces"
cl_certs || { cat "$T/certs.log"; h_abort "deploy/certs.sh failed"; }
# the third listens on every address, IPv6 and IPv4 ([::]); gateways
# reach it by its IPv6 address (static list, AAAA record)
CL_LISTEN[3]="[::]:$CL_RPORT"
for i in 1 2 3; do
	cl_runner_start $i || h_abort "runner ${CL_NAME[i]} did not start"
done
RA=${CL_NAME[1]} RB=${CL_NAME[2]} RC=${CL_NAME[3]}
echo "runners: $RA@${CL_ADDR[1]} $RB@${CL_ADDR[2]} $RC@[${CL_ADDR6[3]}] (netns ${CL_NS[*]}, bridge $CL_BR)"

cl_dns_start || h_abort "the test DNS server did not start"
DNSNAME=runners.$CL_TAG.test
cl_zone "$DNSNAME A ${CL_ADDR[1]}" "$DNSNAME A ${CL_ADDR[2]}"

# ---- helpers ----
code() { curl -s -m 30 -o "$T/body" -w '%{http_code}' "$@"; }
jget() { python3 -c 'import json,sys;d=json.load(open(sys.argv[1]));print(eval("d"+sys.argv[2]))' "$T/body" "$1" 2>/dev/null; }
api() { # port method path [json] -> status code; the body in T/body
	local port=$1 m=$2 path=$3
	if [ $# -ge 4 ]; then code -X "$m" -H "$A" -d "$4" "http://127.0.0.1:$port/v1$path"
	else code -X "$m" -H "$A" "http://127.0.0.1:$port/v1$path"; fi
}
runner_of() { local s=${1#sbx_}; echo "${s%_*}"; }
# one line per runner: "name state draining sandboxes", sorted
runners_of() { # port
	curl -s -m 10 -H "$OP" "http://127.0.0.1:$1/v1/runners" | python3 -c '
import json, sys
try:
    rs = json.load(sys.stdin)["runners"]
except Exception as e:
    print("bad answer: %s" % e); sys.exit()
for r in sorted(rs, key=lambda r: str(r.get("name"))):
    print(r.get("name"), r.get("state"), str(r.get("draining")).lower(), r.get("sandboxes"))'
}
# 0 once runners_of PORT has lines matching every regex given, within ~15 s
wait_runners() { # port regex...
	local port=$1 ok
	shift
	for _ in $(seq 150); do
		runners_of "$port" >"$T/runners"
		ok=1
		for re in "$@"; do grep -qE "^$re\$" "$T/runners" || ok=0; done
		[ $ok = 1 ] && return 0
		sleep 0.1
	done
	return 1
}
create() { # port -> the id, or empty
	local c
	c=$(api "$1" POST /sandboxes "{\"memory_mb\":$MB,\"timeout_ms\":900000${2:+,$2}}")
	[ "$c" = 201 ] && jget '["id"]' || { echo "create: $c $(cat "$T/body")" >&2; echo; }
}
# waits until the gateway's view of runner NAME counts N sandboxes: the
# next placement then sees this one (probes run every second)
wait_count() { # port name n
	wait_runners "$1" "$2 up (true|false) $3"
}
run() { # port id cmd... -> stdout of a command run to its end
	local port=$1 id=$2
	shift 2
	api "$port" POST "/sandboxes/$id/commands" "$(python3 -c 'import json,sys;print(json.dumps({"cmd":sys.argv[1],"args":sys.argv[2:]}))' "$@")" >/dev/null
	jget '["stdout"]'
}
# "<creates that landed> <of them on NAME>" of a list of runner names
placed_on() { # list name
	local n=0 on=0 r
	for r in $1; do n=$((n + 1)); [ "$r" = "$2" ] && on=$((on + 1)); done
	echo "$n $on"
}
ms_now() { date +%s%3N; }
ctl() { "$RUNNER" ctl "$@"; }

# ---- the gateways ----
STATIC="${CL_ADDR[1]}:$CL_RPORT,${CL_ADDR[2]}:$CL_RPORT,[${CL_ADDR6[3]}]:$CL_RPORT"
KEY="$KEY,$KEY2" cl_gateway g1 --runners "$STATIC" --preview-secret-file "$T/psecret" ||
	{ tail -20 "$T/gw.g1.log"; h_abort "gateway g1 did not start"; }
G1PID=$GW_PID P1=$CL_PORT
KEY="$KEY,$KEY2" cl_gateway_dns g2 --runners-dns "$DNSNAME" --runner-port $CL_RPORT \
	--discovery-interval-ms 500 --preview-secret-file "$T/psecret" ||
	{ tail -20 "$T/gw.g2.log"; h_abort "gateway g2 did not start"; }
G2PID=$GW_PID P2=$CL_PORT

# ---- discovery ----
if wait_runners "$P1" "$RA up false 0" "$RB up false 0" "$RC up false 0"; then
	pass "static list: g1 has the three runners up (one by IPv6), by the names they report"
else
	fail "static list: g1's runners: $(tr '\n' ';' <"$T/runners")"
fi
if wait_runners "$P2" "$RA up false 0" "$RB up false 0" && ! grep -q "^$RC " "$T/runners"; then
	pass "DNS: g2 has the two runners of its DNS name ($RA $RB), not $RC"
else
	fail "DNS: g2's runners: $(tr '\n' ';' <"$T/runners")"
fi
cl_zone "$DNSNAME A ${CL_ADDR[1]}" "$DNSNAME A ${CL_ADDR[2]}" "$DNSNAME AAAA ${CL_ADDR6[3]}"
if wait_runners "$P2" "$RA up false 0" "$RB up false 0" "$RC up false 0"; then
	pass "DNS: a runner added to the name ($RC, an AAAA record) is found and used"
else
	fail "DNS: after adding $RC, g2's runners: $(tr '\n' ';' <"$T/runners")"
fi

# ---- placement: creates spread across the runners ----
# one at a time, each after g1 has seen the last one land (its probes run
# every second): then the room each runner reports decides, deterministically
ids=()
declare -A count=([$RA]=0 [$RB]=0 [$RC]=0)
for n in 1 2 3 4 5 6; do
	id=$(create "$P1")
	[ -n "$id" ] || break
	ids+=("$id")
	r=$(runner_of "$id")
	count[$r]=$((${count[$r]:-0} + 1))
	wait_count "$P1" "$r" "${count[$r]}" || echo "  (g1 did not see $r at ${count[$r]} sandboxes)"
done
check "placement: six creates through g1, two on each runner (most room first)" \
	"${#ids[@]} ${count[$RA]} ${count[$RB]} ${count[$RC]}" "6 2 2 2"
held=0
for id in "${ids[@]}"; do
	i=0
	for k in 1 2 3; do [ "$(runner_of "$id")" = "${CL_NAME[k]}" ] && i=$k; done
	[ $i != 0 ] && python3 tests/cluster/tlspeer.py unix "$T/r$i.sock" "{\"op\":\"get\",\"id\":\"$id\"}" |
		grep -q '"status":"running"' && held=$((held + 1))
done
check "ids name their runner: the runner each id names holds it" "$held" 6
# a sandbox on each runner, for the checks below
SA= SB= SC=
for id in "${ids[@]}"; do
	case $(runner_of "$id") in "$RA") SA=$id ;; "$RB") SB=$id ;; "$RC") SC=$id ;; esac
done

# ---- one sandbox, made through g1, used through g2 ----
S=$(create "$P1" '"ports":[3000]')
[ -n "$S" ] || h_abort "create through g1 failed"
check "g2 knows g1's sandbox (owner tag from the runner)" "$(api "$P2" GET "/sandboxes/$S"; echo " $(jget '["status"]')")" "200 running"
check "another key gets 404 for it through g2" "$(code -H "$A2" "http://127.0.0.1:$P2/v1/sandboxes/$S")" 404
check "exec through g2" "$(run "$P2" "$S" sh -c 'echo $((6 * 7)) $(id -un)')" "42 sandbox"
head -c 100000 /dev/urandom >"$T/blob"
code -X PUT -H "$A" --data-binary @"$T/blob" "http://127.0.0.1:$P2/v1/sandboxes/$S/files?path=site/blob" >/dev/null
check "a file written through g2 reads back through g1" \
	"$(curl -s -m 30 -H "$A" "http://127.0.0.1:$P1/v1/sandboxes/$S/files?path=site/blob" | md5sum)" "$(md5sum <"$T/blob")"
api "$P2" POST "/sandboxes/$S/commands" '{"cmd":"python3","args":["-m","http.server","3000","--directory","site"],"detached":true}' >/dev/null
H3=3000-$S.localhost
prev() { curl -s -m 10 -o "$T/prev" -w '%{http_code}' --resolve "$H3:$1:127.0.0.1" "http://$H3:$1/blob"; }
for _ in $(seq 100); do [ "$(prev "$P2")" = 200 ] && break; sleep 0.1; done
check "preview through g2: the file, exact" "$(prev "$P2") $(md5sum <"$T/prev")" "200 $(md5sum <"$T/blob")"
check "preview through g1: the same" "$(prev "$P1") $(md5sum <"$T/prev")" "200 $(md5sum <"$T/blob")"
api "$P2" POST "/sandboxes/$S/commands" '{"cmd":"seq","args":["1","20000"],"detached":true}' >/dev/null
C=$(jget '["id"]')
node tests/cluster/stream.mjs "ws://127.0.0.1:$P2/v1/sandboxes/$S/commands/$C/stream?access_token=$KEY" "$T/st2" 0 60000
check "stream through g2: every byte, then exit 0" \
	"$(md5sum <"$T/st2.data") $(python3 -c 'import json,sys;d=json.load(open(sys.argv[1]));print([t.get("exit_code") for t in d["texts"] if isinstance(t,dict) and t.get("type")=="exit"])' "$T/st2.json")" \
	"$(seq 1 20000 | md5sum) [0]"
# a terminal through g2 on a sandbox g2 has not seen yet (it asks the
# runner whose it is first): its query (cmd, size) must still count
S2=$(create "$P1")
node tests/cluster/pty.mjs "ws://127.0.0.1:$P2/v1/sandboxes/$S2/pty?access_token=$KEY&cmd=sh&cols=123&rows=45" \
	$'echo "shell=$0 size=$(stty size)"; exit\n' >"$T/pty.out"
check "terminal through g2 on g1's new sandbox: the size asked for, sh as asked" \
	"$(tr -d '\r' <"$T/pty.out" | grep -o 'shell=[a-z/-]* size=[0-9]* [0-9]*$') $(tail -1 "$T/pty.out")" "shell=sh size=45 123 close 1000"
api "$P1" DELETE "/sandboxes/$S2" >/dev/null
check "stop through g2" "$(api "$P2" DELETE "/sandboxes/$S")" 200
check "g1 sees it stopped" "$(api "$P1" GET "/sandboxes/$S"; echo " $(jget '["status"]')")" "200 stopped"

# ---- a stream moved between gateways mid-output, resumed with since ----
# The command writes 40000 bytes, waits for a file the test writes, then
# writes 40000 more: the move happens while it runs, whatever the load.
S=${ids[0]}
PROG='import os, sys, time
def out(a, b):
    for i in range(a, b):
        os.write(1, b"%07d\n" % i)
out(0, 5000)
while not os.path.exists("/tmp/go"):
    time.sleep(0.02)
out(5000, 10000)'
api "$P1" POST "/sandboxes/$S/commands" "$(python3 -c 'import json,sys;print(json.dumps({"cmd":"python3","args":["-c",sys.argv[1]],"detached":True}))' "$PROG")" >/dev/null
C=$(jget '["id"]')
WS="/v1/sandboxes/$S/commands/$C/stream?access_token=$KEY"
node tests/cluster/stream.mjs "ws://127.0.0.1:$P1$WS" "$T/m1" 3000 30000
got1=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["bytes"])' "$T/m1.json")
check "moved stream: g1's client left mid-output (command running)" \
	"$(api "$P1" GET "/sandboxes/$S/commands/$C"; echo " $(jget '["status"]')")" "200 running"
node tests/cluster/stream.mjs "ws://127.0.0.1:$P2$WS&since=$got1" "$T/m2" 0 60000 &
m2=$!
sleep 0.5
code -X PUT -H "$A" --data-binary go "http://127.0.0.1:$P2/v1/sandboxes/$S/files?path=/tmp/go" >/dev/null
wait $m2
python3 -c 'import sys;sys.stdout.buffer.write(b"".join(b"%07d\n" % i for i in range(10000)))' >"$T/want"
cat "$T/m1.data" "$T/m2.data" >"$T/moved"
check "moved stream: g1's bytes + g2's from since=$got1 = the output, byte-exact" \
	"$(md5sum <"$T/moved") $(stat -c %s "$T/moved")" "$(md5sum <"$T/want") 80000"

# ---- a runner killed: its sandboxes 503 at once, the others work ----
cl_runner_kill9 3
t0=$(ms_now) t1= t2=
for _ in $(seq 200); do
	[ -z "$t1" ] && [ "$(api "$P1" GET "/sandboxes/$SC")" = 503 ] && t1=$(($(ms_now) - t0))
	[ -z "$t2" ] && [ "$(api "$P2" GET "/sandboxes/$SC")" = 503 ] && t2=$(($(ms_now) - t0))
	[ -n "$t1" ] && [ -n "$t2" ] && break
	sleep 0.05
done
echo "  runner $RC killed: 503 after ${t1:-never} ms through g1, ${t2:-never} ms through g2 (the issue's bound: 2000 ms)"
# 10 s: a generous bound for a busy machine; the figure above is the measure
[ -n "$t1" ] && [ -n "$t2" ] && [ "$t1" -lt 10000 ] && [ "$t2" -lt 10000 ] &&
	pass "killed runner: its sandbox answers 503 through both gateways (g1 ${t1} ms, g2 ${t2} ms)" ||
	fail "killed runner: 503 after g1 ${t1:-never} ms, g2 ${t2:-never} ms"
# the first answers may come from a request's own failed connect (their
# words vary with the path); once the gateway has marked the runner down
# (its probe), every answer is the one below
for g in "g1 $P1" "g2 $P2"; do
	p=${g#* } g=${g% *}
	wait_runners "$p" "$RC down (true|false) [0-9]+" || echo "  (port $p does not show $RC down)"
	api "$p" GET "/sandboxes/$SC" >/dev/null
	got="$(jget '["error"]["code"]'): $(jget '["error"]["message"]')"
	case "$got" in
	"runner_unavailable: runner $RC is not answering (since "*"); its sandboxes are unreachable until it is back")
		pass "killed runner: runner_unavailable naming it, since when, through $g ($got)" ;;
	*) fail "killed runner: the 503 through $g: $got" ;;
	esac
done
secs=$(curl -s -m 30 -o /dev/null -w '%{time_total}' -H "$A" "http://127.0.0.1:$P2/v1/sandboxes/$SC/files?path=/etc/hostname")
awk -v s="$secs" 'BEGIN { exit !(s < 3) }' && pass "killed runner: a file read answers at once (${secs}s), no hang" ||
	fail "killed runner: a file read took ${secs}s"
check "killed runner: the others work (exec on $RA through g2)" "$(run "$P2" "$SA" echo still)" "still"
api "$P1" GET /sandboxes >/dev/null
check "killed runner: the list names it unavailable" "$(jget '["unavailable_runners"]')" "['$RC']"
placed=
for n in 1 2 3; do id=$(create "$P1"); placed+=" $(runner_of "$id")"; done
check "killed runner: three creates, none on it" "$(placed_on "$placed" "$RC")" "3 0"
echo "  creates while $RC is down: $placed"

cl_runner_start 3 || h_abort "runner $RC did not start again"
if wait_runners "$P1" "$RC up false 0" && wait_runners "$P2" "$RC up false 0"; then
	pass "returned runner: up again on both gateways"
else
	fail "returned runner: $(tr '\n' ';' <"$T/runners")"
fi
check "returned runner: its old sandbox is gone, said clearly (g1)" \
	"$(api "$P1" GET "/sandboxes/$SC") $(jget '["status"]') $(jget '["stop_reason"]')" "200 failed runner_restart"
check "returned runner: the same through g2" \
	"$(api "$P2" GET "/sandboxes/$SC") $(jget '["status"]') $(jget '["stop_reason"]')" "200 failed runner_restart"
grep -q "runner $RC restarted" "$T/gw.g1.log" && pass "returned runner: g1 logs the restart" ||
	fail "returned runner: no 'runner $RC restarted' in g1's log"
id=$(create "$P1")
check "returned runner: the next create goes to it (the most room)" "$(runner_of "$id")" "$RC"

# ---- a runner's host vanishes (its link down: no reset, nothing answers) ----
# the status probe marks it down when its TCP connect goes unanswered for
# 1.5 s; a request already connecting ends then. Bound: 15 s, generous for a busy
# machine; the time is printed.
SC2=$id
ip -n "${CL_NS[3]}" link set "${CL_TAG}p3" down
t0=$(ms_now) t1= slow=0
for _ in $(seq 300); do
	a=$(ms_now)
	c=$(api "$P1" GET "/sandboxes/$SC2")
	[ $(($(ms_now) - a)) -gt $slow ] && slow=$(($(ms_now) - a))
	[ "$c" = 503 ] && { t1=$(($(ms_now) - t0)); break; }
	[ $(($(ms_now) - t0)) -gt 15000 ] && break
	sleep 0.05
done
echo "  host of $RC vanished: 503 after ${t1:-never} ms (slowest request ${slow} ms)"
check "vanished host: its sandbox answers 503 runner_unavailable within 15 s" \
	"$([ -n "$t1" ] && echo yes) $(jget '["error"]["code"]')" "yes runner_unavailable"
check "vanished host: the others work meanwhile" "$(run "$P1" "$SA" echo fine)" "fine"
# its kernel no longer answers a TCP connect: down at the first status
# that could not connect (a busy runner's host still completes it)
grep -q "runner $RC .* is down: no answer to a TCP connect in 1500 ms" "$T/gw.g1.log" &&
	pass "vanished host: g1 says its host did not answer a TCP connect" ||
	fail "vanished host: g1's log: $(grep "runner $RC .* is down" "$T/gw.g1.log" | tail -2)"
ip -n "${CL_NS[3]}" link set "${CL_TAG}p3" up
wait_runners "$P1" "$RC up false [0-9]+" && pass "vanished host back: up again" ||
	fail "vanished host back: $(tr '\n' ';' <"$T/runners")"
check "vanished host back: its sandbox is still there, running" \
	"$(api "$P1" GET "/sandboxes/$SC2") $(jget '["status"]')" "200 running"

# ---- drain ----
ctl drain --socket "$T/r1.sock" >"$T/ctl.out" 2>&1
check "ctl drain: exit 0, the status says draining" "$? $(grep -c '"draining":true' "$T/ctl.out")" "0 1"
kill -USR1 "${RPID[2]}"
for _ in $(seq 50); do ctl status --socket "$T/r2.sock" 2>/dev/null | grep -q '"draining":true' && break; sleep 0.1; done
check "SIGUSR1 drains ($RB)" "$(ctl status --socket "$T/r2.sock" 2>&1 | grep -c '"draining":true')" 1
placed=
for n in 1 2 3 4; do id=$(create "$P1"); placed+=" $(runner_of "$id")"; done
check "drained runners get no creates (all on $RC)" "$placed" " $RC $RC $RC $RC"
wait_runners "$P1" "$RA up true [0-9]+" "$RB up true [0-9]+" &&
	pass "/v1/runners shows both draining" || fail "/v1/runners: $(tr '\n' ';' <"$T/runners")"
check "drained runner's sandboxes keep working" "$(run "$P1" "$SA" echo running-out)" "running-out"
check "drain over TLS is refused" \
	"$(python3 tests/cluster/tlspeer.py probe "${CL_ADDR[1]}" $CL_RPORT "$RA" "$CL_PKI/ca.crt" "$CL_PKI/gateway-gw.crt" "$CL_PKI/gateway-gw.key" '{"op":"drain","draining":false}' | grep -o '"code":"[a-z_]*"')" '"code":"bad_request"'
ctl undrain --socket "$T/r1.sock" >/dev/null && ctl undrain --socket "$T/r2.sock" >/dev/null
wait_runners "$P1" "$RA up false [0-9]+" "$RB up false [0-9]+" &&
	pass "undrain: both back in placement" || fail "undrain: $(tr '\n' ';' <"$T/runners")"

# ---- mutual TLS: the runner refuses clients without the CA's certificate ----
probe() { python3 tests/cluster/tlspeer.py probe "${CL_ADDR[1]}" $CL_RPORT "$RA" "$CL_PKI/ca.crt" "$@"; }
deploy/certs.sh gateway "$T/pki-other" gw >>"$T/certs.log" 2>&1
check "runner answers a client with the CA's certificate (control)" \
	"$(probe "$CL_PKI/gateway-gw.crt" "$CL_PKI/gateway-gw.key" | grep -o "\"name\":\"$RA\"")" "\"name\":\"$RA\""
# one refused peer a second: the runner logs one line a second at most,
# a second from its last line. Each refused peer's line is waited for
# (OpenSSL sends the alert from inside the failed handshake, so the client
# can see the close before the runner has written the line; a probe 1.1 s
# after the client's close could come within the runner's second and be
# only counted), then the next peer comes more than a second later.
refused_logged() { # regex: 0 once the runner's log has a line of it (15 s at most)
	for _ in $(seq 150); do grep -q "tls: refused .*$1" "$T/runner.$RA.log" && return 0; sleep 0.1; done
	return 1
}
sleep 1.1
check "runner refuses a client with no certificate" "$(probe | cut -d' ' -f1)" refused
refused_logged 'peer did not return a certificate'
sleep 1.1
check "runner refuses a client whose certificate another CA signed" \
	"$(probe "$T/pki-other/gateway-gw.crt" "$T/pki-other/gateway-gw.key" | cut -d' ' -f1)" refused
refused_logged 'unable to get local issuer'
sleep 1.1
check "runner answers nothing in clear text on its TLS port" \
	"$(python3 tests/cluster/tlspeer.py plain "${CL_ADDR[1]}" $CL_RPORT | cut -d' ' -f1)" refused
check "runner logs the refused peers with the reason (no certificate; another CA)" \
	"$(grep -c 'refused .*peer did not return a certificate' "$T/runner.$RA.log") $(grep -c 'refused .*unable to get local issuer' "$T/runner.$RA.log")" "1 1"

# ---- the gateway refuses runners whose certificates do not match ----
# an impostor with a good certificate (of the CA, naming runner "<tag>x")
# that claims to be $RB, and a real runner whose certificate another CA
# signed; g3 lists both beside the real $RB
deploy/certs.sh runner "$CL_PKI" "${CL_TAG}x" >>"$T/certs.log" 2>&1
python3 tests/cluster/tlspeer.py fake "$T/fake.port" "$CL_PKI/runner-${CL_TAG}x.crt" \
	"$CL_PKI/runner-${CL_TAG}x.key" "$RB" "$T/fake.ops" 2>>"$T/fake.err" &
h_track $!
RD=${CL_TAG}d
deploy/certs.sh runner "$T/pki-other" "$RD" >>"$T/certs.log" 2>&1
DPORT=$CL_RPORT   # on the bridge's own address: nobody else's
start_runner "$RD" "$T/rd.sock" "$T/sd" --max-memory-mb 2048 --listen-tls "$CL_NET.1:$DPORT" \
	--cert "$T/pki-other/runner-$RD.crt" --key "$T/pki-other/runner-$RD.key" --client-ca "$CL_PKI/ca.crt" ||
	h_abort "runner $RD did not start"
for _ in $(seq 50); do [ -s "$T/fake.port" ] && break; sleep 0.1; done
cl_gateway g3 --runners "127.0.0.1:$(cat "$T/fake.port"),$CL_NET.1:$DPORT,${CL_ADDR[2]}:$CL_RPORT" ||
	h_abort "gateway g3 did not start"
G3PID=$GW_PID P3=$CL_PORT
sleep 3   # a few probe rounds for the impostors
wait_runners "$P3" "$RB up false [0-9]+" || true
check "g3: the real $RB is up, nothing else is" "$(grep -c ' up ' "$T/runners") $(grep -c "^$RB up" "$T/runners")" "1 1"
# the state g3 gives the runner at an address
state_at() { # address
	curl -s -m 10 -H "$OP" "http://127.0.0.1:$P3/v1/runners" | python3 -c '
import json, sys
print(" ".join(str(r.get("state")) for r in json.load(sys.stdin)["runners"] if r.get("address") == sys.argv[1]))' "$1"
}
FAKE=127.0.0.1:$(cat "$T/fake.port")
check "g3 refuses the runner whose certificate names another runner (state refused, logged)" \
	"$(state_at "$FAKE") $(grep -c "runner at $FAKE refused: it says it is runner $RB, its certificate does not name it" "$T/gw.g3.log")" "refused 1"
check "g3 does not use the runner whose certificate another CA signed (down, the reason logged)" \
	"$(state_at "$CL_NET.1:$DPORT") $(grep -m1 -c "runner $CL_NET.1:$DPORT: TLS handshake: .*unable to get local issuer certificate" "$T/gw.g3.log")" "down 1"
placed=
for n in 1 2 3; do id=$(create "$P3"); placed+=" $(runner_of "$id")"; done
check "g3 places only on the real runner" "$placed" " $RB $RB $RB"
check "g3 routes $RB's sandboxes to the real $RB, not to the impostor claiming its name" \
	"$(run "$P3" "$SB" cat /etc/hostname >/dev/null; jget '["exit_code"]')" 0
check "the impostor never got a create or a connect" "$(grep -cE 'create|connect' "$T/fake.ops")" 0
kill "$G3PID" 2>/dev/null; wait "$G3PID" 2>/dev/null

# ---- SRV discovery ----
SRV=_runner._tcp.$CL_TAG.test
cl_zone "$DNSNAME A ${CL_ADDR[1]}" "$DNSNAME AAAA ${CL_ADDR6[3]}" \
	"$SRV SRV 0 0 $CL_RPORT ra.$CL_TAG.test" "$SRV SRV 0 0 $CL_RPORT rb.$CL_TAG.test" \
	"ra.$CL_TAG.test A ${CL_ADDR[1]}" "rb.$CL_TAG.test A ${CL_ADDR[2]}"
cl_gateway_dns g4 --runners-dns "$SRV" --discovery-interval-ms 500 || h_abort "gateway g4 did not start"
G4PID=$GW_PID P4=$CL_PORT
if wait_runners "$P4" "$RA up false [0-9]+" "$RB up false [0-9]+" && ! grep -q "^$RC " "$T/runners"; then
	pass "SRV: g4 finds the runners of the SRV records ($RA $RB)"
else
	fail "SRV: g4's runners: $(tr '\n' ';' <"$T/runners")"
fi

# ---- DNS: a runner removed from the name gets no more creates from g2 ----
# (the zone above already left $RB out of $DNSNAME) two queries after the
# change: the first answer has reached g2's loop by the time it asks again
cl_dns_asked "$DNSNAME" A 2 || fail "g2 did not ask the DNS again"
placed=
for n in 1 2 3; do id=$(create "$P2"); placed+=" $(runner_of "$id")"; done
check "DNS: no creates on $RB once it left the name" "$(placed_on "$placed" "$RB")" "3 0"
echo "  creates through g2 after $RB left its name: $placed"
check "DNS: $RB's sandboxes stay reachable through g2 while it answers" \
	"$(api "$P2" GET "/sandboxes/$SB") $(jget '["status"]')" "200 running"

# ---- images: a create's registry reference pulled by the runner it lands on ----
cluster_images

# ---- kept-alive connections to the runners that never went away ----
# A runner answers every request it was asked to keep the connection for;
# one ended before its answer was the gateway's doing (an owner's old
# deadline left on the connection killed the request that had it next,
# and the runner was marked down: once a list of the unavailable runners
# named one that was up).
lost=$(cat "$T"/gw.g*.log | grep -cE "runner (${CL_ADDR[1]}|${CL_ADDR[2]}):$CL_RPORT: closed the kept-alive connection before answering")
check "kept-alive connections to $RA and $RB: no request on one lost, in any gateway's log" "$lost" 0

# ---- the end: gateways stop clean, nothing left behind ----
for g in g1:$G1PID g2:$G2PID g3:$G3PID g4:$G4PID; do
	kill "${g#*:}" 2>/dev/null; wait "${g#*:}" 2>/dev/null
	if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$T/gw.${g%%:*}.log"; then
		fail "sanitizer report in gateway ${g%%:*}'s log"; grep -A20 -E 'ERROR: |runtime error:' "$T/gw.${g%%:*}.log" | head -30
	else
		pass "no sanitizer report in gateway ${g%%:*}'s log"
	fi
done
cl_teardown
cl_leftovers >"$T/left"
check "nothing left behind (processes, netns, links, mounts, cgroups)" "$(tr '\n' ';' <"$T/left")" ""
if [ "$H_FAIL" != 0 ]; then
	for f in "$T"/gw.*.log "$T"/runner.*.log; do echo "--- $f (tail)"; tail -15 "$f"; done
fi
h_finish
