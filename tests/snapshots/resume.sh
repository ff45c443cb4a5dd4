# A kept persistent sandbox is resumed by every call on it, not only by
# commands, files and streams (docs/api.md "Persistent sandboxes"): extend,
# a network policy, a snapshot and a preview bring it back first; and a
# resume (explicit or automatic) passes the key's sandbox limit as a create
# does. Sourced by run.sh after persistent.sh, with its services and helpers
# (api, apih, hdr, j, run, create, kept_of, disk_of).

# keep ID: stop it (kept), 1 when it reads stopped and resumable
keep() { api POST "/sandboxes/$1/stop" >/dev/null; [ "$(j 'o["status"], o["resumable"]')" = "stopped True" ] && echo 1; }

PR=$(create '{"persistent":true,"timeout_ms":600000,"memory_mb":64,"ports":[3000],"network":{"allow":[]}}')
run "$PR" 'echo kept > k.txt' >/dev/null
check "auto-resume: kept by a stop" "$(keep "$PR")" 1
check "auto-resume: extend resumes it first (200 running, X-Sandbox-Resumed: 1)" \
	"$(apih POST "/sandboxes/$PR/extend" '{"duration_ms":1000}'; j 'o["status"]'; hdr x-sandbox-resumed)" "200running
1"
check "auto-resume: ... its files are there" "$(run "$PR" 'cat k.txt')" kept
check "auto-resume: kept again" "$(keep "$PR")" 1
check "auto-resume: a network policy resumes it first and is in force" \
	"$(apih PATCH "/sandboxes/$PR/network" '{"network":{"allow":["example.com"]}}'; j 'o["status"], o["network"]["allow"]'; hdr x-sandbox-resumed)" "200running ['example.com']
1"
check "auto-resume: kept again" "$(keep "$PR")" 1
check "auto-resume: a snapshot resumes it first, then holds its files (201)" \
	"$(apih POST "/sandboxes/$PR/snapshots" '{}'; j 'o["sandbox_id"]'; hdr x-sandbox-resumed)" "201$PR
1"
PRS=$(j 'o["id"]')
R3=$(create "{\"source\":{\"snapshot\":\"$PRS\"},\"memory_mb\":64}")
check "auto-resume: ... a sandbox from that snapshot has the kept file" "$(run "$R3" 'cat k.txt')" kept
api DELETE "/sandboxes/$R3" >/dev/null
api DELETE "/snapshots/$PRS" >/dev/null
check "auto-resume: kept again" "$(keep "$PR")" 1
check "auto-resume: a fork resumes it first, then forks it (201, X-Sandbox-Resumed: 1)" \
	"$(apih POST "/sandboxes/$PR/fork" '{"count":2}'; j 'len(o["sandboxes"]) == 2 and o["snapshot"]["sandbox_id"] == "'"$PR"'"'; hdr x-sandbox-resumed)" "201True
1"
PF1=$(j 'o["sandboxes"][0]["id"]') PF2=$(j 'o["sandboxes"][1]["id"]') PFS=$(j 'o["snapshot"]["id"]')
check "auto-resume: ... each fork has the kept file" "$(run "$PF1" 'cat k.txt') $(run "$PF2" 'cat k.txt')" "kept kept"
check "auto-resume: ... and the source runs again" "$(api GET "/sandboxes/$PR"; j 'o["status"]')" 200running
api DELETE "/sandboxes/$PF1" >/dev/null
api DELETE "/sandboxes/$PF2" >/dev/null
api DELETE "/snapshots/$PFS" >/dev/null
check "auto-resume: kept again" "$(keep "$PR")" 1
# a jail sandbox comes back from its files without its processes: the
# preview finds it running and nothing listening yet (502), not 404
check "auto-resume: a preview resumes it (502: it runs, nothing listens on the port yet)" \
	"$(curl -s -m 120 -o "$T/pv" -w '%{http_code}' -H "Host: 3000-$PR.localhost" "$GW_URL/"; grep -c 'Nothing is listening' "$T/pv")" 5021
check "auto-resume: ... and it runs again" "$(api GET "/sandboxes/$PR"; j 'o["status"]')" 200running
run "$PR" 'nohup python3 -m http.server 3000 >/dev/null 2>&1 & sleep 0' >/dev/null
served=
for _ in $(seq 100); do
	served=$(curl -s -m 20 -o /dev/null -w '%{http_code}' -H "Host: 3000-$PR.localhost" "$GW_URL/k.txt")
	[ "$served" = 200 ] && break
	sleep 0.2
done
check "auto-resume: then the preview serves it" "$served" 200
api DELETE "/sandboxes/$PR" >/dev/null

# ---- the key's sandbox limit: a second gateway on the same runner, one
# sandbox a key ----
GW_MAIN_PID=$GW_PID GW_MAIN_LOG=$GW_LOG
limited_gateway() { # KEY LIMIT LOG: another gateway on the same runner, KEY's
	# sandbox limit LIMIT, on a free port (up to three tries: one may be
	# taken); sets GW_LOG and LIM_PORT ("" when it did not start)
	GW_LOG=$3 LIM_PORT=
	for _ in 1 2 3; do
		LIM_PORT=$(random_port)
		SANDBOX_API_KEYS=$1 start_gateway "$GW" "$LIM_PORT" "$GW_LOG" --runner-socket "$T/runner.sock" \
			--max-sandboxes-per-key "$2" && return
		LIM_PORT=
	done
}
limited_gateway key-limit 1 "$T/gateway-limit.log"
QP=$LIM_PORT
if [ -z "$QP" ]; then
	fail "limit: the second gateway did not start: $(tail -3 "$GW_LOG")"
else
	L='Authorization: Bearer key-limit'
	lapi() { # METHOD PATH [BODY]: the status and error code on the limited gateway
		local d=${3-}
		curl -s -m 120 -o "$T/body" -w '%{http_code}' -X "$1" -H "$L" ${d:+-d "$d"} "http://127.0.0.1:$QP/v1$2"
		j 'o.get("error",{}).get("code","")'
	}
	lapi POST /sandboxes '{"persistent":true,"memory_mb":64,"ports":[3000]}' >/dev/null
	Q1=$(j 'o["id"]')
	lapi POST "/sandboxes/$Q1/stop" >/dev/null
	check "limit: a kept sandbox does not count: another create passes" \
		"$(lapi POST /sandboxes '{"memory_mb":64}')" 201
	Q2=$(j 'o["id"]')
	check "limit: at the limit a create is 429 limit_reached" "$(lapi POST /sandboxes '{"memory_mb":64}')" 429limit_reached
	check "limit: a command that would resume the kept one is 429 limit_reached" \
		"$(lapi POST "/sandboxes/$Q1/commands" '{"cmd":"true"}')" 429limit_reached
	check "limit: ... its message is the create's" "$(j 'o["error"]["message"].startswith("this key already has 1 sandboxes")')" True
	check "limit: an explicit resume is 429 limit_reached" "$(lapi POST "/sandboxes/$Q1/resume")" 429limit_reached
	check "limit: extend is 429 limit_reached" "$(lapi POST "/sandboxes/$Q1/extend" '{"duration_ms":1000}')" 429limit_reached
	check "limit: a file read is 429 limit_reached" "$(lapi GET "/sandboxes/$Q1/files?path=x")" 429limit_reached
	check "limit: a preview is 429" \
		"$(curl -s -m 60 -o /dev/null -w '%{http_code}' -H "Host: 3000-$Q1.localhost" "http://127.0.0.1:$QP/")" 429
	check "limit: ... and it stays kept" "$(lapi GET "/sandboxes/$Q1" >/dev/null; j 'o["status"], o["resumable"]')" "stopped True"
	lapi DELETE "/sandboxes/$Q2" >/dev/null
	check "limit: with room again a command resumes it" \
		"$(lapi POST "/sandboxes/$Q1/commands" '{"cmd":"true"}' >/dev/null; j 'o["exit_code"]')" 0
	check "limit: the resumed one counts: a create is 429 limit_reached" "$(lapi POST /sandboxes '{"memory_mb":64}')" 429limit_reached
	lapi DELETE "/sandboxes/$Q1" >/dev/null
	stop_gateway_checked
fi

# ---- resumes racing for the key's last place: a gateway with a limit of
# 2, one sandbox running and two kept, both kept ones resumed at once.
# A resume on its way counts as a create on its way, so exactly one
# passes, whichever the gateway takes first, and 2 run, never 3. ----
limited_gateway key-race 2 "$T/gateway-race.log"
RP=$LIM_PORT
if [ -z "$RP" ]; then
	fail "race: the race gateway did not start: $(tail -3 "$GW_LOG")"
else
	rapi() { # METHOD PATH [BODY] [OUT]: the status; the body in OUT ($T/body)
		local d=${3-}
		curl -s -m 120 -o "${4:-$T/body}" -w '%{http_code}' -X "$1" -H 'Authorization: Bearer key-race' \
			${d:+-d "$d"} "http://127.0.0.1:$RP/v1$2"
	}
	rapi POST /sandboxes '{"memory_mb":64}' >/dev/null
	RR=$(j 'o["id"]')
	rapi POST /sandboxes '{"persistent":true,"memory_mb":64,"ports":[3000]}' >/dev/null
	K1=$(j 'o["id"]')
	rapi POST "/sandboxes/$K1/stop" >/dev/null
	rapi POST /sandboxes '{"persistent":true,"memory_mb":64,"ports":[3000]}' >/dev/null
	K2=$(j 'o["id"]')
	rapi POST "/sandboxes/$K2/stop" >/dev/null
	# race_pair PATH1 BODY1 PATH2 BODY2: both POSTs at once; prints the two
	# answers (status and error code) in order, then how many of the key's
	# sandboxes run; the answers stay in $T/race1 and $T/race2
	race_pair() {
		local p1
		rapi POST "$1" "$2" "$T/race1" >"$T/rs1" &
		p1=$!
		rapi POST "$3" "$4" "$T/race2" >"$T/rs2"
		wait "$p1"
		for n in 1 2; do
			echo "$(cat "$T/rs$n")$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1])).get("error",{}).get("code",""))' "$T/race$n" 2>/dev/null)"
		done | sort | tr '\n' ' '
		rapi GET /sandboxes >/dev/null
		j 'sum(s["status"] == "running" for s in o["sandboxes"])'
	}
	# race TAIL BODY: POST /sandboxes/<kept>TAIL to both kept ones at once
	# (race_pair); both are kept again after
	race() {
		race_pair "/sandboxes/$K1$1" "$2" "/sandboxes/$K2$1" "$2"
		rapi POST "/sandboxes/$K1/stop" >/dev/null
		rapi POST "/sandboxes/$K2/stop" >/dev/null
	}
	check "race: at the start one runs, two are kept" \
		"$(rapi GET /sandboxes >/dev/null; j 'sorted(s["status"] for s in o["sandboxes"])')" "['running', 'stopped', 'stopped']"
	for round in 1 2 3; do
		check "race $round: two explicit resumes at once: one 200, one 429 limit_reached; 2 run" \
			"$(race /resume '')" "200 429limit_reached 2"
	done
	for round in 1 2; do
		check "race $round: two commands that resume at once: one 200, one 429 limit_reached; 2 run" \
			"$(race /commands '{"cmd":"true"}')" "200 429limit_reached 2"
	done
	# a fork's creates count as on their way too: a fork of the running
	# one and a create at once, one place left: exactly one passes,
	# whichever the gateway takes first, and 2 run
	fork_race() {
		race_pair "/sandboxes/$RR/fork" '{"count":1}' /sandboxes '{"memory_mb":64}'
		for id in $(python3 -c 'import json,sys
for p in sys.argv[1:]:
    try:
        o = json.load(open(p))
    except ValueError:
        continue
    for s in o.get("sandboxes", []) + ([o] if "id" in o and "status" in o else []):
        print(s["id"])' "$T/race1" "$T/race2"); do
			rapi DELETE "/sandboxes/$id" >/dev/null
		done
		id=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1])).get("snapshot",{}).get("id",""))' "$T/race1" 2>/dev/null)
		[ -z "$id" ] || rapi DELETE "/snapshots/$id" >/dev/null
	}
	for round in 1 2 3; do
		check "race $round: a fork and a create at once: one 201, one 429 limit_reached; 2 run" \
			"$(fork_race)" "201 429limit_reached 2"
	done
	# another gateway of the same key, whose calls leave this one's count
	# as it is
	RACE_PID=$GW_PID RACE_LOG=$GW_LOG
	GW_LOG=$T/gateway-other.log
	OP=
	for _ in 1 2 3; do
		OP=$(random_port)
		SANDBOX_API_KEYS=key-race start_gateway "$GW" "$OP" "$GW_LOG" --runner-socket "$T/runner.sock" && break
		OP=
	done
	OTHER_PID=$GW_PID
	GW_PID=$RACE_PID GW_LOG=$RACE_LOG
	oapi() { curl -s -m 120 -o "$T/body" -w '%{http_code}' -X "$1" -H 'Authorization: Bearer key-race' "http://127.0.0.1:${OP:-1}/v1$2"; }
	# a resume whose client goes away before the answer: the runner may
	# still bring it back, so it counts from then on (here it does come
	# back, seen through the other gateway)
	curl -s -m 0.2 -o /dev/null -X POST -H 'Authorization: Bearer key-race' "http://127.0.0.1:$RP/v1/sandboxes/$K1/resume"
	back=
	for _ in $(seq 150); do [ "$(oapi GET "/sandboxes/$K1"; j 'o["status"]')" = 200running ] && { back=1; break; }; sleep 0.2; done
	check "race: a resume whose client went away still brought it back" "$back" 1
	check "race: ... it counts: resuming the other kept one is 429 limit_reached" \
		"$(rapi POST "/sandboxes/$K2/resume"; j 'o["error"]["code"]'; rapi GET /sandboxes >/dev/null; j 'sum(s["status"] == "running" for s in o["sandboxes"])')" "429limit_reached
2"
	rapi POST "/sandboxes/$K1/stop" >/dev/null
	# a preview that would resume a kept one at the limit by a stale
	# count: X is stopped through the other gateway, so this one still
	# counts it; the preview asks the runners before refusing
	rapi POST /sandboxes '{"memory_mb":64}' >/dev/null
	X=$(j 'o["id"]')
	check "race: X stopped through the other gateway of the key" "$(oapi DELETE "/sandboxes/$X"; j 'o["status"]')" 200stopped
	if [ -n "$OP" ]; then
		GW_PID=$OTHER_PID GW_LOG=$T/gateway-other.log
		stop_gateway_checked
		GW_PID=$RACE_PID GW_LOG=$RACE_LOG
	fi
	check "race: a preview at the limit by a stale count resumes the kept one (502: it runs, nothing listens yet)" \
		"$(curl -s -m 120 -o "$T/pv" -w '%{http_code}' -H "Host: 3000-$K1.localhost" "http://127.0.0.1:$RP/"; grep -c 'Nothing is listening' "$T/pv")" 5021
	check "race: ... it runs again, and 2 run" \
		"$(rapi GET /sandboxes >/dev/null; j '[s["status"] for s in o["sandboxes"] if s["id"] == "'"$K1"'"], sum(s["status"] == "running" for s in o["sandboxes"])')" "['running'] 2"
	for id in "$RR" "$K1" "$K2"; do rapi DELETE "/sandboxes/$id" >/dev/null; done
	stop_gateway_checked
fi
GW_PID=$GW_MAIN_PID GW_LOG=$GW_MAIN_LOG
