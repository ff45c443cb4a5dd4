# Persistent sandboxes (docs/api.md "Persistent sandboxes"), sourced by
# run.sh with its services and helpers (api, j, run, create): a stop or
# the timeout keeps the sandbox (jail: a hidden snapshot, its resources
# released); the next command, file call or stream resumes it under the
# same id; DELETE ends it for good.

# hdr NAME: that response header's value in the last call of apih
apih() { # METHOD PATH [BODY]: like api, the headers in $T/hdrs
	local m=$1 p=$2 d=${3-}
	curl -s -m 120 -D "$T/hdrs" -o "$T/body" -w '%{http_code}' -X "$m" -H "$A" ${d:+-d "$d"} "$U$p"
}
hdr() { tr -d '\r' <"$T/hdrs" | awk -v h="$(echo "$1" | tr A-Z a-z)" 'tolower($1) == h":" {print $2}'; }
# left ID: cgroups, mounts and state dir left of sandbox ID on the host
left_of() {
	local n=0 h
	for h in /sys/fs/cgroup/*/sandbox/$1 /sys/fs/cgroup/sandbox/$1; do [ -e "$h" ] && n=$((n + 1)); done
	grep -q "$1" /proc/mounts && n=$((n + 1))
	[ -e "$T/state/sandboxes/$1" ] && n=$((n + 1))
	echo $n
}
# kept ID: snapshots of sandbox ID on the runner's disk not deleted
kept_of() {
	python3 -c 'import json,sys,glob
n=0
for p in glob.glob(sys.argv[1] + "/*/meta.json"):
	m=json.load(open(p)); n+=m["sandbox_id"]==sys.argv[2] and not m["deleted"]
print(n)' "$SNAPS" "$1"
}
# disk ID: snapshot dirs on the runner's disk of sandbox ID, deleted or not
disk_of() { grep -l "\"sandbox_id\":\"$1\"" "$SNAPS"/*/meta.json 2>/dev/null | wc -l; }

PS=$(create '{"persistent":true,"timeout_ms":600000,"memory_mb":128,"ports":[3000],"env":{"TOKEN":"'$SECRET'"}}')
check "persistent: created running, persistent true" "$(api GET "/sandboxes/$PS"; j 'o["status"], o["persistent"]')" "200running True"
run "$PS" 'echo kept > kept.txt; mkdir -p app/lib && echo deep > app/lib/x' >/dev/null
check "persistent stop: 200, stopped, resumable" \
	"$(api POST "/sandboxes/$PS/stop"; j 'o["status"], o["persistent"], o["resumable"]')" "200stopped True True"
check "persistent stop: its processes, cgroups, mounts and dir are released" "$(left_of "$PS")" 0
check "persistent stop: its files are kept on the runner's disk" "$(kept_of "$PS")" 1
check "persistent stop: the kept snapshot holds no env value" "$(grep -rl "$SECRET" "$SNAPS"/*/meta.json "$T/state/persistent" 2>/dev/null | wc -l)" 0
check "persistent stop: get says stopped and resumable" "$(api GET "/sandboxes/$PS"; j 'o["status"], o["resumable"]')" "200stopped True"
check "persistent stop: its kept snapshot is not one of the key's snapshots" \
	"$(api GET /snapshots; j 'len([s for s in o["snapshots"] if s["sandbox_id"] == "'$PS'"])')" 2000
check "persistent: another key cannot resume it (404)" \
	"$(api POST "/sandboxes/$PS/commands" '{"cmd":"true"}' "$B")$(api GET "/sandboxes/$PS/files?path=kept.txt" '' "$B")" 404404
check "persistent: ... and it stays stopped" "$(api GET "/sandboxes/$PS"; j 'o["status"]')" 200stopped
check "persistent resume: a command resumes it and reads the file written before the stop" \
	"$(apih POST "/sandboxes/$PS/commands" '{"cmd":"cat","args":["kept.txt","app/lib/x"]}'; j 'o["stdout"]')" "200kept
deep"
check "persistent resume: X-Sandbox-Resumed: 1 says so" "$(hdr x-sandbox-resumed)" 1
check "persistent resume: the same id, running, with its settings, without env values" \
	"$(api GET "/sandboxes/$PS"; j 'o["id"], o["status"], o["memory_mb"], o["ports"], o.get("source")')" \
	"200$PS running 128 [3000] None"
check "persistent resume: the next command carries no resumed header" \
	"$(apih POST "/sandboxes/$PS/commands" '{"cmd":"true"}'; hdr x-sandbox-resumed)" 200
run "$PS" 'echo second > second.txt' >/dev/null
api POST "/sandboxes/$PS/stop" >/dev/null
check "persistent stop again: one kept snapshot (the older one deleted, its layer stacked)" "$(kept_of "$PS")" 1
check "persistent resume by a file read: both stops' files are there" \
	"$(apih GET "/sandboxes/$PS/files?path=second.txt"; cat "$T/body"; hdr x-sandbox-resumed)" "200second
1"

# the timeout ends it: kept the same way
PT=$(create '{"persistent":true,"timeout_ms":4000,"memory_mb":64}')
run "$PT" 'echo before-timeout > t.txt' >/dev/null
st=
for _ in $(seq 300); do st=$(api GET "/sandboxes/$PT"; j 'o["status"], o.get("stop_reason"), o["resumable"]'); [ "$st" = "200stopped timeout True" ] && break; sleep 0.2; done
check "persistent timeout: stopped by its timeout, resumable" "$st" "200stopped timeout True"
check "persistent timeout: its resources are released" "$(left_of "$PT")" 0
check "persistent timeout: a command resumes it, its file is there" \
	"$(apih POST "/sandboxes/$PT/commands" '{"cmd":"cat","args":["t.txt"]}'; j 'o["stdout"].strip()'; hdr x-sandbox-resumed)" "200before-timeout
1"
check "persistent timeout: delete ends it for good" "$(api DELETE "/sandboxes/$PT"; j 'o["status"], o["resumable"]')" "200stopped False"

# a plain sandbox's stop is a delete
PL=$(create '{"memory_mb":64}')
check "not persistent: POST stop stops it, not resumable" "$(api POST "/sandboxes/$PL/stop"; j 'o["status"], o["persistent"], "resumable" in o')" "200stopped False False"
check "not persistent: a command is 409 conflict" "$(api POST "/sandboxes/$PL/commands" '{"cmd":"true"}'; j 'o["error"]["code"]')" 409conflict

# gvisor: kept paused (no snapshots there), resumed by the next command
if [ "$(api GET /capabilities; j '[i["available"] for i in o["isolation"] if i["name"] == "gvisor"]')" = "200[True]" ]; then
	PG=$(create '{"persistent":true,"isolation":"gvisor","memory_mb":128}')
	run "$PG" 'echo in-memory-too > /tmp/g.txt' >/dev/null
	check "persistent gvisor: a stop keeps it paused, resumable" \
		"$(api POST "/sandboxes/$PG/stop"; j 'o["status"], o["resumable"]')" "200paused True"
	check "persistent gvisor: a command resumes it, its file is there" \
		"$(apih POST "/sandboxes/$PG/commands" '{"cmd":"cat","args":["/tmp/g.txt"]}'; j 'o["stdout"].strip()'; hdr x-sandbox-resumed)" "200in-memory-too
1"
	check "persistent gvisor: delete ends it" "$(api DELETE "/sandboxes/$PG"; j 'o["status"]')" 200stopped
else
	skip "persistent gvisor: gvisor is not available here"
fi
