# Sourced by tests/snapshots/run.sh under SANDBOX_TEST_ISOLATION=gvisor:
# pause to disk (`runsc checkpoint`) and resume (`runsc restore`). Uses
# run.sh's api, j, run and create. Every check reads values (files,
# offsets, JSON members, what is on the host), never a duration.

GSTATE=$T/state/sandboxes
# host_left ID: what of a sandbox's processes and runsc state is on the host
host_left() {
	local n=0
	for h in /sys/fs/cgroup/*/sandbox/gvisor_"$RN"/"$1"; do [ -e "$h" ] && n=$((n + 1)); done
	n=$((n + $(ls "$T/state/gvisor" 2>/dev/null | grep -c "$1")))
	echo "$n"
}
# logs ID CID: "offset:data" of each stdout chunk so far, one a line
logs() {
	curl -s -m 30 -H "$A" "$U/sandboxes/$1/commands/$2/logs?since=0" |
		python3 -c 'import json,sys
for l in sys.stdin:
    o=json.loads(l)
    if "offset" in o: print("%d:%s" % (o["offset"], o["data"].replace("\n","|")))'
}
# preview ID: the body of GET / on its port 3000 through the gateway
preview() { curl -s -m 30 -H "Host: 3000-$1.localhost" "$GW_URL/"; }

G=$(create '{"isolation":"gvisor","memory_mb":256,"ports":[3000],"timeout_ms":600000}')
[ -n "$G" ] || h_abort "gvisor create: $(cat "$T/body")"
# a counter (file), a printer (its output's offsets) and a server that
# counts its hits in memory: all three only go on if the same processes do
api POST "/sandboxes/$G/commands" '{"cmd":"sh","args":["-c","i=0; while :; do i=$((i+1)); echo $i $(date +%s%3N) >> /tmp/count; sleep 0.05; done"],"detached":true}' >/dev/null
api POST "/sandboxes/$G/commands" '{"cmd":"sh","args":["-c","i=0; while :; do i=$((i+1)); echo line$i; sleep 0.1; done"],"detached":true}' >/dev/null
PRINTER=$(j 'o["id"]')
api POST "/sandboxes/$G/commands" '{"cmd":"node","args":["-e","let n=0;require(\"http\").createServer((q,s)=>s.end(\"hits \"+(++n))).listen(3000,\"127.0.0.1\")"],"detached":true}' >/dev/null
for _ in $(seq 150); do [ "$(preview "$G")" = "hits 1" ] && break; sleep 0.2; done
for _ in $(seq 100); do [ "$(run "$G" 'wc -l < /tmp/count')" -ge 3 ] && break; sleep 0.1; done
api GET "/sandboxes/$G" >/dev/null
exp_before=$(j 'o["expires_at"]')
run "$G" 'echo at-pause > pstate.txt' >/dev/null
before=$(logs "$G" "$PRINTER")
check "gvisor pause: paused" "$(api POST "/sandboxes/$G/pause"; j 'o["status"]')" 200paused
check "gvisor pause: the checkpoint image is on the runner's disk (checkpoint.img, over 1 MiB in all)" \
	"$(ls "$GSTATE/$G/checkpoint" 2>/dev/null | grep -c '^checkpoint.img$') $(du -sb "$GSTATE/$G/checkpoint" 2>/dev/null | awk '{print ($1 > 1048576)}')" "1 1"
check "gvisor pause: no process, cgroup or runsc state of it left running" "$(host_left "$G")" 0
check "gvisor pause: a command is 409 paused" "$(api POST "/sandboxes/$G/commands" '{"cmd":"true"}'; j 'o["error"]["code"]')" 409paused
check "gvisor pause: a preview is 409" "$(curl -s -m 20 -o /dev/null -w '%{http_code}' -H "Host: 3000-$G.localhost" "$GW_URL/")" 409
check "gvisor pause: a snapshot of the checkpointed sandbox is taken (201)" \
	"$(api POST "/sandboxes/$G/snapshots" '{}')" 201
GSNP=$(j 'o["id"]')
sleep 2
check "gvisor resume: running" "$(api POST "/sandboxes/$G/resume"; j 'o["status"]')" 200running
check "gvisor resume: the timeout clock stood still while paused (expires_at moved by at least the pause)" \
	"$(j "o['expires_at'] - $exp_before >= 2000")" True
check "gvisor resume: the checkpoint image is removed" "$(ls -d "$GSTATE/$G/checkpoint" 2>/dev/null | wc -l)" 0
check "gvisor resume: the preview's server answers through the same URL, its hit count kept" \
	"$(preview "$G")" "hits 2"
n0=$(run "$G" 'wc -l < /tmp/count')
for _ in $(seq 100); do [ "$(run "$G" 'wc -l < /tmp/count')" -gt $((n0 + 3)) ] && break; sleep 0.1; done
# one process counting on, no restart; its clock shows the stop as one
# gap of at least the 2 s paused between two of its 50 ms steps
check "gvisor resume: the counter went on from where it stood, after one long stop" \
	"$(run "$G" 'cat /tmp/count' | python3 -c 'import sys;r=[l.split() for l in sys.stdin.read().split("\n") if l];n=[int(a) for a,_ in r];t=[int(b) for _,b in r];print(n==list(range(1,len(n)+1)), max(b-a for a,b in zip(t,t[1:]))>=2000)')" "True True"
after=$(logs "$G" "$PRINTER")
check "gvisor resume: the detached command's output kept its offsets and goes on from them" \
	"$(python3 -c 'import sys
b=[l.split(":",1) for l in sys.argv[1].split("\n") if l]
a=[l.split(":",1) for l in sys.argv[2].split("\n") if l]
data="".join(d for _,d in a)
lines=[x for x in data.split("|") if x]
print(a[:len(b)]==b, len(a)>len(b), int(a[-1][0])>int(b[-1][0]), lines[:-1]==["line%d" % i for i in range(1,len(lines))])' "$before" "$after")" \
	"True True True True"
check "gvisor resume: the agent's socket is back, nothing aside" \
	"$(ls "$GSTATE/$G/sock/" | tr '\n' ' ')" "agent.sock guest "

streams_at_pause "$G" gvisor

GS=$(create "{\"source\":{\"snapshot\":\"$GSNP\"}}")
check "gvisor pause: a sandbox from the snapshot of the checkpointed one has its files" \
	"$(run "$GS" 'cat pstate.txt')" at-pause
api DELETE "/sandboxes/$GS" >/dev/null
api DELETE "/snapshots/$GSNP" >/dev/null

# A get reaches the sandbox's runner by its id, but a create needs the
# gateway to have seen the runner up again (its next status probe): until
# then gvisor is on no runner that is up (422 isolation_unavailable).
runner_back() {
	for _ in $(seq 150); do
		[ "$(api GET /capabilities; j '[i["available"] for i in o["isolation"] if i["name"] == "gvisor"]')" = "200[True]" ] && return
		sleep 0.2
	done
}

# ---- the runner killed while paused: the restarted runner takes it back ----
check "gvisor restart: paused" "$(api POST "/sandboxes/$G/pause"; j 'o["status"]')" 200paused
kill -9 "$RUNNER_PID"
wait "$RUNNER_PID" 2>/dev/null
rm -f "$T/runner.sock"
for _ in $(seq 150); do [ "$(api GET /runners; j '[r["state"] for r in o["runners"]]')" = "200['down']" ] && break; sleep 0.2; done
start_runner "$RN" "$T/runner.sock" "$T/state" || h_abort "runner did not restart"
# at once, while the gateway still believes the runner down: the create
# asks it again (runner_back below stays for the checks that follow)
check "gvisor restart: a create at once is placed on the restarted runner (201, not 422)" \
	"$(api POST /sandboxes '{"isolation":"gvisor","memory_mb":64}'; j 'o.get("status", o.get("error"))')" 201running
api DELETE "/sandboxes/$(j 'o["id"]')" >/dev/null
for _ in $(seq 100); do [ "$(api GET "/sandboxes/$G")" = 200 ] && break; sleep 0.2; done
check "gvisor restart: the restarted runner has it, paused" "$(j 'o["status"], o.get("stop_reason")')" "paused None"
runner_back
check "gvisor restart: resume restores it" "$(api POST "/sandboxes/$G/resume"; j 'o["status"]')" 200running
check "gvisor restart: its server kept its state" "$(preview "$G")" "hits 3"
n0=$(run "$G" 'wc -l < /tmp/count')
for _ in $(seq 100); do [ "$(run "$G" 'wc -l < /tmp/count')" -gt $((n0 + 3)) ] && break; sleep 0.1; done
check "gvisor restart: the counter went on from where it stood" \
	"$(run "$G" 'cat /tmp/count' | python3 -c 'import sys;n=[int(l.split()[0]) for l in sys.stdin.read().split("\n") if l];print(n==list(range(1,len(n)+1)))')" True

# ---- a clean stop (SIGTERM) while paused: left on disk as by a crash ----
check "gvisor clean stop: paused" "$(api POST "/sandboxes/$G/pause"; j 'o["status"]')" 200paused
kill -TERM "$RUNNER_PID"
wait "$RUNNER_PID" 2>/dev/null
check "gvisor clean stop: its checkpoint image stays on the runner's disk" \
	"$(ls "$GSTATE/$G/checkpoint" 2>/dev/null | grep -c '^checkpoint.img$')" 1
rm -f "$T/runner.sock"
start_runner "$RN" "$T/runner.sock" "$T/state" || h_abort "runner did not restart"
for _ in $(seq 100); do [ "$(api GET "/sandboxes/$G")" = 200 ] && break; sleep 0.2; done
check "gvisor clean stop: the restarted runner has it, paused" "$(j 'o["status"], o.get("stop_reason")')" "paused None"
runner_back
check "gvisor clean stop: resume restores it, its server's state kept" \
	"$(api POST "/sandboxes/$G/resume"; j 'o["status"]'; preview "$G")" "200running
hits 4"

# ---- a kept persistent sandbox: a preview request resumes it, then is served ----
PV=$(create '{"isolation":"gvisor","persistent":true,"memory_mb":256,"ports":[3000],"timeout_ms":600000}')
[ -n "$PV" ] || fail "gvisor kept: create: $(cat "$T/body")"
api POST "/sandboxes/$PV/commands" '{"cmd":"node","args":["-e","let n=0;require(\"http\").createServer((q,s)=>s.end(\"kept \"+(++n))).listen(3000,\"127.0.0.1\")"],"detached":true}' >/dev/null
for _ in $(seq 150); do [ "$(preview "$PV")" = "kept 1" ] && break; sleep 0.2; done
check "gvisor kept: a stop keeps it paused to disk" \
	"$(api POST "/sandboxes/$PV/stop"; j 'o["status"], o["resumable"]'; ls "$GSTATE/$PV/checkpoint" 2>/dev/null | grep -c '^checkpoint.img$')" "200paused True
1"
check "gvisor kept: a preview request resumes it and its server answers, its state kept" "$(preview "$PV")" "kept 2"
check "gvisor kept: it runs again" "$(api GET "/sandboxes/$PV"; j 'o["status"]')" 200running
run "$PV" 'echo at-the-stop > gk.txt' >/dev/null
api POST "/sandboxes/$PV/stop" >/dev/null
check "gvisor kept: a fork resumes it first, then forks it (201, X-Sandbox-Resumed: 1)" \
	"$(curl -s -m 300 -D "$T/hdrs" -o "$T/body" -w '%{http_code}' -X POST -H "$A" -d '{"count":1}' "$U/sandboxes/$PV/fork"; tr -d '\r' <"$T/hdrs" | grep -ci '^x-sandbox-resumed: 1$')" 2011
PVF=$(j 'o["sandboxes"][0]["id"]') PVS=$(j 'o["snapshot"]["id"]')
check "gvisor kept: ... the fork has its file" "$(run "$PVF" 'cat gk.txt')" at-the-stop
check "gvisor kept: ... the source runs again, its server's state kept" \
	"$(api GET "/sandboxes/$PV"; j 'o["status"]'; preview "$PV")" "200running
kept 3"
api DELETE "/sandboxes/$PVF" >/dev/null
api DELETE "/snapshots/$PVS" >/dev/null
api DELETE "/sandboxes/$PV" >/dev/null

# ---- the runner's loop answers while a checkpoint of 256 MiB runs (in a
# worker): a call to the runner about another sandbox is answered before
# the pause is ----
GB=$(create '{"isolation":"gvisor","memory_mb":512,"timeout_ms":600000}')
api POST "/sandboxes/$GB/commands" '{"cmd":"python3","args":["-c","import os,time\nb=os.urandom(256<<20)\nopen(\"/tmp/held\",\"w\").close()\ntime.sleep(3600)"],"detached":true}' >/dev/null
HOLDER=$(j 'o["id"]')
for _ in $(seq 300); do [ "$(run "$GB" 'test -e /tmp/held && echo yes')" = yes ] && break; sleep 0.2; done
OTHER=$(create '{"memory_mb":64}')
rm -f "$T/order"
(curl -s -m 300 -o "$T/pause.json" -X POST -H "$A" "$U/sandboxes/$GB/pause"; echo pause >>"$T/order") &
PP=$!
# the pause has begun: its image dir is made before the agent is told
for _ in $(seq 1000); do [ -d "$GSTATE/$GB/checkpoint" ] && break; sleep 0.01; done
curl -s -m 300 -o "$T/other.json" -H "$A" "$U/sandboxes/$OTHER"
echo other >>"$T/order"
wait "$PP"
check "gvisor pause off the loop: another sandbox's get was answered before the 256 MiB pause was" \
	"$(tr '\n' ' ' <"$T/order")" "other pause "
check "gvisor pause off the loop: ... both answers are whole (running, paused)" \
	"$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["status"], json.load(open(sys.argv[2]))["status"])' "$T/other.json" "$T/pause.json")" "running paused"
check "gvisor pause off the loop: resume brings back the process holding 256 MiB" \
	"$(api POST "/sandboxes/$GB/resume"; j 'o["status"]'; api GET "/sandboxes/$GB/commands/$HOLDER"; j 'o["status"]')" "200running
200running"
api DELETE "/sandboxes/$GB" >/dev/null
api DELETE "/sandboxes/$OTHER" >/dev/null

# ---- paused twice, then deleted while paused: nothing left ----
check "gvisor pause again: paused" "$(api POST "/sandboxes/$G/pause"; j 'o["status"]')" 200paused
check "gvisor delete paused: stopped" "$(api DELETE "/sandboxes/$G"; j 'o["status"]')" 200stopped
gone=0
for _ in $(seq 100); do [ ! -e "$GSTATE/$G" ] && { gone=1; break; }; sleep 0.2; done
check "gvisor delete paused: its dir and checkpoint image are removed" "$gone" 1
check "gvisor delete paused: no cgroup or runsc state left" "$(host_left "$G")" 0
check "gvisor delete paused: no mount left" "$(grep -c "$G" /proc/mounts)" 0

# ---- allow-all: paused to disk too, its network namespace held ----
# procs_of ID: how many processes of runsc (sentry, gofer, runsc itself)
# name the sandbox
procs_of() { pgrep -fc "runsc.*$1" || true; }
# net_left SLOT IFINDEX: the host end of the sandbox's veth (by its index:
# another runner on the host may have the slot again) and, unless the slot
# has a veth again, its firewall rules (a new owner's veth comes before its
# rules, and goes after them)
net_left() {
	local n=0 f rules
	rules=$(iptables-save 2>/dev/null | grep -c -- "-i sbxh$1 ")
	for f in /sys/class/net/*/ifindex; do [ "$(cat "$f" 2>/dev/null)" = "$2" ] && n=$((n + 1)); done
	[ -e "/sys/class/net/sbxh$1" ] || n=$((n + rules))
	echo "$n"
}
GA=$(create '{"isolation":"gvisor","network":"allow-all","memory_mb":256,"ports":[3000],"timeout_ms":600000}')
[ -n "$GA" ] || h_abort "gvisor allow-all create: $(cat "$T/body")"
GSLOT=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["slot"])' "$GSTATE/$GA/state.json")
GIFX=$(cat "/sys/class/net/sbxh$GSLOT/ifindex")
api POST "/sandboxes/$GA/commands" '{"cmd":"sh","args":["-c","i=0; while :; do i=$((i+1)); echo $i >> /tmp/count; sleep 0.05; done"],"detached":true}' >/dev/null
api POST "/sandboxes/$GA/commands" '{"cmd":"node","args":["-e","let n=0;require(\"http\").createServer((q,s)=>s.end(\"net \"+(++n))).listen(3000,\"0.0.0.0\")"],"detached":true}' >/dev/null
for _ in $(seq 150); do [ "$(preview "$GA")" = "net 1" ] && break; sleep 0.2; done
for _ in $(seq 100); do [ "$(run "$GA" 'wc -l < /tmp/count')" -ge 3 ] && break; sleep 0.1; done
RESOLV=$(run "$GA" 'cat /etc/resolv.conf')
check "gvisor allow-all: its netns is held at <dir>/netns, its veth is up" \
	"$(stat -f -c %T "$GSTATE/$GA/netns" 2>/dev/null) $(ip link show "sbxh$GSLOT" 2>/dev/null | grep -c 'state UP')" "nsfs 1"
check "gvisor allow-all pause: paused" "$(api POST "/sandboxes/$GA/pause"; j 'o["status"]')" 200paused
check "gvisor allow-all pause: to disk (checkpoint.img)" \
	"$(ls "$GSTATE/$GA/checkpoint" 2>/dev/null | grep -c '^checkpoint.img$')" 1
check "gvisor allow-all pause: no sentry, gofer or cgroup of it left (its memory freed)" \
	"$(procs_of "$GA") $(host_left "$GA")" "0 0"
check "gvisor allow-all pause: the netns, its veth and its egress rules are kept, the slot marked kept" \
	"$(stat -f -c %T "$GSTATE/$GA/netns" 2>/dev/null) $(cat "/sys/class/net/sbxh$GSLOT/ifindex") $(iptables-save | grep -c -- "-i sbxh$GSLOT " | awk '{print ($1 > 0)}') $(cat "/run/sandbox/slots/$GSLOT.kept")" "nsfs $GIFX 1 $GSTATE/$GA/netns"
check "gvisor allow-all resume: running" "$(api POST "/sandboxes/$GA/resume"; j 'o["status"]')" 200running
check "gvisor allow-all resume: the preview's server answers through the same URL, its count kept" \
	"$(preview "$GA")" "net 2"
n0=$(run "$GA" 'wc -l < /tmp/count')
case $n0 in '' | *[!0-9]*) n0=0 ;; esac    # (a sandbox gone: a word)
for _ in $(seq 100); do [ "$(run "$GA" 'wc -l < /tmp/count')" -gt $((n0 + 3)) ] && break; sleep 0.1; done
check "gvisor allow-all resume: the counter went on from where it stood" \
	"$(run "$GA" 'cat /tmp/count' | python3 -c 'import sys;n=[int(l) for l in sys.stdin.read().split()];print(n==list(range(1,len(n)+1)) and len(n)>3)')" True
check "gvisor allow-all resume: the same resolver address in its resolv.conf" \
	"$(run "$GA" 'cat /etc/resolv.conf')" "$RESOLV"

# the runner killed while it is paused: taken back with its network; an
# allow-list one beside it keeps its policy, enforced by the new runner's
# resolver (a denied name is NXDOMAIN, answered by the runner itself)
GL=$(create '{"isolation":"gvisor","network":{"allow":["allowed.test"]},"memory_mb":128,"timeout_ms":600000}')
NXD='import socket
try: socket.getaddrinfo("denied.test", 80); print("resolved")
except socket.gaierror as e: print("nxdomain" if e.errno == socket.EAI_NONAME else e.errno)'
check "gvisor allow-list restart: before, a denied name is NXDOMAIN" \
	"$(run "$GL" "python3 -c '$NXD'")" nxdomain
check "gvisor allow-list restart: paused" "$(api POST "/sandboxes/$GL/pause"; j 'o["status"]')" 200paused
# one whose policy brokers a credential: its secret is never on disk, so
# the restart loses it, and its reconcile leaves nothing of its network
GK=$(create '{"isolation":"gvisor","network":{"allow":{"allowed.test":[{"transform":[{"headers":{"x-k":"brokered-s3cr3t"}}]}]}},"memory_mb":128,"timeout_ms":600000}')
KSLOT=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["slot"])' "$GSTATE/$GK/state.json")
KIFX=$(cat "/sys/class/net/sbxh$KSLOT/ifindex")
check "gvisor brokered restart: paused, its secret in no file of its dir" \
	"$(api POST "/sandboxes/$GK/pause"; j 'o["status"]'; grep -rlc brokered-s3cr3t "$GSTATE/$GK" --exclude-dir=checkpoint --exclude-dir=rw --exclude-dir=root | wc -l)" "200paused
0"
check "gvisor allow-all restart: paused" "$(api POST "/sandboxes/$GA/pause"; j 'o["status"]')" 200paused
kill -9 "$RUNNER_PID"
wait "$RUNNER_PID" 2>/dev/null
rm -f "$T/runner.sock"
start_runner "$RN" "$T/runner.sock" "$T/state" || h_abort "runner did not restart"
for _ in $(seq 100); do [ "$(api GET "/sandboxes/$GA")" = 200 ] && break; sleep 0.2; done
check "gvisor allow-all restart: the restarted runner has it, paused, allow-all" \
	"$(j 'o["status"], o.get("stop_reason"), o["network"]')" "paused None allow-all"
runner_back
check "gvisor allow-all restart: resume restores it" "$(api POST "/sandboxes/$GA/resume"; j 'o["status"]')" 200running
check "gvisor brokered restart: lost with the runner (runner_restart)" \
	"$(api GET "/sandboxes/$GK"; j 'o["status"], o.get("stop_reason")')" "200failed runner_restart"
gone=
for _ in $(seq 100); do
	[ ! -e "$GSTATE/$GK" ] && [ "$(net_left "$KSLOT" "$KIFX")" = 0 ] && { gone=1; break; }
	sleep 0.2
done
check "gvisor brokered restart: its dir, netns mount, veth and slot rules are gone" \
	"$gone $(cat /proc/[0-9]*/mountinfo 2>/dev/null | grep -c "$GK/netns")" "1 0"
check "gvisor allow-list restart: the restarted runner has it, paused, its policy kept" \
	"$(api GET "/sandboxes/$GL"; j 'o["status"], o["network"]')" "200paused {'allow': ['allowed.test'], 'deny_cidrs': []}"
check "gvisor allow-list restart: resumed, the new runner's resolver still refuses a denied name" \
	"$(api POST "/sandboxes/$GL/resume"; j 'o["status"]'; run "$GL" "python3 -c '$NXD'")" "200running
nxdomain"
check "gvisor allow-all restart: its server kept its state, through the same URL" "$(preview "$GA")" "net 3"
n0=$(run "$GA" 'wc -l < /tmp/count')
case $n0 in '' | *[!0-9]*) n0=0 ;; esac    # (a sandbox gone: a word)
for _ in $(seq 100); do [ "$(run "$GA" 'wc -l < /tmp/count')" -gt $((n0 + 3)) ] && break; sleep 0.1; done
check "gvisor allow-all restart: the counter went on from where it stood" \
	"$(run "$GA" 'cat /tmp/count' | python3 -c 'import sys;n=[int(l) for l in sys.stdin.read().split()];print(n==list(range(1,len(n)+1)))')" True

# deleted while paused: nothing of it or its network left
check "gvisor allow-all delete paused: paused" "$(api POST "/sandboxes/$GA/pause"; j 'o["status"]')" 200paused
check "gvisor allow-all delete paused: before, a later sandbox's watcher holds a copy of its netns mount" \
	"$(cat /proc/[0-9]*/mountinfo 2>/dev/null | grep -c "$GA/netns" | awk '{print ($1 > 1)}')" 1
check "gvisor allow-all delete paused: stopped" "$(api DELETE "/sandboxes/$GA"; j 'o["status"]')" 200stopped
gone=0
for _ in $(seq 100); do [ ! -e "$GSTATE/$GA" ] && { gone=1; break; }; sleep 0.2; done
check "gvisor allow-all delete paused: its dir, checkpoint and netns file are removed" "$gone" 1
check "gvisor allow-all delete paused: no process, cgroup, runsc state or mount left" \
	"$(procs_of "$GA") $(host_left "$GA") $(grep -c "$GA" /proc/mounts)" "0 0 0"
# the netns bind mount was copied into the mount namespaces of every
# watcher started since (GL's, still running): its removal detached those
# too, so no namespace keeps the netns alive
check "gvisor allow-all delete paused: no mount namespace of any process holds its netns" \
	"$(cat /proc/[0-9]*/mountinfo 2>/dev/null | grep -c "$GA/netns")" 0
api DELETE "/sandboxes/$GL" >/dev/null
check "gvisor allow-all delete paused: no veth, firewall rule or kept mark of its slot left" \
	"$(net_left "$GSLOT" "$GIFX") $(ls "/run/sandbox/slots/$GSLOT.kept" 2>/dev/null | wc -l)" "0 0"
