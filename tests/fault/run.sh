#!/bin/bash
# Fault suite: kill -9 of the gateway, the runner (external and the gateway's
# embedded one) and a sandbox's agent in the middle of a command stream, and a
# full disk under the runner's state directory; a leak check after each.
# Real parts: bin/sandbox-runner (jail driver, root), the ASan gateway, the
# real agent and image, and WebSocket clients from npm `ws` (stream.mjs).
# Ends with "N passed, N failed, N skipped"; exits non-zero on a failure.
. "$(dirname "$0")/../lib/harness.sh"
ROOT=$PWD
if [ -n "$(h_services_missing)" ] || [ ! -x "$GW" ] || [ ! -d node_modules/ws ]; then
	h_skip_suite "fault suite: needs root, bin/sandbox-runner, a gateway build, $IMG/default/rootfs and node_modules/ws"
fi

h_begin fault-test
KEY=flt-key-$RANDOM$RANDOM
A="Authorization: Bearer $KEY"
RUNNER_PID=0 GW_PID=0
SMALL=$T/small
suite_cleanup() { mountpoint -q "$SMALL" && umount -l "$SMALL"; }

# --- helpers ---------------------------------------------------------------
jget() { python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d=d[int(k)] if isinstance(d,list) else d.get(k) if isinstance(d,dict) else None
print("" if d is None else d)' "$@" 2>/dev/null; }
api() { # method base path [json] -> http code, body in $T/body
	local m=$1 u=$2$3
	if [ $# -ge 4 ]; then curl -s -m 30 -o "$T/body" -w '%{http_code}' -X "$m" -H "$A" -d "$4" "$u"
	else curl -s -m 30 -o "$T/body" -w '%{http_code}' -X "$m" -H "$A" "$u"; fi
}
start_gw() { # port [args...]: GW_PID (30 s: an embedded runner starts first)
	local port=$1; shift
	SANDBOX_API_KEYS=$KEY SANDBOX_METRICS_KEY=fault-metrics SANDBOX_IMAGE_DIR=$IMG GW_WAIT=300 \
		start_gateway $GW "$port" "$T/gw.$port.log" --max-sandboxes-per-key 14 "$@"
}
start_gw_any() { # [args...]: start_gw on a random port, another if it was
	# taken (another program may hold any port we pick); GW_PORT
	for _ in 1 2 3; do
		GW_PORT=$(random_port)
		start_gw "$GW_PORT" "$@" && return 0
	done
	return 1
}
create() { # base -> sandbox id (empty on failure)
	local c; c=$(api POST "$1" /v1/sandboxes '{"timeout_ms":600000}')
	[ "$c" = 201 ] && jget "$T/body" id
}
execd() { # base sid script -> command id
	local body
	body=$(python3 -c 'import json,sys;print(json.dumps({"cmd":"sh","args":["-c",sys.argv[1]],"detached":True}))' "$3")
	[ "$(api POST "$1" "/v1/sandboxes/$2/commands" "$body")" = 201 ] && jget "$T/body" id
}
sub() { # name base sid cid since [timeout_ms]: a stream client in the background
	local ws=${2/http:/ws:}
	node tests/fault/stream.mjs "$ws/v1/sandboxes/$3/commands/$4/stream?since=$5&access_token=$KEY" \
		"$T/$1" "${6:-60000}" 2>>"$T/$1.err" &
	h_track $!
	eval "sub_$1=$!"
}
# (each client is a node process: its start alone can take seconds on a
# busy machine, so a first output is given 30 s)
wait_bytes() { # name min-bytes secs: wait until the client has that much
	for _ in $(seq $(($3 * 20))); do
		[ "$(stat -c %s "$T/$1.data" 2>/dev/null || echo 0)" -ge "$2" ] && return 0
		sleep 0.05
	done
	return 1
}
# Bounds on how soon a stream ends after a kill only tell an ended stream
# from a hung one (the runner watch probes once a second; a loaded 2-core
# machine can take many times that): generous, the figures are reported.
wait_end() { # name secs: wait until the client wrote its summary; prints ms waited
	local t0; t0=$(date +%s%N)
	for _ in $(seq $(($2 * 20))); do
		[ -s "$T/$1.json" ] && break
		sleep 0.05
	done
	echo $((($(date +%s%N) - t0) / 1000000))
}
# "error+close" when the client got an error text message and a close with a
# documented code (1011 or 4xxx), or the connection dropped (1006) after one
ended_with_error() { python3 - "$T/$1.json" <<'EOF'
import json,sys
d=json.load(open(sys.argv[1]))
err=any(isinstance(t,dict) and t.get("type")=="error" for t in d["texts"])
code=d["code"]
print("yes" if err and not d["timeout"] and code is not None and (code==1011 or 4000<=code<5000) else
      "no: texts=%s code=%s timeout=%s" % (json.dumps(d["texts"])[:200], code, d["timeout"]))
EOF
}
state_field() { # state-dir sid field (from the runner's state.json)
	jget "$1/sandboxes/$2/state.json" "$3"
}
leaks() { # name state [slots...]
	# the security suite's checker when it is there (processes, mounts,
	# cgroups, state, netns, veths, iptables), else this suite's own
	if [ -x tests/security/leaks.sh ]; then tests/security/leaks.sh "$1" "$2"
	else tests/fault/leaks.sh "$@"; fi
}
leak_check() { # label name state [slots...]
	local out
	local out
	if out=$(leaks "${@:2}" 2>&1); then pass "$1: leak check finds nothing"; else fail "$1: leak check"; echo "$out"; fi
}
gone() { # pid...: all dead within 30 s (a bound against a hang: SIGKILLed
	# processes die when next scheduled, and init reaps them in its time)
	for _ in $(seq 300); do
		local alive=0
		for p in "$@"; do [ -n "$p" ] && kill -0 "$p" 2>/dev/null && alive=1; done
		[ $alive = 0 ] && return 0
		sleep 0.1
	done
	return 1
}
# Half the lines, then a wait for /home/sandbox/fault-go (written by the
# test once the gateway is dead and back), then the rest: however slow a
# stream client starts on a loaded machine, the command is still running
# when the gateway dies (a fixed 4 s loop once ended before the kill).
LOOP='i=0; while [ $i -lt 50 ]; do echo "line $i of the output"; i=$((i+1));
  if [ $i = 25 ]; then n=0; while [ ! -e /home/sandbox/fault-go ] && [ $n -lt 1200 ]; do sleep 0.1; n=$((n+1)); done; fi;
  sleep 0.08; done'
expect_loop() { for i in $(seq 0 49); do echo "line $i of the output"; done; }
LONG='i=0; while :; do echo "tick $i"; i=$((i+1)); sleep 0.05; done'

NAME=flt$$
STATE=$T/state
SOCK=$T/r.sock
if ! start_runner $NAME "$SOCK" "$STATE"; then
	fail "runner $NAME did not start (another runner named $NAME on this host?)"
	tail -5 "$T/runner.$NAME.log"
	h_finish
fi
start_gw_any --runner-socket "$SOCK" || h_abort "gateway did not start"
P=$GW_PORT
B=http://127.0.0.1:$P

# --- (a) kill -9 of the gateway mid-stream -----------------------------------
echo "-- (a) gateway killed mid-stream"
sid=$(create $B)
cid=$(execd $B "$sid" "$LOOP")
if [ -z "$sid" ] || [ -z "$cid" ]; then
	fail "a: create and exec ($(cat "$T/body"))"
else
	rfd0=$(ls /proc/$RUNNER_PID/fd | wc -l)
	sub a1 $B "$sid" "$cid" 0
	wait_bytes a1 60 30 || fail "a: no output on the first stream"
	[ -s "$T/a1.json" ] && fail "a: the first stream ended before the gateway was killed"
	kill -9 $GW_PID; wait $GW_PID 2>/dev/null
	ms=$(wait_end a1 30)
	code=$(jget "$T/a1.json" code) tmo=$(jget "$T/a1.json" timeout)
	if [ "$tmo" = False ] && [ "$code" = 1006 ] && [ "$ms" -lt 30000 ]; then
		pass "a: the dead gateway's client saw the connection drop (1006) after ${ms} ms"
	else
		fail "a: the dead gateway's client: code '$code' timeout '$tmo' after ${ms} ms"
	fi
	have=$(stat -c %s "$T/a1.data")
	sleep 0.5   # the command goes on while no gateway runs
	start_gw $P --runner-socket "$SOCK" || fail "a: the gateway did not start again"
	check "a: the restarted gateway knows the sandbox" "$(api GET $B "/v1/sandboxes/$sid")" 200
	c=$(curl -s -m 30 -o "$T/body" -w '%{http_code}' -X PUT -H "$A" --data-binary go "$B/v1/sandboxes/$sid/files?path=/home/sandbox/fault-go")
	check "a: the command's go-ahead written" "$c" 200
	sub a2 $B "$sid" "$cid" "$have"
	wait_end a2 60 >/dev/null   # (the rest of a 2 s loop of sleeps: a bound against a hang)
	if cat "$T/a1.data" "$T/a2.data" | cmp -s - <(expect_loop); then
		pass "a: old stream ($have bytes) + new stream with since=$have = the whole output, no gap or duplicate"
	else
		fail "a: output after the restart differs"; cat "$T/a1.data" "$T/a2.data" | diff - <(expect_loop) | head -5
	fi
	check "a: the detached command ran to its end (exit 0, close 1000)" \
		"$(jget "$T/a2.json" texts.0.type) $(jget "$T/a2.json" texts.0.exit_code) $(jget "$T/a2.json" code)" "exit 0 1000"
	leaks $NAME "$STATE" >/dev/null 2>&1 && fail "a: the leak check does not see a live sandbox" ||
		pass "a: the leak check sees a live sandbox (self-test)"
	check "a: delete" "$(api DELETE $B "/v1/sandboxes/$sid")" 200
	# (the runner closes a request's connection when it sees the gateway
	# close it, which may be after curl has the reply: waited for)
	for _ in $(seq 100); do
		rfd1=$(ls /proc/$RUNNER_PID/fd | wc -l)
		[ "$rfd1" -le "$rfd0" ] && break
		sleep 0.1
	done
	[ "$rfd1" -le "$rfd0" ] && pass "a: the runner holds no more fds than before ($rfd0 -> $rfd1)" ||
		fail "a: runner fds $rfd0 -> $rfd1 after the gateway died"
fi
leak_check "a" $NAME "$STATE"

# --- (b) kill -9 of the runner mid-stream ------------------------------------
echo "   (${SECONDS}s)"
echo "-- (b) runner killed mid-stream"
sid1=$(create $B) sid2=$(create $B)
cid1=$(execd $B "$sid1" "$LONG") cid2=$(execd $B "$sid2" "$LONG")
if [ -z "$sid1" ] || [ -z "$sid2" ] || [ -z "$cid1" ] || [ -z "$cid2" ]; then
	fail "b: create and exec ($(cat "$T/body"))"
else
	apid1=$(state_field "$STATE" "$sid1" pid) apid2=$(state_field "$STATE" "$sid2" pid)
	sub b1 $B "$sid1" "$cid1" 0
	sub b2 $B "$sid2" "$cid2" 0
	wait_bytes b1 20 30 && wait_bytes b2 20 30 || fail "b: no output before the kill"
	kill -9 $RUNNER_PID; wait $RUNNER_PID 2>/dev/null
	ms1=$(wait_end b1 30) ms2=$(wait_end b2 30)
	for s in b1 b2; do
		r=$(ended_with_error $s)
		if [ "$r" = yes ]; then pass "b: stream $s got an error message and close $(jget "$T/$s.json" code)"
		else fail "b: stream $s: $r"; fi
	done
	[ "$ms1" -lt 30000 ] && [ "$ms2" -lt 30000 ] && pass "b: both streams ended within ${ms1}/${ms2} ms of the kill" ||
		fail "b: streams ended after ${ms1}/${ms2} ms"
	c=$(api POST $B /v1/sandboxes '{}')
	check "b: create while the runner is down: 503 $(jget "$T/body" error.code)" "$c" 503
	start_runner $NAME "$SOCK" "$STATE" || fail "b: the runner did not start again"
	gone $apid1 $apid2 && pass "b: the restarted runner killed the old agents" || fail "b: old agents still alive ($apid1 $apid2)"
	# its processes and files are gone; the runner keeps the record, so its
	# owner learns what happened instead of a 404 (docs/runner.md)
	c=$(api GET $B "/v1/sandboxes/$sid1")
	check "b: the old sandbox is failed/runner_restart after reconciliation" \
		"$c $(jget "$T/body" status) $(jget "$T/body" stop_reason)" "200 failed runner_restart"
	leak_check "b (after reconciliation)" $NAME "$STATE"
	sid3=$(create $B)
	[ -n "$sid3" ] && pass "b: create works with the restarted runner" || fail "b: create after restart: $(cat "$T/body")"
	c=$(api POST $B "/v1/sandboxes/$sid3/commands" '{"cmd":"echo","args":["alive"]}')
	check "b: exec works with the restarted runner" "$c $(jget "$T/body" stdout)" "200 alive"
	api DELETE $B "/v1/sandboxes/$sid3" >/dev/null
	leak_check "b" $NAME "$STATE"
fi

# --- (b2) kill -9 of the runner during a create, with 10 sandboxes running ----
echo "   (${SECONDS}s)"
echo "-- (b2) runner killed during a create, 10 sandboxes running"
agents=()
for i in $(seq 10); do
	s=$(create $B) && [ -n "$s" ] && agents+=("$(state_field "$STATE" "$s" pid)")
done
check "b2: 10 sandboxes running" "${#agents[@]}" 10
( curl -s -m 30 -o "$T/b2.body" -w '%{http_code}' -H "$A" -d '{}' $B/v1/sandboxes >"$T/b2.code" ) &
cpid=$!
sleep 0.02
kill -9 $RUNNER_PID; wait $RUNNER_PID 2>/dev/null
# (as long as curl's own -m 30: an answer still on its way read as none)
for _ in $(seq 310); do kill -0 $cpid 2>/dev/null || break; sleep 0.1; done
c=$(cat "$T/b2.code" 2>/dev/null)
case "$c" in
201) pass "b2: the create in flight finished before the kill (201)" ;;
5*) pass "b2: the create in flight got $c $(jget "$T/b2.body" error.code) at once" ;;
*) fail "b2: the create in flight: '$c' $(cat "$T/b2.body" 2>/dev/null)" ;;
esac
t0=$(date +%s%N)
start_runner $NAME "$SOCK" "$STATE" || fail "b2: the runner did not start again"
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$ms" -lt 60000 ] && pass "b2: restart with reconciliation of 11 sandboxes took $ms ms" || fail "b2: restart took $ms ms"
gone "${agents[@]}" && pass "b2: every old agent is dead" || fail "b2: old agents alive"
leak_check "b2" $NAME "$STATE"

# --- (b') the gateway's embedded runner killed mid-stream --------------------
echo "   (${SECONDS}s)"
echo "-- (b') embedded runner killed mid-stream"
if [ -e /run/sandbox-runner.local.lock ] && ! flock -n /run/sandbox-runner.local.lock true; then
	skip "b': a runner named 'local' already runs on this host (the embedded runner needs that name)"
else
	if ! start_gw_any; then
		fail "b': the gateway with its embedded runner did not start"; tail -5 "$T/gw.$GW_PORT.log"
	else
		EB=http://127.0.0.1:$GW_PORT
		egw=$GW_PID
		r1=$(pgrep -P $egw -f sandbox-runner | head -1)
		estate=$(tr '\0' '\n' </proc/$r1/cmdline 2>/dev/null | sed -n '/^--state-dir$/{n;p}')
		esid=$(create $EB)
		ecid=$(execd $EB "$esid" "$LONG")
		sub e1 $EB "$esid" "$ecid" 0
		wait_bytes e1 20 30 || fail "b': no output before the kill"
		kill -9 "$r1"
		ms=$(wait_end e1 30)
		r=$(ended_with_error e1)
		[ "$r" = yes ] && [ "$ms" -lt 30000 ] && pass "b': the stream got an error and close $(jget "$T/e1.json" code) after $ms ms" ||
			fail "b': stream after the embedded runner died: $r after $ms ms"
		# (the gateway looks once a second, and the new runner reconciles
		# the killed one's sandbox before it listens: 30 s, as a bound)
		r2=
		for _ in $(seq 300); do
			r2=$(pgrep -P $egw -f sandbox-runner | head -1)
			[ -n "$r2" ] && [ "$r2" != "$r1" ] && curl -s -m 1 "$EB/healthz" >/dev/null && break
			r2=; sleep 0.1
		done
		[ -n "$r2" ] && pass "b': the gateway started a new runner ($r1 -> $r2)" || fail "b': no new runner within 30 s"
		# the new runner's process exists before it listens, and the
		# gateway marks it up at its next status probe (once a second):
		# a create meanwhile is a 503; 30 s, as a bound
		esid2=
		for _ in $(seq 100); do
			esid2=$(create $EB)
			[ -n "$esid2" ] && break
			sleep 0.3
		done
		c=$(api POST $EB "/v1/sandboxes/$esid2/commands" '{"cmd":"echo","args":["again"]}')
		check "b': a new sandbox works on the new runner" "$c $(jget "$T/body" stdout)" "200 again"
		c=$(api GET $EB "/v1/sandboxes/$esid")
		check "b': the old sandbox is failed/runner_restart" \
			"$c $(jget "$T/body" status) $(jget "$T/body" stop_reason)" "200 failed runner_restart"
		kill -TERM $egw
		for _ in $(seq 150); do kill -0 $egw 2>/dev/null || break; sleep 0.1; done
		kill -0 $egw 2>/dev/null && fail "b': the gateway did not stop on SIGTERM" || pass "b': SIGTERM stops the gateway and its runner"
		[ -n "$estate" ] && leak_check "b'" local "$estate" || fail "b': runner state dir unknown"
	fi
fi

# --- (c) kill -9 of an agent (the sandbox's PID 1) mid-stream -----------------
echo "   (${SECONDS}s)"
echo "-- (c) agent killed mid-stream"
sid=$(create $B)
cid=$(execd $B "$sid" "$LONG")
apid=$(state_field "$STATE" "$sid" pid)
if [ -z "$sid" ] || [ -z "$cid" ] || [ -z "$apid" ]; then
	fail "c: create, exec, agent pid ($sid $cid $apid)"
else
	echo "  agent of $sid is host pid $apid ($(tr '\0' ' ' </proc/$apid/cmdline | head -c 80))"
	sub c1 $B "$sid" "$cid" 0
	wait_bytes c1 20 30 || fail "c: no output before the kill"
	kill -9 "$apid"
	ms=$(wait_end c1 30)
	r=$(ended_with_error c1)
	[ "$r" = yes ] && [ "$ms" -lt 30000 ] && pass "c: the stream got an error and close $(jget "$T/c1.json" code) after $ms ms" ||
		fail "c: stream after the agent died: $r after $ms ms"
	st=
	for _ in $(seq 300); do   # (30 s: only against a hang)
		api GET $B "/v1/sandboxes/$sid" >/dev/null
		st="$(jget "$T/body" status) $(jget "$T/body" stop_reason)"
		case "$st" in failed*|stopped*) break ;; esac
		sleep 0.1
	done
	check "c: the sandbox is failed with stop_reason error" "$st" "failed error"
	sub c2 $B "$sid" "$cid" 0 10000
	wait_end c2 30 >/dev/null   # (the client's own start counts too)
	r=$(jget "$T/c2.json" code)
	case "$r" in 4*) pass "c: a new stream of the dead sandbox's command is refused (close $r)" ;;
	*) fail "c: a new stream of the dead sandbox: $(cat "$T/c2.json")" ;; esac
	c=$(api POST $B "/v1/sandboxes/$sid/commands" '{"cmd":"echo"}')
	check "c: exec on the failed sandbox: 409" "$c" 409
	check "c: delete of the failed sandbox" "$(api DELETE $B "/v1/sandboxes/$sid")" 200
fi
leak_check "c" $NAME "$STATE"

# --- (c2) signals from inside: kill -9 1 as root, kill -STOP -1 as the user ---
echo "   (${SECONDS}s)"
echo "-- (c2) kill -9 1 and kill -STOP -1 from inside"
sid=$(create $B)
if [ -z "$sid" ]; then
	fail "c2: create ($(cat "$T/body"))"
else
	cid=$(execd $B "$sid" "$LONG")
	c=$(api POST $B "/v1/sandboxes/$sid/commands" '{"cmd":"kill","args":["-9","1"],"sudo":true}')
	sleep 0.3
	api GET $B "/v1/sandboxes/$sid" >/dev/null
	check "c2: kill -9 1 as root inside: the agent (pid-ns init) survives" "$(jget "$T/body" status)" running
	c=$(api POST $B "/v1/sandboxes/$sid/commands" '{"cmd":"sh","args":["-c","kill -STOP -1; echo sent"]}')
	c=$(api POST $B "/v1/sandboxes/$sid/commands" '{"cmd":"echo","args":["after"]}')
	check "c2: after kill -STOP -1 as the user, commands still run" "$c $(jget "$T/body" stdout)" "200 after"
	st=$(curl -s -m 10 -H "$A" "$B/v1/sandboxes/$sid/commands/$cid" | python3 -c 'import json,sys;print(json.load(sys.stdin).get("status"))' 2>/dev/null)
	echo "  the user's earlier command is '$st' (stopped by the signal, which is its to receive)"
	check "c2: delete a sandbox whose processes are stopped" "$(api DELETE $B "/v1/sandboxes/$sid")" 200
	leak_check "c2" $NAME "$STATE"
fi

# --- (q) the key's quota after reconciliation -----------------------------------
# 12 or 13 sandboxes of this key died with the runner in (b) and (b2); (b)
# looked at one of them since (the runner said failed/runner_restart), so 11
# or 12 still count as live in the gateway until it asks the runner. The key
# may have 14 at once: with those no longer counted, 4 creates succeed (the
# last ones only after the gateway's refresh found the dead ones), and 4 are
# running
echo "   (${SECONDS}s)"
echo "-- (q) quota after the runner reconciled"
qs=()
for i in 1 2 3 4; do
	c=$(api POST $B /v1/sandboxes '{}')
	[ "$c" = 201 ] && qs+=("$(jget "$T/body" id)")
done
check "q: sandboxes the restarted runner removed no longer count against the key (4 creates under a limit of 14)" \
	"${#qs[@]} $(curl -s -m 5 -H 'Authorization: Bearer fault-metrics' $B/metrics | grep -c '^sandbox_gateway_sandboxes{state="running"} 4$')" "4 1"
for s in "${qs[@]}"; do api DELETE $B "/v1/sandboxes/$s" >/dev/null; done

# --- (d) full disk under the runner's state directory -------------------------
echo "   (${SECONDS}s)"
echo "-- (d) full disk"
mkdir -p "$SMALL"
if ! mount -t tmpfs -o size=64m,mode=0755 flt-small "$SMALL"; then
	skip "d: cannot mount a tmpfs"
else
	DN=fltd$$ DSTATE=$SMALL/state DSOCK=$T/d.sock
	if ! start_runner $DN "$DSOCK" "$DSTATE" || ! start_gw_any --runner-socket "$DSOCK"; then
		fail "d: runner or gateway did not start"; tail -5 "$T/runner.$DN.log"
	else
		DB=http://127.0.0.1:$GW_PORT
		drunner=$RUNNER_PID
		dsid=$(create $DB)
		[ -n "$dsid" ] && pass "d: create before the disk fills" || fail "d: create before fill: $(cat "$T/body")"
		dcid=$(execd $DB "$dsid" 'while :; do echo still here; sleep 0.2; done')
		dd if=/dev/zero of="$SMALL/fill" bs=1M 2>/dev/null
		echo "  state fs: $(df -h --output=used,avail "$SMALL" | tail -1)"
		c=$(api POST $DB /v1/sandboxes '{}')
		msg=$(jget "$T/body" error.message)
		case "$c" in 503|507|422) [ -n "$msg" ] && pass "d: create on a full disk: $c ($msg)" ||
			fail "d: create on a full disk: $c without a message" ;;
		*) fail "d: create on a full disk: $c $(cat "$T/body")" ;; esac
		c=$(api POST $DB "/v1/sandboxes/$dsid/commands" '{"cmd":"echo","args":["ok"]}')
		check "d: the running sandbox still answers exec" "$c $(jget "$T/body" stdout)" "200 ok"
		c=$(curl -s -m 10 -o "$T/body" -w '%{http_code}' -X PUT -H "$A" --data-binary 'file body' "$DB/v1/sandboxes/$dsid/files?path=x.txt")
		check "d: the running sandbox still takes a file" "$c" 200
		sub d1 $DB "$dsid" "$dcid" 0
		wait_bytes d1 22 30 && pass "d: the running sandbox still streams" || fail "d: no stream on a full disk"
		check "d: its state.json is intact" "$(state_field "$DSTATE" "$dsid" id)" "$dsid"
		check "d: the failed create left no state dir" "$(ls "$DSTATE/sandboxes" | grep -vc "^$dsid\$")" 0
		rm -f "$SMALL/fill"
		dsid2=$(create $DB)
		[ -n "$dsid2" ] && pass "d: create works again once space is freed" || fail "d: create after freeing: $(cat "$T/body")"
		c=$(api POST $DB "/v1/sandboxes/$dsid2/commands" '{"cmd":"echo","args":["back"]}')
		check "d: and the new sandbox runs commands" "$c $(jget "$T/body" stdout)" "200 back"
		api DELETE $DB "/v1/sandboxes/$dsid" >/dev/null
		api DELETE $DB "/v1/sandboxes/$dsid2" >/dev/null
		# the stream client of the deleted sandbox ends first: its command
		# line names the sandbox, so the leak check counted it while alive
		wait_end d1 30 >/dev/null
		gone $sub_d1 || fail "d: the stream of the deleted sandbox did not end"
		leak_check "d" $DN "$DSTATE"
		kill -TERM $drunner
		for _ in $(seq 100); do kill -0 $drunner 2>/dev/null || break; sleep 0.1; done
	fi
fi

echo "   (${SECONDS}s)"
if grep -l 'ERROR: AddressSanitizer\|runtime error' "$T"/gw.*.log >/dev/null 2>&1; then
	fail "sanitizer report in a gateway log"
	grep -h -A15 'ERROR: AddressSanitizer\|runtime error' "$T"/gw.*.log | head -40
else
	pass "no sanitizer report from the gateways"
fi
h_finish
