#!/bin/bash
# Snapshots, forks, pause and resume (docs/api.md "Snapshots", docs/runner.md):
# a real runner (jail; gvisor in its pass) behind the ASan gateway, driven with curl. Every check
# reads values (files, JSON members, what is on the host's disk and in its
# cgroups and mounts), never a duration. Ends with "N passed, N failed, N skipped".
. "$(dirname "$0")/../lib/harness.sh"

if [ -n "$(h_services_missing)" ]; then
	h_skip_suite "snapshots suite: needs root, bin/sandbox-runner and $IMG/default/rootfs"
fi
h_begin snap-test

RN=snap$$
SANDBOX_API_KEYS=key-one,key-two start_services "$RN" --max-sandboxes-per-key 12 ||
	h_abort "gateway did not start"
U=$GW_URL/v1
A='Authorization: Bearer key-one'
B='Authorization: Bearer key-two'
SNAPS=$T/state/snapshots
SECRET=s3cr3t-$RANDOM$RANDOM

# api METHOD PATH [BODY] [AUTH]: the status; the body in $T/body
api() {
	local m=$1 p=$2 d=${3-} k=${4:-$A}
	if [ -n "$d" ]; then
		curl -s -m 120 -o "$T/body" -w '%{http_code}' -X "$m" -H "$k" -d "$d" "$U$p"
	else
		curl -s -m 120 -o "$T/body" -w '%{http_code}' -X "$m" -H "$k" "$U$p"
	fi
}
# j EXPR: a Python expression on the last body (o)
j() { python3 -c "import json,sys;o=json.load(open(sys.argv[1]));print($1)" "$T/body" 2>/dev/null; }
# run ID SHELL-LINE: its stdout (a waited command)
run() {
	local d
	d=$(python3 -c 'import json,sys;print(json.dumps({"cmd":"sh","args":["-c",sys.argv[1]]}))' "$2")
	api POST "/sandboxes/$1/commands" "$d" >/dev/null
	j 'o.get("stdout","")+o.get("error",{}).get("code","")'
}
# the isolation of this pass's sandboxes (tests/run.sh DRIVER_SUITES)
ISO=${SANDBOX_TEST_ISOLATION:-jail}
create() { # [BODY]: the new sandbox's id, of isolation $ISO unless BODY says
	api POST /sandboxes "$(python3 -c 'import json,sys;o=json.loads(sys.argv[1]);o.setdefault("isolation",sys.argv[2]);print(json.dumps(o))' "${1:-{\}}" "$ISO")" >/dev/null
	j 'o["id"]'
}

# streams_at_pause ID WHO: a command's stream and a terminal open at pause
# end with the error `paused` and close 4409; after resume a new stream
# attaches. Pauses and resumes ID.
streams_at_pause() {
	local id=$1 who=$2 cid p1 p2 p3 ok=
	api POST "/sandboxes/$id/commands" '{"cmd":"sh","args":["-c","while :; do echo tick; sleep 0.2; done"],"detached":true}' >/dev/null
	cid=$(j 'o["id"]')
	rm -f "$T/ready1" "$T/ready2" "$T/ready3"
	python3 "$(dirname "$0")/ws_end.py" "$GW_PORT" "/v1/sandboxes/$id/commands/$cid/stream?since=0" key-one "$T/ready1" >"$T/ws1" &
	p1=$!
	python3 "$(dirname "$0")/ws_end.py" "$GW_PORT" "/v1/sandboxes/$id/pty?cmd=sh&cols=80&rows=24" key-one "$T/ready2" >"$T/ws2" &
	p2=$!
	for _ in $(seq 300); do [ -e "$T/ready1" ] && [ -e "$T/ready2" ] && { ok=1; break; }; sleep 0.1; done
	check "$who streams: a stream and a terminal are live before the pause" "$ok" 1
	api POST "/sandboxes/$id/pause" >/dev/null
	wait "$p1" "$p2"
	check "$who streams: the stream open at pause ends with the error paused, close 4409" "$(cat "$T/ws1")" "paused 4409"
	check "$who streams: the terminal open at pause ends with the error paused, close 4409" "$(cat "$T/ws2")" "paused 4409"
	api POST "/sandboxes/$id/resume" >/dev/null
	python3 "$(dirname "$0")/ws_end.py" "$GW_PORT" "/v1/sandboxes/$id/commands/$cid/stream?since=0" key-one "$T/ready3" >"$T/ws3" &
	p3=$!
	ok=
	for _ in $(seq 300); do [ -e "$T/ready3" ] && { ok=1; break; }; sleep 0.1; done
	kill "$p3" 2>/dev/null
	wait "$p3" 2>/dev/null
	check "$who streams: a new stream attaches after resume" "$ok" 1
}

# The gvisor pass (tests/run.sh DRIVER_SUITES): the snapshot checks under
# gvisor, then its own pause checks
if [ "$ISO" = gvisor ]; then
	if [ "$(api GET /capabilities; j '[i["available"] for i in o["isolation"] if i["name"] == "gvisor"]')" = "200[True]" ]; then
		. "$(dirname "$0")/snapshot_checks.sh"
		. "$(dirname "$0")/gvisor.sh"
	else
		skip "gvisor snapshots and pause: gvisor is not available here"
	fi
	stop_gateway_checked
	h_finish
	exit
fi

. "$(dirname "$0")/snapshot_checks.sh"

# ---- pause and resume: a counter that appends to a file ----
api POST "/sandboxes/$SRC/commands" '{"cmd":"sh","args":["-c","i=0; while :; do i=$((i+1)); echo $i >> /tmp/count; sleep 0.02; done"],"detached":true}' >/dev/null
COUNT=$T/state/sandboxes/$SRC/rw/upper/tmp/count
for _ in $(seq 100); do [ "$(wc -l <"$COUNT" 2>/dev/null || echo 0)" -ge 3 ] && break; sleep 0.1; done
api GET "/sandboxes/$SRC" >/dev/null
exp_before=$(j 'o["expires_at"]')
check "pause: 200, status paused" "$(api POST "/sandboxes/$SRC/pause"; j 'o["status"]')" "200paused"
c1=$(tail -1 "$COUNT")
sleep 1.5
c2=$(tail -1 "$COUNT")
check "pause: the counter does not move while paused" "$c2" "$c1"
check "pause: listed as paused" "$(api GET /sandboxes; j '[s["status"] for s in o["sandboxes"] if s["id"] == "'$SRC'"]')" "200['paused']"
check "pause: a command is 409 paused" "$(api POST "/sandboxes/$SRC/commands" '{"cmd":"true"}'; j 'o["error"]["code"]')" 409paused
check "pause: a preview is 409, saying paused" \
	"$(curl -s -m 20 -o "$T/pv" -w '%{http_code}' -H "Host: 3000-$SRC.localhost" "$GW_URL/"; grep -c paused "$T/pv")" 4091
check "pause: a file read is 409 paused" "$(api GET "/sandboxes/$SRC/files?path=notes.txt"; j 'o["error"]["code"]')" 409paused
check "pause: a snapshot of a paused sandbox works" "$(api POST "/sandboxes/$SRC/snapshots" '{}')" 201
api DELETE "/snapshots/$(j 'o["id"]')" >/dev/null
check "pause: twice is no error" "$(api POST "/sandboxes/$SRC/pause")" 200
check "resume: 200, status running" "$(api POST "/sandboxes/$SRC/resume"; j 'o["status"]')" "200running"
check "resume: the timeout clock stood still while paused (expires_at moved by at least the pause)" \
	"$(j "o['expires_at'] - $exp_before >= 1500")" True
for _ in $(seq 200); do [ "$(tail -1 "$COUNT")" -gt $((c2 + 3)) ] && break; sleep 0.1; done
check "resume: the counter continues from where it stood (one process, no gap, no restart)" \
	"$(python3 -c 'import sys;v=[int(x) for x in open(sys.argv[1]).read().split()];print(v==list(range(1,len(v)+1)) and len(v)>int(sys.argv[2]))' "$COUNT" "$c2")" True
check "resume: commands run again" "$(run "$SRC" 'echo ok')" ok
check "resume of a running sandbox: no error" "$(api POST "/sandboxes/$SRC/resume")" 200

streams_at_pause "$SRC" jail

# ---- a paused sandbox stopped: killed (a frozen task takes SIGKILL only once thawed), nothing left ----
P=$(create '{"memory_mb":64}')
api POST "/sandboxes/$P/commands" '{"cmd":"sleep","args":["600"],"detached":true}' >/dev/null
api POST "/sandboxes/$P/pause" >/dev/null
check "delete paused: stopped" "$(api DELETE "/sandboxes/$P"; j 'o["status"]')" 200stopped
left=0
for h in /sys/fs/cgroup/*/sandbox/$P /sys/fs/cgroup/sandbox/$P; do [ -e "$h" ] && left=$((left + 1)); done
grep -q "$P" /proc/mounts && left=$((left + 1))
check "delete paused: no cgroup or mount left" "$left" 0

# ---- persistent sandboxes (PS is left kept for the restart below) ----
. "$(dirname "$0")/persistent.sh"
. "$(dirname "$0")/resume.sh"

# ---- a runner restart: a paused jail sandbox is lost, snapshots are not ----, a kept persistent one neither
api POST "/sandboxes/$SRC/snapshots" '{}' >/dev/null
KEEP=$(j 'o["id"]')
api POST "/sandboxes/$SRC/pause" >/dev/null
kill -9 "$RUNNER_PID"
wait "$RUNNER_PID" 2>/dev/null
rm -f "$T/runner.sock"
# the gateway sees the runner down before it comes back (its status probe)
down=
for _ in $(seq 150); do
	[ "$(api GET /runners; j '[r["state"] for r in o["runners"]]')" = "200['down']" ] && { down=1; break; }
	sleep 0.2
done
check "restart: the gateway saw the runner down" "$down" 1
# a small store for what follows: 1 MiB
start_runner "$RN" "$T/runner.sock" "$T/state" --max-snapshot-mb 1 || h_abort "runner did not restart"
# at once, before the gateway's next status probe: the create asks the
# runner it believed down again, rather than refusing the isolation
check "restart: a create at once is placed on the restarted runner (201, not 422 isolation_unavailable)" \
	"$(api POST /sandboxes "{\"isolation\":\"$ISO\",\"memory_mb\":64}"; j 'o.get("status", o.get("error"))')" 201running
api DELETE "/sandboxes/$(j 'o["id"]')" >/dev/null
ok=
for _ in $(seq 100); do [ "$(api GET "/sandboxes/$SRC")" = 200 ] && { ok=1; break; }; sleep 0.2; done
check "restart: the paused sandbox is lost with the runner, said as runner_restart" \
	"$(j 'o["status"], o.get("stop_reason")')" "failed runner_restart"
left=0
for h in /sys/fs/cgroup/*/sandbox/$SRC /sys/fs/cgroup/sandbox/$SRC; do [ -e "$h" ] && left=1; done
check "restart: no frozen cgroup left of it" "$left" 0
check "restart: the snapshot survives" "$(api GET "/snapshots/$KEEP")" 200
R2=$(create "{\"source\":{\"snapshot\":\"$KEEP\"}}")
check "restart: a sandbox from the kept snapshot has its files" "$(run "$R2" 'cat notes.txt')" after
check "restart: the kept persistent sandbox is still stopped and resumable" \
	"$(api GET "/sandboxes/$PS"; j 'o["status"], o["resumable"], o["persistent"]')" "200stopped True True"
check "restart: a command resumes it under its id, with its files" \
	"$(apih POST "/sandboxes/$PS/commands" '{"cmd":"cat","args":["kept.txt","second.txt"]}'; j 'o["stdout"]'; hdr x-sandbox-resumed)" "200kept
second

1"
check "persistent delete: ends it for good" "$(api DELETE "/sandboxes/$PS"; j 'o["status"], o["resumable"]')" "200stopped False"
gone=0
for _ in $(seq 100); do [ "$(disk_of "$PS")" = 0 ] && [ ! -e "$T/state/persistent/$PS.json" ] && { gone=1; break; }; sleep 0.2; done
check "persistent delete: its kept snapshots and record leave the disk" "$gone" 1
check "persistent delete: nothing else left of it" "$(left_of "$PS")" 0
check "persistent delete: a command no longer resumes it (409 conflict)" \
	"$(api POST "/sandboxes/$PS/commands" '{"cmd":"true"}'; j 'o["error"]["code"]')" 409conflict

# ---- the store cap: 507 ----
run "$R2" 'head -c 3000000 /dev/urandom > big.bin' >/dev/null
check "store full: 507 insufficient_storage" "$(api POST "/sandboxes/$R2/snapshots" '{}'; j 'o["error"]["code"]')" 507insufficient_storage
check "store full: nothing of the refused copy on disk" "$(ls "$SNAPS" | wc -l)" 1
api DELETE "/sandboxes/$R2" >/dev/null
api DELETE "/snapshots/$KEEP" >/dev/null
gone=0
for _ in $(seq 100); do [ -z "$(ls "$SNAPS")" ] && { gone=1; break; }; sleep 0.2; done
check "the end: the snapshot store is empty" "$gone" 1

stop_gateway_checked
h_finish
