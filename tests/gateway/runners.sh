#!/bin/bash
# Several runners behind one gateway, and two gateways on the same runners
# (gateway/core/gw_runners.c, gw_probe.c, gw_owner_lookup.c, gw_fanout.c,
# gateway/svc/svc_place.c). Three real sandbox-runners on this host, each
# with its own name, socket and --max-memory-mb, given as --runners
# unix:...; both gateways read one keys file. Sourced by tests/gateway/
# run.sh where runners and sandboxes can run (defines suite_runners
# GATEWAY-BIN); run on its own: tests/gateway/runners.sh.

rs_json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(($1))" "$T/body" 2>/dev/null; }
rs_code() { curl -s -m 20 -o "$T/body" -w '%{http_code}' "$@"; }
# the runner name inside a sandbox id
rs_runner_of() { local s=${1#sbx_}; echo "${s%_*}"; }

# wait until GET /v1/runners on gateway url says runner name has field = value
rs_wait_runner() { # url name python-expr-on-r tries
	for _ in $(seq "$4"); do
		curl -s -m 5 -H "$RS_A" "$1/v1/runners" >"$T/runners.json" 2>/dev/null
		[ "$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r=[x for x in d['runners'] if x['name']==sys.argv[2]]; print(bool(r) and bool($3))" "$T/runners.json" "$2" 2>/dev/null)" = True ] && return 0
		sleep 0.1
	done
	return 1
}

rs_free_port() {
	local p; p=$(random_port)
	while ss -ltnH "sport = :$p" | grep -q .; do p=$(random_port); done
	echo "$p"
}

# our gateway itself listens (not another one on a port taken meanwhile)
rs_listening() { # log pid
	for _ in $(seq 100); do
		grep -q "listening on" "$1" && kill -0 "$2" 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# a gateway that must refuse to start: "exit-code matched-message"
rs_refused() { # bin want-text args...
	local bin=$1 want=$2 rc
	shift 2
	SANDBOX_API_KEYS=key-one timeout 20 "$bin" --port "$(random_port)" "$@" >"$T/gw.rsflag.log" 2>&1
	rc=$?
	echo "$rc $(grep -cF -- "$want" "$T/gw.rsflag.log")"
}

# a WebSocket stream of a command through url: its stdout, then its close code
rs_ws_stdout() { # url sid cid
	node -e '
const WebSocket = require("ws");
const [url, sid, cid, key] = process.argv.slice(1);
const ws = new WebSocket(`${url.replace("http", "ws")}/v1/sandboxes/${sid}/commands/${cid}/stream?since=0&access_token=${key}`);
let out = "", st = "";
ws.on("message", (d, bin) => { if (bin && d[0] === 1) out += d.subarray(1).toString(); });
ws.on("unexpected-response", (q, r) => { st = r.statusCode; console.log(`${out.trim()}|http ${st}`); process.exit(0); });
ws.on("close", (code) => { console.log(`${out.trim()}|${code}`); process.exit(0); });
ws.on("error", () => {});
setTimeout(() => { console.log(`${out.trim()}|timeout`); process.exit(0); }, 20000);
' "$1" "$2" "$3" key-one
}

suite_runners() { # gateway-bin
	local gwb=$1 ra=gra$$ rb=grb$$ rc=grc$$ pa pb ua ub id ids got c i n
	RS_A='Authorization: Bearer key-one'
	local A=$RS_A K="--keys-file $T/rs.keys" OP='Authorization: Bearer metrics-key'
	printf 'key-one\nkey-two\n' >"$T/rs.keys"

	# malformed --runners: exit 2 naming what is wrong, before anything starts
	check "runners: --runners with a relative socket path exits 2" \
		"$(rs_refused "$gwb" "a socket path must be absolute" --runners unix:relative.sock)" "2 1"
	check "runners: --runners with a word that is no address exits 2" \
		"$(rs_refused "$gwb" "want host:port, [v6]:port or unix:/path" --runners nonsense)" "2 1"
	check "runners: --runners naming one socket twice exits 2" \
		"$(rs_refused "$gwb" "is listed twice" --runners "unix:$T/x.sock,$T/x.sock")" "2 1"
	check "runners: an empty --runners exits 2" \
		"$(rs_refused "$gwb" "no address given" --runners ,)" "2 1"
	check "runners: a TCP runner in --runners without --runner-ca exits 2" \
		"$(rs_refused "$gwb" "127.0.0.1:7443 is a TLS runner: give --runner-ca" --runners "unix:$T/x.sock,127.0.0.1:7443")" "2 1"
	check "runners: --drivers with --runners exits 2 (they belong to the runners)" \
		"$(rs_refused "$gwb" "configure the embedded runner" --runners "unix:$T/x.sock" --drivers jail)" "2 1"

	# three runners: a admits 2048 MiB, b and c 1024 MiB each
	start_runner "$ra" "$T/ra.sock" "$T/rastate" --max-memory-mb 2048 || { fail "runners: runner a did not start"; return; }
	local rapid=$RUNNER_PID
	start_runner "$rb" "$T/rb.sock" "$T/rbstate" --max-memory-mb 1024 || { fail "runners: runner b did not start"; return; }
	local rbpid=$RUNNER_PID
	start_runner "$rc" "$T/rc.sock" "$T/rcstate" --max-memory-mb 1024 || { fail "runners: runner c did not start"; return; }
	local L="unix:$T/ra.sock,unix:$T/rb.sock,$T/rc.sock"
	# two free ports (other suites run beside this one: a port taken by
	# another gateway would answer its /healthz for ours)
	pa=$(rs_free_port); pb=$(rs_free_port)
	while [ "$pb" = "$pa" ]; do pb=$(rs_free_port); done
	ua=http://127.0.0.1:$pa ub=http://127.0.0.1:$pb
	SANDBOX_METRICS_KEY=metrics-key start_gateway "$gwb" $pa "$T/gw.rsa.log" --runners "$L" $K --max-sandboxes-per-key 20 ||
		{ fail "runners: gateway A did not start"; return; }
	local gwa=$GW_PID
	rs_listening "$T/gw.rsa.log" $gwa || { fail "runners: gateway A did not listen: $(tail -3 "$T/gw.rsa.log")"; return; }
	# B also lists runner a under a second address (a symlink to its socket)
	ln -s "$T/ra.sock" "$T/ra-alias.sock"
	SANDBOX_METRICS_KEY=metrics-key start_gateway "$gwb" $pb "$T/gw.rsb.log" --runners "$L,unix:$T/ra-alias.sock" $K --max-sandboxes-per-key 20 ||
		{ fail "runners: gateway B did not start"; return; }
	local gwbpid=$GW_PID
	rs_listening "$T/gw.rsb.log" $gwbpid || { fail "runners: gateway B did not listen: $(tail -3 "$T/gw.rsb.log")"; return; }

	c=$(rs_code -H "$OP" $ua/v1/runners)
	check "runners: GET /v1/runners with the metrics key lists the three, up, with their free memory" \
		"$c $(rs_json "sorted((r['name'], r['state'], r['memory_mb_free'], r['draining']) for r in d['runners'])")" \
		"200 [('$ra', 'up', 2048, False), ('$rb', 'up', 1024, False), ('$rc', 'up', 1024, False)]"
	check "runners: the metrics key sees each runner's address, sandboxes and free slots" \
		"$(rs_json "sorted((r['address'].startswith('unix:$T/r'), r['sandboxes'], r['slots_free'] >= 0) for r in d['runners'])")" \
		"[(True, 0, True), (True, 0, True), (True, 0, True)]"
	# an API key is one tenant: where the runners are and what they hold is
	# not its business, only what placement errors say (name and state)
	c=$(rs_code -H "$A" $ua/v1/runners)
	check "runners: an API key sees each runner's name, state and draining only" \
		"$c $(rs_json "sorted((r['name'], r['state'], r['draining']) for r in d['runners']), sorted(set(k for r in d['runners'] for k in r))")" \
		"200 ([('$ra', 'up', False), ('$rb', 'up', False), ('$rc', 'up', False)], ['draining', 'name', 'state'])"
	check "runners: no socket path, address, count or memory in an API key's view" \
		"$(grep -cE "$T|sandboxes|memory|slots|load1|address" "$T/body")" 0
	check "runners: GET /v1/runners needs a key" "$(rs_code $ua/v1/runners)" 401
	check "runners: a wrong metrics key is no key" "$(rs_code -H 'Authorization: Bearer metrics-keyX' $ua/v1/runners)" 401
	check "runners: two addresses of one runner: one of them is refused, saying whose the name is" \
		"$(rs_code -H "$OP" $ub/v1/runners) $(rs_json "sorted((r['state'], 'is already' in r.get('reason', '')) for r in d['runners'] if r['address'].startswith('unix:$T/ra'))")" \
		"200 [('refused', True), ('up', False)]"
	check "runners: /v1/capabilities is the union (jail available)" \
		"$(rs_code -H "$A" $ua/v1/capabilities) $(rs_json "[x['available'] for x in d['isolation'] if x['name']=='jail']")" "200 [True]"
	check "runners: /metrics counts the runners by state" \
		"$(curl -s -m 10 -H 'Authorization: Bearer metrics-key' $ua/metrics | grep -c "^sandbox_gateway_runners{state=\"up\"} 3$")" 1

	# placement by free memory: a (2048) twice, then the emptier of b and c
	# (tie on memory: fewer sandboxes, then table order), then c
	got=
	ids=()
	for i in 1 2 3 4; do
		curl -s -m 5 -H "$OP" $ua/v1/runners >>"$T/rs.placement" 2>&1; echo >>"$T/rs.placement"
		c=$(rs_code -H "$A" -d '{"timeout_ms":300000}' $ua/v1/sandboxes)
		id=$(rs_json "d['id']")
		[ "$c" = 201 ] && [ -n "$id" ] || { fail "runners: create $i: $c $(cat "$T/body")"; return; }
		ids+=("$id")
		got="$got $(rs_runner_of "$id")"
	done
	check "runners: creates go to the runner with the most free memory (a a b c)" "$got" " $ra $ra $rb $rc"
	[ "$got" = " $ra $ra $rb $rc" ] ||
		python3 -c 'import json,sys
for l in open(sys.argv[1]):
    l = l.strip()
    if l: print("  runners seen:", [(r["name"], r["state"], r["memory_mb_free"], r["sandboxes"]) for r in json.loads(l)["runners"]])' "$T/rs.placement"
	# one sandbox on each runner, whatever the placement check above said
	local sa= sb= sc=
	for id in "${ids[@]}"; do
		case $(rs_runner_of "$id") in
		"$ra") sa=${sa:-$id} ;; "$rb") sb=${sb:-$id} ;; "$rc") sc=${sc:-$id} ;;
		esac
	done
	[ -n "$sa" ] && [ -n "$sb" ] && [ -n "$sc" ] || { fail "runners: the creates did not reach all three runners"; return; }

	# routing by id: each sandbox is reached on its own runner
	for id in "$sa" "$sb" "$sc"; do
		c=$(rs_code -H "$A" -d '{"cmd":"sh","args":["-c","echo $((6*7))"],"wait":true}' $ua/v1/sandboxes/$id/commands)
		check "runners: exec on a sandbox of $(rs_runner_of $id) through gateway A" "$c $(rs_json "d['stdout']")" "200 42"
	done

	# a sandbox made through A, used through B (same keys file): B asks its
	# runner whose it is and adopts it
	check "runners: gateway B gets a sandbox made through A" "$(rs_code -H "$A" $ub/v1/sandboxes/$sc) $(rs_json "d['id']")" "200 $sc"
	check "runners: gateway B: another key of the file still gets 404" \
		"$(rs_code -H 'Authorization: Bearer key-two' $ub/v1/sandboxes/$sb)" 404
	printf 'across gateways\n' >"$T/rs.f"
	check "runners: PUT a file through B into a sandbox B never saw before" \
		"$(rs_code -H "$A" --data-binary @"$T/rs.f" -X PUT "$ub/v1/sandboxes/$sb/files?path=x.txt")" 200
	check "runners: and read it back through A" "$(curl -s -m 10 -H "$A" "$ua/v1/sandboxes/$sb/files?path=x.txt")" "across gateways"
	c=$(rs_code -H "$A" -d '{"cmd":"sh","args":["-c","echo one; sleep 0.5; echo two"],"detached":true}' $ua/v1/sandboxes/$sa/commands)
	local cid; cid=$(rs_json "d['id']")
	if [ -d node_modules/ws ]; then
		# a stream through B of a sandbox B has not seen yet (the upgrade
		# waits for the owner lookup)
		check "runners: a WebSocket stream through B of a command started through A" \
			"$(rs_ws_stdout $ub "$sa" "$cid")" "$(printf 'one\ntwo')|1000"
	else
		fail "runners: node_modules/ws missing (make node-deps)"
	fi
	check "runners: logs through B" "$(curl -s -m 10 -H "$A" "$ub/v1/sandboxes/$sa/commands/$cid/logs?follow=1" | python3 -c 'import json,sys;print("".join(json.loads(l).get("data","") for l in sys.stdin).split())')" "['one', 'two']"
	# a preview of a sandbox on runner c through both gateways
	c=$(rs_code -H "$A" -d '{"timeout_ms":300000,"ports":[8000]}' $ua/v1/sandboxes)
	local sp; sp=$(rs_json "d['id']")
	ids+=("$sp")
	rs_code -H "$A" -d '{"cmd":"python3","args":["-m","http.server","8000","--bind","127.0.0.1"],"detached":true}' $ua/v1/sandboxes/$sp/commands >/dev/null
	got=
	for _ in $(seq 100); do
		got=$(curl -s -m 5 -o /dev/null -w '%{http_code}' -H "Host: 8000-$sp.localhost:$pb" $ub/ 2>/dev/null)
		[ "$got" = 200 ] && break
		sleep 0.1
	done
	check "runners: a preview through B of a sandbox made through A ($(rs_runner_of $sp))" "$got" 200
	check "runners: the same preview through A" \
		"$(curl -s -m 5 -o /dev/null -w '%{http_code}' -H "Host: 8000-$sp.localhost:$pa" $ua/)" 200

	# an MCP tool call through B on a sandbox made through A after B last
	# listed: looked up on its runner first, as REST calls are
	c=$(rs_code -H "$A" -d '{"timeout_ms":300000,"memory_mb":256}' $ua/v1/sandboxes)
	local sm; sm=$(rs_json "d['id']")
	ids+=("$sm")
	curl -s -m 20 -D "$T/mcp.h" -o /dev/null -H "$A" -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' \
		-d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"runners.sh","version":"1"}}}' $ub/mcp
	local msid; msid=$(sed -n 's/^mcp-session-id: *//Ip' "$T/mcp.h" | tr -d '\r')
	rs_code -H "$A" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		-H "Mcp-Session-Id: $msid" -H 'MCP-Protocol-Version: 2025-06-18' \
		-d '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_command","arguments":{"sandbox_id":"'"$sm"'","cmd":"echo","args":["via mcp"]}}}' $ub/mcp >/dev/null
	check "runners: an MCP tool call through B on a sandbox made through A" \
		"$(rs_json "d['result'].get('isError', False), d['result']['structuredContent']['stdout']")" "(False, 'via mcp\\n')"

	# list across runners, on both gateways
	check "runners: list on A has the six sandboxes, no runner missing" \
		"$(rs_code -H "$A" $ua/v1/sandboxes) $(rs_json "len(d['sandboxes']), d['unavailable_runners']")" "200 (6, [])"
	check "runners: list on B has them too" \
		"$(rs_code -H "$A" $ub/v1/sandboxes) $(rs_json "sorted(s['id'] for s in d['sandboxes']) == sorted('${ids[*]}'.split())")" "200 True"

	# ids naming no runner, made-up ids on a real runner
	check "runners: an id naming no runner is 404 at once" \
		"$(rs_code -H "$A" $ua/v1/sandboxes/sbx_nosuchrunner_aaaaaaaaaaaaaaaaaaaaaaaa) $(rs_json "d['error']['code']")" "404 not_found"
	check "runners: a made-up id on a real runner is 404 (with a body sent)" \
		"$(rs_code -H "$A" -d '{"cmd":"true"}' $ub/v1/sandboxes/sbx_${rb}_aaaaaaaaaaaaaaaaaaaaaaaa/commands) $(rs_json "d['error']['code']")" "404 not_found"
	n=0
	for i in $(seq 40); do
		[ "$(curl -s -m 5 -o /dev/null -w '%{http_code}' -H "$A" $ub/v1/sandboxes/sbx_${ra}_$(printf 'z%023d' $i))" = 404 ] && n=$((n + 1))
	done
	check "runners: 40 made-up ids on a real runner: 40 answers 404, B still well" "$n $(rs_code $ub/healthz)" "40 200"

	# placement refusals
	check "runners: an isolation no runner knows: 422 unknown_isolation" \
		"$(rs_code -H "$A" -d '{"isolation":"nosuch"}' $ua/v1/sandboxes) $(rs_json "d['error']['code']")" "422 unknown_isolation"
	c=$(rs_code -H "$A" -d '{"memory_mb":4096}' $ua/v1/sandboxes)
	check "runners: no runner with room: 503 no_capacity naming each runner's reason" \
		"$c $(rs_json "d['error']['code'], all(n in d['error']['message'] for n in ['$ra','$rb','$rc']), 'asked' in d['error']['message']")" \
		"503 ('no_capacity', True, True)"

	# drain: runner c takes no creates while draining
	bin/sandbox-runner ctl drain --socket "$T/rc.sock" >/dev/null 2>&1
	rs_wait_runner $ua "$rc" "r[0]['draining']" 50 && pass "runners: a drained runner shows draining in /v1/runners" ||
		fail "runners: a drained runner shows draining in /v1/runners: $(cat "$T/runners.json")"
	got=
	for i in 1 2; do
		rs_code -H "$A" -d '{"timeout_ms":300000,"memory_mb":256}' $ua/v1/sandboxes >/dev/null
		id=$(rs_json "d['id']")
		ids+=("$id")
		got="$got $(rs_runner_of "$id")"
	done
	check "runners: no create goes to the draining runner" "$(echo "$got" | grep -c "$rc")" 0
	bin/sandbox-runner ctl undrain --socket "$T/rc.sock" >/dev/null 2>&1

	# kill -9 of runner b: its sandboxes 503 runner_unavailable at once,
	# the others keep working
	kill -9 $rbpid; wait $rbpid 2>/dev/null
	c=$(rs_code -H "$A" $ua/v1/sandboxes/$sb)
	check "runners: kill -9 of runner b: its sandbox answers 503 runner_unavailable at once" \
		"$c $(rs_json "d['error']['code'], 'runner $rb is not answering' in d['error']['message']")" "503 ('runner_unavailable', True)"
	check "runners: and exec on it too" \
		"$(rs_code -H "$A" -d '{"cmd":"true","wait":true}' $ua/v1/sandboxes/$sb/commands) $(rs_json "d['error']['code']")" "503 runner_unavailable"
	got=
	for _ in $(seq 30); do   # B's probe notices within 1.5 s (GW_PROBE_TIMEOUT_MS)
		got=$(rs_code -H "$A" $ub/v1/sandboxes/$sb)
		[ "$got" = 503 ] && break
		sleep 0.1
	done
	check "runners: B answers 503 for it as well" "$got $(rs_json "d['error']['code']")" "503 runner_unavailable"
	check "runners: a sandbox of runner a still works" \
		"$(rs_code -H "$A" -d '{"cmd":"echo","args":["fine"],"wait":true}' $ua/v1/sandboxes/$sa/commands) $(rs_json "d['stdout']")" "200 fine"
	check "runners: list names the runner that is down" \
		"$(rs_code -H "$A" $ua/v1/sandboxes) $(rs_json "d['unavailable_runners'], any(s['id']=='$sa' for s in d['sandboxes'])")" "200 (['$rb'], True)"
	check "runners: /v1/runners shows it down with the reason (metrics key)" \
		"$(rs_code -H "$OP" $ua/v1/runners) $(rs_json "[(r['state'], bool(r['reason'])) for r in d['runners'] if r['name']=='$rb']")" "200 [('down', True)]"
	c=$(rs_code -H "$A" -d '{"timeout_ms":300000,"memory_mb":256}' $ua/v1/sandboxes)
	id=$(rs_json "d['id']")
	ids+=("$id")
	check "runners: creates go on, elsewhere" "$c $( [ "$(rs_runner_of "$id")" != "$rb" ] && echo elsewhere)" "201 elsewhere"

	# its return: up again; its old sandbox was lost with it
	start_runner "$rb" "$T/rb.sock" "$T/rbstate" --max-memory-mb 1024 || fail "runners: runner b did not start again"
	rs_wait_runner $ua "$rb" "r[0]['state']=='up'" 100 && pass "runners: runner b is up again after its restart" ||
		fail "runners: runner b is up again after its restart: $(cat "$T/runners.json")"
	c=$(rs_code -H "$A" $ua/v1/sandboxes/$sb)
	check "runners: its old sandbox says it was lost to the restart" \
		"$c $(rs_json "d['status'], d.get('stop_reason')")" "200 ('failed', 'runner_restart')"
	grep -q "runner $rb restarted: its earlier sandboxes are gone" "$T/gw.rsa.log" &&
		pass "runners: the gateway logged the runner's new instance" || fail "runners: the gateway logged the runner's new instance"

	# stopped through B; A sees it stopped
	check "runners: DELETE through B of a sandbox made through A" "$(rs_code -H "$A" -X DELETE $ub/v1/sandboxes/$sc)" 200
	check "runners: A sees it stopped" "$(rs_code -H "$A" $ua/v1/sandboxes/$sc) $(rs_json "d['status']")" "200 stopped"

	for id in "${ids[@]}"; do curl -s -m 10 -o /dev/null -H "$A" -X DELETE $ua/v1/sandboxes/$id; done
	GW_PID=$gwbpid GW_LOG=$T/gw.rsb.log stop_gateway_checked
	GW_PID=$gwa GW_LOG=$T/gw.rsa.log stop_gateway_checked
}

# The status probe tells a busy runner from a dead one: a runner that
# answers other requests but not its status stays up (a burst of 1000
# stream connects had a real runner answer its status late, and every
# sandbox of it answered 503 for a while); one that answers nothing is
# down after two statuses unanswered. The runner is a mock
# (mock_busy_runner.py): a real one cannot be made to answer its status
# late on demand.
suite_runner_busy() { # gateway-bin
	local gwb=$1 name="busy$$" port ops=$T/busy.ops held i end down=0
	local A='Authorization: Bearer key-one'
	RS_A=$A
	python3 tests/gateway/mock_busy_runner.py "$T/busy.sock" "$name" "$ops" >"$T/busy.out" 2>&1 &
	local mpid=$!
	h_track $mpid
	for _ in $(seq 100); do grep -q listening "$T/busy.out" && break; sleep 0.1; done
	port=$(rs_free_port)
	SANDBOX_API_KEYS=key-one start_gateway "$gwb" "$port" "$T/gw.busy.log" --runners "unix:$T/busy.sock"
	local gw=$GW_PID u=http://127.0.0.1:$port
	rs_wait_runner "$u" "$name" "r[0]['state'] == 'up'" 100 ||
		fail "busy runner: up at first: $(cat "$T/runners.json")"
	# lists back to back (each one a `list` the mock answers) while the
	# probe's statuses go unanswered: at least two of them time out
	end=$((SECONDS + 7))
	while [ $SECONDS -lt $end ]; do
		curl -s -m 10 -H "$A" "$u/v1/sandboxes" >"$T/busy.list"
		grep -q "\"$name\"" "$T/busy.list" && down=$((down + 1))
	done
	held=$(grep -c '^status held$' "$ops")
	check "busy runner: while it answers lists, its unanswered statuses ($held) leave it up" \
		"$([ "$held" -ge 2 ] && echo many) $down $(grep -c "runner $name .* is down" "$T/gw.busy.log")" "many 0 0"
	# nothing more to answer: down after two unanswered statuses in a row
	rs_wait_runner "$u" "$name" "r[0]['state'] == 'down'" 200 &&
		pass "busy runner: answering nothing, it is marked down" ||
		fail "busy runner: answering nothing, it is marked down: $(cat "$T/runners.json")"
	grep -q "runner $name .* is down: no status reply in 1500 ms, twice running" "$T/gw.busy.log" &&
		pass "busy runner: the log says why (no status reply, twice running)" ||
		fail "busy runner: the log says why: $(grep "$name" "$T/gw.busy.log" | tail -3)"
	GW_PID=$gw GW_LOG=$T/gw.busy.log stop_gateway_checked
	kill $mpid 2>/dev/null; wait $mpid 2>/dev/null
	rm -f "$T/busy.sock"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then   # on its own
	. "$(dirname "$0")/../lib/harness.sh"
	h_begin gw-runners
	why=$(h_services_missing)
	[ -z "$why" ] || h_skip_suite "runners: $why"
	gwb=${GWB:-build/asan/bin/sandbox-gateway}; [ -x $gwb ] || gwb=bin/sandbox-gateway
	suite_runners $gwb
	suite_runner_busy $gwb
	h_finish
fi
