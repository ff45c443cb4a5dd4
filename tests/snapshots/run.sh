#!/bin/bash
# Snapshots, forks, pause and resume (docs/api.md "Snapshots", docs/runner.md):
# a real runner (jail) behind the ASan gateway, driven with curl. Every check
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
create() { # [BODY]: the new sandbox's id
	api POST /sandboxes "${1:-{\}}" >/dev/null
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

# The gvisor pass (tests/run.sh DRIVER_SUITES): its own checks only
if [ "${SANDBOX_TEST_ISOLATION:-jail}" = gvisor ]; then
	if [ "$(api GET /capabilities; j '[i["available"] for i in o["isolation"] if i["name"] == "gvisor"]')" = "200[True]" ]; then
		. "$(dirname "$0")/gvisor.sh"
	else
		skip "gvisor pause: gvisor is not available here"
	fi
	stop_gateway_checked
	h_finish
	exit
fi

# ---- a sandbox with files and an npm package made here ----
SRC=$(create "{\"timeout_ms\":600000,\"ports\":[3000],\"memory_mb\":256,\"env\":{\"TOKEN\":\"$SECRET\"}}")
[ -n "$SRC" ] || h_abort "create: $(cat "$T/body")"
run "$SRC" 'mkdir -p pkg/package app && cd pkg/package &&
	printf "{\"name\":\"snaptest-pkg\",\"version\":\"1.0.0\",\"main\":\"index.js\"}" >package.json &&
	echo "module.exports = 41 + 1;" >index.js && cd .. && tar czf snaptest-pkg-1.0.0.tgz package' >/dev/null
check "npm: the package made by the test installs offline" \
	"$(run "$SRC" 'cd app && npm install --offline --no-audit --no-fund ../pkg/snaptest-pkg-1.0.0.tgz >/dev/null 2>&1; node -e "console.log(require(\"snaptest-pkg\"))"')" 42
run "$SRC" 'echo before > notes.txt; echo gone > doomed.txt' >/dev/null

check "snapshot: 201" "$(api POST "/sandboxes/$SRC/snapshots" '{"expires_in_ms":3600000}')" 201
SNP=$(j 'o["id"]')
check "snapshot: the object (id, sandbox_id, image, size > 0, expires_at after created_at)" \
	"$(j '(o["id"].startswith("snp_'$RN'_"), o["sandbox_id"], o["image"], o["size"] > 0, o["expires_at"] - o["created_at"])')" \
	"(True, '$SRC', 'default', True, 3600000)"
check "snapshot: its layer and meta.json on the runner's disk" \
	"$(ls "$SNAPS/$SNP" 2>/dev/null | tr '\n' ' ')" "layer meta.json "
check "snapshot: env values are in no snapshot metadata" "$(grep -rl "$SECRET" "$SNAPS"/*/meta.json | wc -l)" 0
check "snapshot: no owner tag shown" "$(grep -c owner "$T/body")" 0

run "$SRC" 'echo after > notes.txt; rm doomed.txt; echo leak > later.txt' >/dev/null
NEW=$(create "{\"source\":{\"snapshot\":\"$SNP\"},\"timeout_ms\":600000}")
check "from snapshot: created, source named" "$(j 'o["status"], o["source"]["snapshot"]')" "running $SNP"
check "from snapshot: the npm package is there" \
	"$(run "$NEW" 'cd app && node -e "console.log(require(\"snaptest-pkg\"))"')" 42
check "from snapshot: files as at the snapshot, the source's later writes not there" \
	"$(run "$NEW" 'cat notes.txt doomed.txt; ls later.txt 2>&1 | grep -c "No such"')" "before
gone
1"
check "from snapshot: files owned by the sandbox user" "$(run "$NEW" 'stat -c %U notes.txt app/node_modules/snaptest-pkg/index.js | sort -u')" sandbox
check "from snapshot: without the source's env" "$(run "$NEW" 'echo "[$TOKEN]"')" "[]"
run "$NEW" 'echo mine > notes.txt' >/dev/null
check "from snapshot: its own writes stay its own" "$(run "$SRC" 'cat notes.txt')" after

# ---- a chain: a snapshot of a sandbox made from a snapshot ----
api POST "/sandboxes/$NEW/snapshots" '{}' >/dev/null
SNP2=$(j 'o["id"]')
check "chain: depth 2, parent named" "$(j 'o["depth"], o["parent"]')" "2 $SNP"
NEW2=$(create "{\"source\":{\"snapshot\":\"$SNP2\"}}")
check "chain: both layers show" "$(run "$NEW2" 'cat notes.txt; cd app && node -e "console.log(require(\"snaptest-pkg\"))"')" "mine
42"

# ---- fork x3 ----
check "fork: 201" "$(api POST "/sandboxes/$SRC/fork" '{"count":3}')" 201
FORKS=$(j '" ".join(s["id"] for s in o["sandboxes"])')
check "fork: three sandboxes with the source's settings, without its env" \
	"$(j '[(s["ports"], s["memory_mb"], s["env_names"], s["source"]["snapshot"] == o["snapshot"]["id"]) for s in o["sandboxes"]]')" \
	"[([3000], 256, [], True), ([3000], 256, [], True), ([3000], 256, [], True)]"
for f in $FORKS; do run "$f" "echo $f > who.txt" >/dev/null; done
got=
for f in $FORKS; do got="$got$(run "$f" 'cat who.txt notes.txt | tr "\n" " "')|"; done
want=
for f in $FORKS; do want="$want$f after |"; done
check "fork: each diverges on its own (its own file, the source's state at the fork)" "$got" "$want"
check "fork: the source sees none of them" "$(run "$SRC" 'ls who.txt 2>&1 | grep -c "No such"')" 1
check "fork: count over the limit is refused 422" "$(api POST "/sandboxes/$SRC/fork" '{"count":11}')" 422
for f in $FORKS; do api DELETE "/sandboxes/$f" >/dev/null; done

# ---- another key ----
check "other key: not in its list" "$(api GET /snapshots '' "$B"; j 'len(o["snapshots"])')" "2000"
check "other key: get 404" "$(api GET "/snapshots/$SNP" '' "$B")" 404
check "other key: create from it 404" "$(api POST /sandboxes "{\"source\":{\"snapshot\":\"$SNP\"}}" "$B")" 404
check "other key: delete 404" "$(api DELETE "/snapshots/$SNP" '' "$B")" 404
check "other key: snapshot of another's sandbox 404" "$(api POST "/sandboxes/$SRC/snapshots" '{}' "$B")" 404
check "other key: fork of another's sandbox 404" "$(api POST "/sandboxes/$SRC/fork" '{"count":1}' "$B")" 404
check "other key: pause of another's sandbox 404" "$(api POST "/sandboxes/$SRC/pause" '' "$B")" 404
check "other key: the snapshot is still there for its owner" "$(api GET "/snapshots/$SNP")" 200
check "unknown snapshot 404" "$(api GET /snapshots/snp_${RN}_aaaaaaaaaaaaaaaaaaaaaaaa)" 404
check "a source that is not a snapshot: 422" "$(api POST /sandboxes '{"source":{"image":"x"}}')" 422

# ---- delete while a sandbox runs from it: gone from the API, layer kept until it ends ----
check "delete in use: 200" "$(api DELETE "/snapshots/$SNP")" 200
check "delete in use: gone from the API" "$(api GET "/snapshots/$SNP")" 404
check "delete in use: no new sandbox from it" "$(api POST /sandboxes "{\"source\":{\"snapshot\":\"$SNP\"}}")" 404
check "delete in use: the sandbox on it still reads its files" "$(run "$NEW" 'cd app && node -e "console.log(require(\"snaptest-pkg\"))"')" 42
check "delete in use: its layer stays on disk meanwhile" "$(ls -d "$SNAPS/$SNP" 2>/dev/null | wc -l)" 1
api DELETE "/sandboxes/$NEW" >/dev/null
api DELETE "/sandboxes/$NEW2" >/dev/null
check "delete in use: still kept while snapshot $SNP2 stacks it" "$(ls -d "$SNAPS/$SNP" 2>/dev/null | wc -l)" 1
api DELETE "/snapshots/$SNP2" >/dev/null
gone=0
for _ in $(seq 100); do [ -e "$SNAPS/$SNP" ] || [ -e "$SNAPS/$SNP2" ] || { gone=1; break; }; sleep 0.2; done
check "delete: both layers removed once nothing stacks them" "$gone" 1

# ---- nothing left behind of the sandboxes made from snapshots ----
left=0
for s in $NEW $NEW2 $FORKS; do
	for h in /sys/fs/cgroup/*/sandbox/$s /sys/fs/cgroup/sandbox/$s; do [ -e "$h" ] && left=$((left + 1)); done
	grep -q "$s" /proc/mounts && left=$((left + 1))
	[ -e "$T/state/sandboxes/$s" ] && left=$((left + 1))
done
check "cleanup: no cgroup, mount or dir left of the stopped sandboxes" "$left" 0

# ---- a chain past the depth cap (8 layers) is squashed into one layer ----
snap= made= depths=
for i in 0 1 2 3 4 5 6 7 8; do
	if [ -n "$snap" ]; then S=$(create "{\"source\":{\"snapshot\":\"$snap\"}}"); else S=$(create); fi
	line="echo $i > level$i"
	[ $i = 3 ] && line="$line; rm level1; mkdir d; echo a > d/a"
	[ $i = 5 ] && line="$line; rm -r d; mkdir d; echo b > d/b"
	[ $i = 8 ] && line="$line; rm level2; echo again > level1"
	run "$S" "$line" >/dev/null
	api POST "/sandboxes/$S/snapshots" '{}' >/dev/null
	snap=$(j 'o["id"]') made="$made $snap"
	depths="$depths$(j 'o["depth"]')"
	api DELETE "/sandboxes/$S" >/dev/null
done
check "squash: depth grows to the cap, then the next snapshot is one layer" "$depths" 123456781
L=$(create "{\"source\":{\"snapshot\":\"$snap\"}}")
check "squash: the files are as the last sandbox saw them (deletes, a replaced directory, a file made again)" \
	"$(run "$L" 'for f in level*; do printf "%s=%s " $f $(cat $f); done; ls d; stat -c %U level0 d/b | sort -u')" \
	"level0=0 level1=again level3=3 level4=4 level5=5 level6=6 level7=7 level8=8 b
sandbox"
api DELETE "/sandboxes/$L" >/dev/null
for x in $made; do api DELETE "/snapshots/$x" >/dev/null; done
gone=0
for _ in $(seq 100); do n=0; for x in $made; do [ -e "$SNAPS/$x" ] && n=1; done; [ $n = 0 ] && { gone=1; break; }; sleep 0.2; done
check "squash: every layer of the chain removed once deleted" "$gone" 1

# ---- keep_last ----
ids=
for _ in 1 2 3; do api POST "/sandboxes/$SRC/snapshots" '{"keep_last":2}' >/dev/null; ids="$ids $(j 'o["id"]')"; done
set -- $ids "" "" ""
check "keep_last 2: the oldest of three is gone, the two newest stay" \
	"$(api GET "/snapshots/$1")$(api GET "/snapshots/$2")$(api GET "/snapshots/$3")" 404200200
api DELETE "/snapshots/$2" >/dev/null; api DELETE "/snapshots/$3" >/dev/null

# ---- a sparse file: its holes cost the layer nothing ----
run "$SRC" 'truncate -s 64G sparse.bin && echo tail >> sparse.bin' >/dev/null
check "sparse: a 64 GiB file with 5 bytes of data is snapshotted" "$(api POST "/sandboxes/$SRC/snapshots" '{}'; j 'o["size"] < 1048576')" 201True
SP=$(j 'o["id"]')
check "sparse: its layer on disk is small" "$(( $(du -sk "$SNAPS/$SP" | cut -f1) < 10240 ))" 1
SPS=$(create "{\"source\":{\"snapshot\":\"$SP\"}}")
check "sparse: a sandbox from it sees the same size and data" "$(run "$SPS" 'stat -c %s sparse.bin; tail -c 5 sparse.bin')" "$((64 * 1024 * 1024 * 1024 + 5))
tail"
api DELETE "/sandboxes/$SPS" >/dev/null
api DELETE "/snapshots/$SP" >/dev/null
run "$SRC" 'rm sparse.bin' >/dev/null

# ---- expiry ----
api POST "/sandboxes/$SRC/snapshots" '{"expires_in_ms":1000}' >/dev/null
EXP=$(j 'o["id"]')
gone=0
for _ in $(seq 150); do
	[ "$(api GET "/snapshots/$EXP")" = 404 ] && [ ! -e "$SNAPS/$EXP" ] && { gone=1; break; }
	sleep 0.2
done
check "expiry: the snapshot and its disk are gone" "$gone" 1
check "expiry in the past is refused 422" "$(api POST "/sandboxes/$SRC/snapshots" '{"expires_in_ms":0}')" 422

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
# a small store for what follows: 1 MiB
start_runner "$RN" "$T/runner.sock" "$T/state" --max-snapshot-mb 1 || h_abort "runner did not restart"
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
