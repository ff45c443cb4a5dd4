#!/bin/bash
# CLI suite: bin/sbx against a real sandbox-runner and sandbox-gateway (as
# tests/gateway/run.sh starts them), `sbx sh` under a real pseudo-terminal
# (pty_drive.py). Ends with "N passed, N failed, N skipped".
. "$(dirname "$0")/../lib/harness.sh"
SBX=${SBX_BIN:-$PWD/bin/sbx}   # SBX_BIN=build/asan/bin/sbx: the ASan build

if [ ! -x "$SBX" ] || [ -n "$(h_services_missing)" ]; then
	h_skip_suite "cli suite: needs root, make (bin/sbx, bin/sandbox-runner) and $IMG/default/rootfs"
fi
h_begin cli-test

# --- no gateway needed
"$SBX" --help >"$T/help" 2>&1
check "help: sbx --help exits 0" "$?" 0
check "help: lists the exit codes" "$(grep -cE '^  12[0-4]  ' "$T/help")" 5
for c in create ls stop rm url exec run cp logs sh snapshot snapshots fork pause resume; do
	"$SBX" "$c" --help >"$T/h1" 2>&1 && grep -q "^usage: sbx $c" "$T/h1" || fail "help: sbx $c --help"
done
pass "help: every command has --help"
"$SBX" nosuch >/dev/null 2>"$T/err"
check "usage: unknown command exits 120" "$?" 120
SBX_API_KEY=k "$SBX" create --timeout 5x 2>"$T/err"
check "usage: bad --timeout exits 120" "$?" 120
# a port nobody listens on: bind one, close it, use it
dead=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
SBX_URL=http://127.0.0.1:$dead SBX_API_KEY=k "$SBX" ls >/dev/null 2>"$T/err"
check "unreachable: exits 122" "$?" 122
grep -q "cannot reach the gateway at http://127.0.0.1:$dead" "$T/err" && pass "unreachable: says so" || fail "unreachable: says so: $(cat "$T/err")"
env -u SBX_API_KEY "$SBX" --url http://127.0.0.1:$dead ls 2>"$T/err"
check "usage: no key exits 120" "$?" 120

# --- the service
KEY=cli-key-$RANDOM$RANDOM
start_runner "cli$$" "$T/r.sock" "$T/state"
start_gw() { # -> GW_PID, GW_PORT (a random port may be taken: try another)
	local _t
	for _t in 1 2 3; do
		GW_PORT=$(random_port)
		SANDBOX_API_KEYS=$KEY start_gateway bin/sandbox-gateway "$GW_PORT" "$T/gw.log" --runner-socket "$T/r.sock" &&
			return 0
	done
	return 1
}
start_gw || h_abort "gateway did not start: $(tail -3 "$T/gw.log")"
export SBX_URL=http://127.0.0.1:$GW_PORT SBX_API_KEY=$KEY
sbx() { "$SBX" "$@"; }

check "errors: the table needs no gateway; paused is a ConflictError (exit 114)" \
	"$(SBX_URL=http://127.0.0.1:1 SBX_API_KEY= sbx errors | awk '$1 == "paused" {print $2, $3}')" "ConflictError 114"
SBX_API_KEY=wrong sbx ls >/dev/null 2>"$T/err"
check "api error: wrong key exits 112 (UnauthorizedError)" "$?" 112
grep -q '(unauthorized, HTTP 401)' "$T/err" && pass "api error: the gateway's message is printed" || fail "api error: message: $(cat "$T/err")"
sbx stop sbx_nosuch_aaaaaaaaaaaaaaaaaaaaaaaa 2>"$T/err"
check "api error: unknown sandbox exits 113 (NotFoundError)" "$?" 113

# create / ls / url / stop
id=$(sbx create --timeout 10m --port 3000)
check "create: exits 0" "$?" 0
[[ $id =~ ^sbx_[a-z0-9_]+$ ]] && pass "create: prints the id" || fail "create: prints the id: '$id'"
check "ls: lists it running" "$(sbx ls | awk -v i="$id" '$1 == i {print $2, $4}')" "running 3000"
check "images: the default image, with the node version GET /v1/images gives" \
	"$(sbx images | awk '$1 == "default" {print $1, $2}')" \
	"default $(sbx --json images | python3 -c 'import json,sys;print([i for i in json.load(sys.stdin)["images"] if i["name"]=="default"][0]["runtimes"]["node"])')"
check "images: takes no arguments (exit 120, a usage error)" "$(sbx images x 2>/dev/null; echo $?)" 120
sbx images rm default 2>"$T/err"
check "images rm: the default is refused (exit 114, the gateway's conflict said)" "$?$(grep -c '(conflict, HTTP 409)' "$T/err")" 1141
sbx images rm no-such-image 2>"$T/err"
check "images rm: an unknown image exits 113 (not_found)" "$?$(grep -c '(not_found, HTTP 404)' "$T/err")" 1131
check "images rm: a name that is a path is a usage error, nothing asked" "$(sbx images rm ../default 2>/dev/null; echo $?)" 120
check "create --image: a name that is a path is a usage error" "$(sbx create --image ../x 2>/dev/null; echo $?)" 120
sbx create --image no-such-image >/dev/null 2>"$T/err"
check "create --image: an unknown image exits 111 (invalid), the gateway naming the images there are" \
	"$?$(grep -c 'images: default' "$T/err")" 1111
img=$(sbx --json images | python3 -c 'import json,sys;l=[i for i in json.load(sys.stdin)["images"] if i["name"]=="node22"];print(l[0]["runtimes"]["node"] if l else "")')
if [ -n "$img" ]; then
	iid=$(sbx create --image node22 --timeout 2m)
	check "create --image node22: the sandbox is node22's and its node is the listing's" \
		"$(sbx --json ls | python3 -c 'import json,sys;print([s["image"] for s in json.load(sys.stdin)["sandboxes"] if s["id"]==sys.argv[1]])' "$iid") $(sbx exec "$iid" -- node --version)" \
		"['node22'] v$img"
	sbx stop "$iid"
else
	skip "create --image node22: no node22 image (make image)"
fi
check "ls --json: the gateway's object" "$(sbx --json ls | python3 -c 'import json,sys;print([s["status"] for s in json.load(sys.stdin)["sandboxes"] if s["id"]==sys.argv[1]])' "$id")" "['running']"
check "url: the preview URL" "$(sbx url "$id" 3000)" "http://3000-$id.localhost:$GW_PORT"
check "url --json: the route object" "$(sbx --json url "$id" 3000 | python3 -c 'import json,sys;d=json.load(sys.stdin);print(d["port"],d["url"])')" "3000 http://3000-$id.localhost:$GW_PORT"
jcid=$(sbx --json exec "$id" -d -- true | python3 -c 'import json,sys;d=json.load(sys.stdin);print(d["id"][:4],d["status"] in ("running","exited"))')
check "exec -d --json: the command object" "$jcid" "cmd_ True"
sbx url "$id" 3001 >"$T/out" 2>"$T/err"
check "url: an undeclared port exits 111 (no_route), prints nothing" "$?$(wc -c <"$T/out")" "1110"

# snapshot / snapshots / fork / pause / resume
sbx exec "$id" -- sh -c 'echo kept > kept.txt'
snp=$(sbx snapshot "$id" --keep 3)
[[ $snp =~ ^snp_[a-z0-9_]+$ ]] && pass "snapshot: prints the id" || fail "snapshot: prints the id: '$snp'"
check "snapshots: lists it with its sandbox" "$(sbx snapshots | awk -v s="$snp" '$1 == s {print $2}')" "$id"
fid=$(sbx fork "$id")
check "fork: one sandbox with the snapshot's files" "$(sbx exec "$fid" -- cat kept.txt)" kept
check "pause: exits 0" "$(sbx pause "$id"; echo $?)" 0
sbx exec "$id" -- true 2>"$T/err"
check "pause: exec on a paused sandbox exits 114 (ConflictError)" "$?" 114
grep -q '(paused, HTTP 409)' "$T/err" && pass "pause: says paused" || fail "pause: says paused: $(cat "$T/err")"
check "resume: exits 0, exec runs again" "$(sbx resume "$id"; sbx exec "$id" -- echo back)" back
check "fork: --count 0 is a usage error" "$(sbx fork "$id" --count 0 2>/dev/null; echo $?)" 120
sbx stop "$fid" >/dev/null
# create --snapshot, --persistent: kept by a stop, brought back by exec
pj=$(sbx --json create --snapshot "$snp" --persistent --timeout 10m)
pid_=$(echo "$pj" | python3 -c 'import json,sys;d=json.load(sys.stdin);print(d["id"])')
check "create --snapshot --persistent: from the snapshot, persistent" \
	"$(echo "$pj" | python3 -c 'import json,sys;d=json.load(sys.stdin);print(d["source"]["snapshot"],d["persistent"])')" "$snp True"
check "create --snapshot: the snapshot's files" "$(sbx exec "$pid_" -- cat kept.txt)" kept
sbx exec "$pid_" -- sh -c 'echo mine > mine.txt'
check "create --persistent: sbx stop keeps it (stopped, resumable)" \
	"$(sbx --json stop "$pid_" | python3 -c 'import json,sys;d=json.load(sys.stdin);print(d["status"],d["resumable"])')" "stopped True"
check "create --persistent: kept by sbx stop, exec brings it back with its files" "$(sbx exec "$pid_" -- cat mine.txt)" mine
sbx stop "$pid_" >/dev/null
kfid=$(sbx fork "$pid_")
check "fork of a kept sandbox: resumes it first, the fork has its files" "$(sbx exec "$kfid" -- cat mine.txt)" mine
check "fork of a kept sandbox: the source runs again" \
	"$(sbx --json ls | python3 -c 'import json,sys;print([s["status"] for s in json.load(sys.stdin)["sandboxes"] if s["id"]==sys.argv[1]])' "$pid_")" "['running']"
sbx rm "$kfid" >/dev/null
check "create --persistent: sbx rm ends it for good (not resumable)" \
	"$(sbx --json rm "$pid_" | python3 -c 'import json,sys;print(json.load(sys.stdin)["resumable"])')" False
check "create --persistent: after sbx rm exec is a ConflictError (114)" "$(sbx exec "$pid_" -- true 2>/dev/null; echo $?)" 114
check "rm: again is not an error" "$(sbx rm "$pid_"; echo $?)" 0

# exec: exit codes, signals, stdout/stderr, stdin
sbx exec "$id" -- sh -c 'exit 3'
check "exec: exit 3 passes through" "$?" 3
sbx exec "$id" -- sh -c 'kill -TERM $$'
check "exec: SIGTERM is 128+15" "$?" 143
sbx exec "$id" -- sh -c 'kill -KILL $$'
check "exec: SIGKILL is 128+9" "$?" 137
sbx exec "$id" -- nosuchprogram 2>/dev/null
check "exec: a missing program is 127" "$?" 127
sbx exec "$id" -- sh -c 'printf a; printf "B\000\377" >&2; printf "c\n"; printf D >&2' >"$T/o" 2>"$T/e"
check "exec: stdout byte-exact" "$(od -An -c "$T/o" | tr -s ' ')" " a c \n"
check "exec: stderr byte-exact (NUL, 0xff)" "$(od -An -tx1 "$T/e" | tr -s ' ')" " 42 00 ff 44"
head -c 3000000 /dev/urandom >"$T/r1"
head -c 2000000 /dev/urandom >"$T/r2"
sbx cp "$T/r1" "$id:r1" && sbx cp "$T/r2" "$id:r2"
sbx exec "$id" -- sh -c 'cat r1; cat r2 >&2; cat r1' >"$T/o" 2>"$T/e"
check "exec: 6 MB of stdout, in order" "$(md5sum <"$T/o")" "$(cat "$T/r1" "$T/r1" | md5sum)"
check "exec: 2 MB of stderr apart" "$(md5sum <"$T/e")" "$(md5sum <"$T/r2")"
check "stdin: echo hi | sbx exec -- cat" "$(echo hi | sbx exec "$id" -- cat)" "hi"
check "stdin: 3 MB piped through, byte-exact" "$(sbx exec "$id" -- cat <"$T/r1" | md5sum)" "$(md5sum <"$T/r1")"
check "stdin: the command sees the end (wc -c)" "$(sbx exec "$id" -- wc -c <"$T/r2")" 2000000
check "stdin: /dev/null is an empty input" "$(sbx exec "$id" -- wc -c </dev/null)" 0
# Ctrl-C: SIGINT to sbx reaches the command (sbx waits for the command's
# end). A background job of this shell starts with SIGINT ignored, which
# sbx respects (as nohup'd programs rely on): give it the default back.
# The sleeps are bounds only: if SIGINT were lost the check fails at their end.
DFL_INT='import os,signal,sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])'
# (each run its own output file: "started" must be this command's, printed
# once sbx is streaming and so has its signal handling in place)
python3 -c "$DFL_INT" "$SBX" exec "$id" -- sh -c 'echo started; exec sleep 120' >"$T/int1" 2>&1 </dev/null &
p=$!
for _ in $(seq 600); do grep -q started "$T/int1" && break; sleep 0.1; done
kill -INT $p
wait $p
check "ctrl-c: SIGINT ends the command: 128+2" "$?" 130
python3 -c "$DFL_INT" "$SBX" exec "$id" -- sh -c 'trap "echo caught; exit 7" INT; echo started; for i in $(seq 120); do sleep 1; done' >"$T/int2" 2>&1 </dev/null &
p=$!
for _ in $(seq 600); do grep -q started "$T/int2" && break; sleep 0.1; done
kill -INT $p
wait $p
check "ctrl-c: a command that traps SIGINT decides: exit 7" "$?$(tail -1 "$T/int2")" "7caught"

# a reader that goes away (| head): sbx ends as if by SIGPIPE, and so does
# the command (nothing is left running in the sandbox)
out=$(sbx exec "$id" -- yes 2>/dev/null | head -2 | tr '\n' ,; echo "${PIPESTATUS[0]}")
check "epipe: sbx exec -- yes | head -2" "$out" "y,y,141"
running=1
for _ in $(seq 300); do
	running=$(curl -s -m 10 -H "Authorization: Bearer $KEY" "$SBX_URL/v1/sandboxes/$id/commands" | grep -o '"status":"running"' | wc -l)
	[ "$running" = 0 ] && break
	sleep 0.1
done
check "epipe: the command got SIGPIPE too (none left running)" "$running" 0

# ... and typed at a real terminal (the line discipline signals sbx)
mkdir -p "$T/p0"
tests/cli/pty_drive.py "$SBX" "$id" "$T/p0" exec >"$T/p0.out" 2>&1
h_count_lines "$T/p0.out"
check "ctrl-c: typed at a terminal, the trapping command's status 7 is sbx's" "$(cat "$T/p0/rc" 2>/dev/null)" 7

# cp: 50 MB both ways, streamed
head -c 50000000 /dev/urandom >"$T/big"
/usr/bin/time -f %M -o "$T/rss.up" "$SBX" cp "$T/big" "$id:dir/big.bin"
check "cp: 50 MB in exits 0" "$?" 0
check "cp: 50 MB in arrived byte-exact (md5 inside)" "$(sbx exec "$id" -- md5sum dir/big.bin | cut -d' ' -f1)" "$(md5sum <"$T/big" | cut -d' ' -f1)"
/usr/bin/time -f %M -o "$T/rss.down" "$SBX" cp "$id:dir/big.bin" "$T/big.back"
check "cp: 50 MB out exits 0" "$?" 0
check "cp: 50 MB out byte-exact" "$(md5sum <"$T/big.back")" "$(md5sum <"$T/big")"
# streamed: the 50 MB never sit in sbx's memory (its whole peak RSS is a
# few MB; 25 MB is half the file)
check "cp: streamed in (peak RSS under 25 MB)" "$(($(tail -1 "$T/rss.up") < 25000))" 1
check "cp: streamed out (peak RSS under 25 MB)" "$(($(tail -1 "$T/rss.down") < 25000))" 1
echo keep >"$T/keep"
sbx cp "$id:no/such" "$T/keep" 2>"$T/err"
check "cp: a missing file exits 113 (not_found), the local file untouched" "$?$(cat "$T/keep")" "113keep"
check "cp: to stdout" "$(sbx cp "$id:r2" - | md5sum)" "$(md5sum <"$T/r2")"

# logs
cid=$(sbx exec "$id" -d -- sh -c 'printf abcdef; printf XYZ >&2; read x; printf ghi')
[[ $cid =~ ^cmd_ ]] && pass "exec -d: prints the command id" || fail "exec -d: '$cid'"
# exec -d answers once the command started, not once it printed: ask
# until both streams hold their first output (bounded), then compare
for _ in $(seq 300); do
	sbx logs "$id" "$cid" >"$T/o" 2>"$T/e"
	[ "$(cat "$T/o")|$(cat "$T/e")" = "abcdef|XYZ" ] && break
	sleep 0.1
done
check "logs: what is there so far" "$(cat "$T/o")|$(cat "$T/e")" "abcdef|XYZ"
sbx logs "$id" "$cid" -f >"$T/o" 2>"$T/e" &
p=$!
curl -s -m 30 -H "Authorization: Bearer $KEY" --data-binary 'go' "$SBX_URL/v1/sandboxes/$id/commands/$cid/stdin?eof=1" >/dev/null
wait $p
check "logs -f: follows to the end" "$?|$(cat "$T/o")|$(cat "$T/e")" "0|abcdefghi|XYZ"
sbx logs "$id" "$cid" --since 4 >"$T/o" 2>"$T/e"
check "logs --since 4: skips 4 bytes of both streams" "$(cat "$T/o")|$(cat "$T/e")" "efghi|XYZ"
sbx logs "$id" "$cid" --since 7 >"$T/o" 2>"$T/e"
check "logs --since 7: into the stderr chunk" "$(cat "$T/o")|$(cat "$T/e")" "ghi|YZ"

# run: create, exec, stop
before=$(sbx ls | grep -c ' running ')
out=$(sbx run -- sh -c 'echo ran-$((40+2)); exit 4')
check "run: the command's output and status" "$?|$out" "4|ran-42"
check "run: the sandbox is stopped after" "$(sbx ls | grep -c ' running ')" "$before"

# sh under a real pty: a typed command, stty size, a resize, the terminal
# restored after the shell exits
mkdir -p "$T/p1"
tests/cli/pty_drive.py "$SBX" "$id" "$T/p1" exit >"$T/p1.out" 2>&1
h_count_lines "$T/p1.out"
check "sh: exits with the shell's status" "$(cat "$T/p1/rc" 2>/dev/null)" 5
[ -s "$T/p1/before" ] && cmp -s "$T/p1/before" "$T/p1/after" && pass "sh: terminal settings restored after exit" ||
	fail "sh: terminal settings restored after exit ($(cat "$T/p1/before" "$T/p1/after" 2>&1))"

# https:// and wss:// to a gateway with a self-signed certificate: trusted
# through SSL_CERT_FILE (OpenSSL's default verify paths), refused without
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=localhost" -addext "subjectAltName=DNS:localhost" \
	-keyout "$T/key.pem" -out "$T/cert.pem" >/dev/null 2>&1
tls_port=$(random_port)
SANDBOX_API_KEYS=$KEY start_gateway bin/sandbox-gateway $tls_port "$T/gw.tls.log" --runner-socket "$T/r.sock" \
	--cert "$T/cert.pem" --key "$T/key.pem"
tls() { SSL_CERT_FILE=$T/cert.pem SBX_URL=https://localhost:$tls_port "$SBX" "$@"; }
check "tls: ls over https" "$(tls ls | grep -c "^$id ")" 1
tls exec "$id" -- sh -c 'printf tls-out; printf tls-err >&2; exit 6' >"$T/o" 2>"$T/e"
check "tls: exec over wss: status, stdout, stderr" "$?|$(cat "$T/o")|$(cat "$T/e")" "6|tls-out|tls-err"
SBX_URL=https://localhost:$tls_port SSL_CERT_FILE=/dev/null "$SBX" ls >/dev/null 2>"$T/err"
check "tls: an untrusted certificate is refused (123)" "$?$(grep -c 'certificate verify failed' "$T/err")" 1231

# ... and after the connection drops: a second gateway (it adopts the key's
# sandboxes) is killed under an open shell
first_pid=$GW_PID first_url=$SBX_URL
if start_gw; then
	mkdir -p "$T/p2"
	SBX_URL=http://127.0.0.1:$GW_PORT tests/cli/pty_drive.py "$SBX" "$id" "$T/p2" drop >"$T/p2.out" 2>&1 &
	p=$!
	for _ in $(seq 600); do grep -q READY "$T/p2.out" && break; sleep 0.1; done
	{ kill -9 $GW_PID && wait $GW_PID; } 2>/dev/null
	wait $p
	grep -E '^(PASS|FAIL)' "$T/p2.out" | while read -r l; do echo "$l (drop)"; done
	h_count_lines -q "$T/p2.out"
	check "sh: a dropped connection exits 123" "$(cat "$T/p2/rc" 2>/dev/null)" 123
	[ -s "$T/p2/before" ] && cmp -s "$T/p2/before" "$T/p2/after" && pass "sh: terminal settings restored after the drop" ||
		fail "sh: terminal settings restored after the drop ($(cat "$T/p2/before" "$T/p2/after" 2>&1))"
else
	fail "second gateway did not start"
fi
GW_PID=$first_pid SBX_URL=$first_url

sbx --json stop "$id" >"$T/stop.json"
check "stop: exits 0" "$?" 0
check "stop --json: the stopped object" "$(python3 -c 'import json,sys;d=json.load(open(sys.argv[1]));print(d["id"]==sys.argv[2],d["status"])' "$T/stop.json" "$id")" "True stopped"
check "stop: the sandbox is stopped" "$(sbx --json ls | python3 -c 'import json,sys;print([s["status"] for s in json.load(sys.stdin)["sandboxes"] if s["id"]==sys.argv[1]])' "$id")" "['stopped']"
sbx stop "$id"
check "stop: again is not an error" "$?" 0
h_finish
