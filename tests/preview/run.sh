#!/bin/bash
# Preview proxy suite: a real sandbox-runner and sandbox-gateway (ASan build
# where built), a sandbox with ports [3000, 8000] running a node:http server
# (server.js: echo, upload sha256, 50 MB download, SSE, WebSocket echo, a
# hanging and a garbage route; it logs every request head it receives) and
# `python3 -m http.server`; clients are curl, pclient.py and node.
. "$(dirname "$0")/../lib/harness.sh"
h_begin preview-test

if [ -n "$(h_services_missing)" ]; then
	h_skip_suite "preview suite: needs root, bin/sandbox-runner and $IMG/default/rootfs"
fi
GW=build/asan/bin/sandbox-gateway; [ -x $GW ] || GW=bin/sandbox-gateway
PC="python3 tests/preview/pclient.py"
KEY=key-preview A="Authorization: Bearer $KEY"

# a runner name of our own: a runner starting elsewhere on this host kills
# the cgroups of its own name that it has no state for (docs/runner.md)
# one run per driver (tests/run.sh): the isolation of every sandbox
start_runner "pv$$" "$T/r.sock" "$T/state" --default-isolation "${SANDBOX_TEST_ISOLATION:-jail}"

start_gw() { # port log extra-args...
	local port=$1 log=$2; shift 2
	SANDBOX_API_KEYS=$KEY SANDBOX_METRICS_KEY=preview-metrics start_gateway $GW "$port" "$log" \
		--runner-socket "$T/r.sock" --header-timeout 2 "$@" && return 0
	tail -5 "$log"
	return 1
}
P=$(random_port)
start_gw $P "$T/gw.log" --preview-secret-file "$T/psecret" || h_abort "gateway did not start"
GWPID=$GW_PID
API=http://127.0.0.1:$P/v1/sandboxes
code() { curl -s -m 20 -o "$T/body" -w '%{http_code}' "$@"; }
# PREVIEW_CHECKS=vm (tests/run.sh's vm pass, where every sandbox boots a
# VM under TCG): what the driver carries, every byte to and from the
# guest's ports in both gateway modes; the gateway's own parsing, timeouts,
# tokens and TLS, the same under every driver, run in the jail's pass
full() { # what: 0 to run it
	[ "${PREVIEW_CHECKS:-}" = vm ] || return 0
	skip "$1 (the gateway's own: PREVIEW_CHECKS=vm runs what the driver carries)"
	return 1
}
jget() { python3 -c 'import json,sys;d=json.load(open(sys.argv[1]));print(eval("d"+sys.argv[2]))' "$T/body" "$1"; }

check "create with ports" "$(code -H "$A" -d '{"ports":[3000,8000,9000,9100],"timeout_ms":600000}' $API)" 201
ID=$(jget '["id"]')
check "routes listed" "$(jget '["routes"][0]["url"]')" "http://3000-$ID.localhost:$P"
H3=3000-$ID.localhost H8=8000-$ID.localhost
R3="--resolve $H3:$P:127.0.0.1" R8="--resolve $H8:$P:127.0.0.1"
U3=http://$H3:$P U8=http://$H8:$P

# before anything listens
check "502 before the server listens" "$(code $R3 $U3/)" 502
grep -q 'not listening on port 3000\|Nothing is listening on port 3000' "$T/body" && pass "502 page says not listening" || fail "502 page: $(cat "$T/body")"
check "502 on a declared port nobody listens on" "$(code --resolve 9000-$ID.localhost:$P:127.0.0.1 http://9000-$ID.localhost:$P/)" 502
check "403 undeclared port" "$(code --resolve 5000-$ID.localhost:$P:127.0.0.1 http://5000-$ID.localhost:$P/)" 403
hc() { curl -s -m 10 -o /dev/null -w '%{http_code}' -H "Host: $1" http://127.0.0.1:$P/; }
UPID=$(echo "$ID" | tr a-z A-Z)
check "preview-looking hosts never reach the API or a guest (400)" \
	"$(hc 1024-$ID.localhost) $(hc 0-$ID.localhost) $(hc 03000-$ID.localhost) $(hc 3000-$UPID.localhost) $(hc 3000-$ID.evil.localhost) $(hc 3000-$ID.localhost.evil.com) $(hc www.localhost)" \
	"400 400 400 400 400 400 400"
check "404 unknown sandbox" "$(code --resolve 3000-sbx_local_aaaaaaaaaaaaaaaaaaaaaaaa.localhost:$P:127.0.0.1 http://3000-sbx_local_aaaaaaaaaaaaaaaaaaaaaaaa.localhost:$P/)" 404

# start the servers inside the sandbox
check "put server.js" "$(code -H "$A" --data-binary @tests/preview/server.js -X PUT "$API/$ID/files?path=server.js")" 200
check "start node" "$(code -H "$A" -d '{"cmd":"node","args":["server.js"],"detached":true,"env":{"LOG":"/tmp/req.log"}}' "$API/$ID/commands")" 201
check "start http.server" "$(code -H "$A" -d '{"cmd":"python3","args":["-m","http.server","8000","--bind","127.0.0.1"],"detached":true}' "$API/$ID/commands")" 201
up=0
for _ in $(seq 900); do
	[ "$(code $R3 $U3/)" = 200 ] && [ "$(code $R8 $U8/)" = 200 ] && { up=1; break; }
	sleep 0.1
done
check "200 once the servers listen" "$up" 1
guestlog() { curl -s -m 10 -H "$A" "$API/$ID/files?path=/tmp/req.log"; }

check "GET body" "$(curl -s -m 10 $R3 $U3/)" "hello from node"
check "python http.server listing" "$(curl -s -m 10 $R8 $U8/ | grep -c 'server.js')" 1
check "POST echo" "$(curl -s -m 10 $R3 -d 'posted body' $U3/echo)" "posted body"
head -c 300000 /dev/urandom >"$T/up300k"
check "PUT echo 300 KB exact" "$(curl -s -m 20 $R3 -T "$T/up300k" $U3/echo | md5sum)" "$(md5sum <"$T/up300k")"
check "chunked POST echo" "$(printf 'chunky' | curl -s -m 10 $R3 -H 'Transfer-Encoding: chunked' --data-binary @- $U3/echo)" "chunky"
head -c 50000000 /dev/urandom >"$T/up50m"
check "50 MB upload sha256" "$(curl -s -m 60 $R3 -T "$T/up50m" $U3/upload)" "50000000 $(sha256sum <"$T/up50m" | cut -d' ' -f1)"
want=$(python3 -c 'import hashlib;b=bytes((i*7)%251 for i in range(65536));print(hashlib.sha256(b*800).hexdigest())')
check "50 MB download sha256" "$(curl -s -m 60 $R3 $U3/download?mb=50 | sha256sum | cut -d' ' -f1)" "$want"
check "keep-alive: two requests, one connection" \
	"$(curl -s -m 10 -v $R3 $U3/ $U3/ 2>&1 | grep -c 'Re-using existing connection\|Reusing existing')" 1
check "pipelined requests" "$($PC pipeline $P $H3)" 2
# A request on a kept-alive connection costs the gateway a wait, a read
# and a write each way: 2 waits for its loop (4 or more while every write
# waited for a WRITEABLE, a loop turn later; 3 while libuv polled once
# more after every event). The waits are poll(2) on lws's own loop and
# epoll_wait on libuv (--event-loop, the default): both loops are
# counted, both kinds of wait. Counted, not timed; the bound of 3 a
# request leaves room for the connection's routing and the loop's own
# timers; 2 a request is the least there can be (the guest cannot answer
# before the gateway has written, nor the client send before it has read),
# so a count below that means the wait was not the call counted. Only
# where the runner passes the gateway the guest's own socket (jail,
# gvisor): a VM's port comes through the runner's stream to the agent's
# forward, whose frames arrive as they come.
count_waits() { # gateway-pid port label
	local waits nseq
	strace -f -c -e trace=poll,ppoll,epoll_wait,epoll_pwait,epoll_pwait2 -o "$T/waits.$3" -p "$1" \
		2>"$T/strace.$3.err" & sp=$!
	for _ in $(seq 50); do grep -q attached "$T/strace.$3.err" && break; sleep 0.1; done
	nseq=$($PC insequence "$2" $H3 500)
	kill -INT $sp; wait $sp
	waits=$(awk '$NF ~ /^(poll|ppoll|epoll_wait|epoll_pwait|epoll_pwait2)$/ {n += $4} END {print n + 0}' "$T/waits.$3")
	check "$3: 500 requests in sequence on one connection" "$nseq" 500
	check "$3: 2 to 3 waits of the gateway's loop a request (counted $waits for 500)" \
		"$([ "$waits" -ge 1000 ] && [ "$waits" -le 1500 ] && echo yes)" yes
}
if [ "${SANDBOX_TEST_ISOLATION:-jail}" = vm ]; then
	skip "waits a request: a VM's port is not a socket the gateway holds"
elif command -v strace >/dev/null; then
	check "the gateway runs on libuv by default" "$(grep -o 'event loop: [a-z]*' "$T/gw.log")" "event loop: libuv"
	count_waits $GWPID $P libuv
	PL=$((P + 5))
	if start_gw $PL "$T/gwl.log" --event-loop poll; then
		check "--event-loop poll runs on poll" "$(grep -o 'event loop: [a-z]*' "$T/gwl.log")" "event loop: poll"
		count_waits $GW_PID $PL poll
		kill $GW_PID; wait $GW_PID 2>/dev/null
	else
		fail "a gateway with --event-loop poll did not start"
	fi
fi
if full "the gateway without lws's libuv plugin"; then
# without lws's libuv plugin (hidden in a mount namespace of its own)
# the gateway runs on poll, says so once, and serves
plugin=$(ls /usr/lib/*/libwebsockets-evlib_uv.so 2>/dev/null | head -1)
if [ -n "$plugin" ] && command -v unshare >/dev/null; then
	printf '#!/bin/sh\nexec unshare -m sh -c '"'"'mount --bind /dev/null %s && exec "$0" "$@"'"'"' %s "$@"\n' \
		"$plugin" "$PWD/$GW" >"$T/noplugin.sh"
	chmod +x "$T/noplugin.sh"
	PN=$((P + 6))
	if SANDBOX_API_KEYS=$KEY start_gateway "$T/noplugin.sh" $PN "$T/gwn.log" --runner-socket "$T/r.sock" --event-loop uv; then
		check "without the libuv plugin: poll, said once, and the preview answers" \
			"$(grep -c 'cannot run on libuv; using poll' "$T/gwn.log") $(grep -o 'event loop: [a-z]*' "$T/gwn.log") $(code --resolve $H3:$PN:127.0.0.1 http://$H3:$PN/)" \
			"1 event loop: poll 200"
		kill $GW_PID; wait $GW_PID 2>/dev/null
	else
		fail "a gateway without the libuv plugin did not start: $(tail -3 "$T/gwn.log")"
	fi
else
	skip "without the libuv plugin: needs the plugin installed and unshare"
fi
fi
check "keep-alive: chunked POST, CL POST, then GET" "$($PC raw $P "POST /echo HTTP/1.1\r\nHost: $H3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nPOST /echo HTTP/1.1\r\nHost: $H3\r\nContent-Length: 2\r\n\r\nhiGET / HTTP/1.1\r\nHost: $H3\r\nConnection: close\r\n\r\n")" "200 200 200"

if full "empty lines around requests"; then
# RFC 9112 2.2: empty lines before a request line are ignored (a few: one
# more than 8 is a 400). Two of them once sent a preview request to the API
# (the front door took the first empty line for the end of the head), and
# the API's lws closes a request that starts with one, unanswered.
check "empty lines before the first request" \
	"$($PC raw $P "\r\n\r\nGET / HTTP/1.1\r\nHost: $H3\r\nConnection: close\r\n\r\n")" 200
check "empty lines (a bare LF too) between pipelined requests" \
	"$($PC raw $P "GET / HTTP/1.1\r\nHost: $H3\r\n\r\n\r\n\n\r\nGET / HTTP/1.1\r\nHost: $H3\r\nConnection: close\r\n\r\n")" "200 200"
# an empty line after a request starts no head: the connection lives past
# the header timeout (2 s here), as an idle keep-alive connection does
check "an empty line after a request, then a request after the header timeout" \
	"$($PC crlf_keepalive $P $H3 4)" "200 200"
check "nine empty lines: 400" \
	"$($PC raw $P "$(printf '\\r\\n%.0s' 1 2 3 4 5 6 7 8 9)GET / HTTP/1.1\r\nHost: $H3\r\n\r\n")" 400
check "API: empty lines before the request" \
	"$($PC raw $P "\r\n\nGET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")" 200
fi

# X-Forwarded-*: ours replace the client's
curl -s -m 10 $R3 -H 'X-Forwarded-For: 6.6.6.6' -H 'X-Forwarded-Host: evil' $U3/headers >"$T/hdrs"
check "X-Forwarded-For set" "$(python3 -c 'import json,sys;d=json.load(open(sys.argv[1]));print(d.get("x-forwarded-for"),d.get("x-forwarded-proto"),d.get("x-forwarded-host"))' "$T/hdrs")" "127.0.0.1 http $H3:$P"

check "WebSocket echo" "$($PC ws $P $H3)" "101 echo-ok"
if [ -d /work/main/node_modules/ws ] || [ -d node_modules/ws ]; then
	# the ws package connects to the URL's host: resolve it to loopback
	out=$(NODE_PATH=$(pwd)/node_modules:/work/main/node_modules node -e '
		const WebSocket = require("ws");
		const ws = new WebSocket(process.argv[1], { lookup: (h, o, cb) => o && o.all ? cb(null, [{ address: "127.0.0.1", family: 4 }]) : cb(null, "127.0.0.1", 4) });
		ws.on("open", () => ws.send("via ws package"));
		ws.on("message", (m) => { console.log(String(m)); process.exit(0); });
		ws.on("error", (e) => { console.log("error " + e.message); process.exit(1); });
		setTimeout(() => { console.log("timeout"); process.exit(1); }, 5000);' "ws://$H3:$P/ws" 2>&1)
	check "WebSocket echo with the ws package" "$out" "via ws package"
else
	skip "ws package not installed (npm install)"
fi
check "SSE events arrive one by one (each before the next is sent)" "$($PC sse $P $H3)" "one by one"

if full "smuggling and bad heads"; then
# smuggling and bad heads: 400 and nothing reaches the guest
before=$(guestlog | grep -c '^REQ')
check "CL + TE 400" "$($PC raw $P "POST /smuggle1 HTTP/1.1\r\nHost: $H3\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")" 400
check "duplicate CL 400" "$($PC raw $P "POST /smuggle2 HTTP/1.1\r\nHost: $H3\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!")" 400
check "same CL twice 400" "$($PC raw $P "POST /smuggle3 HTTP/1.1\r\nHost: $H3\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello")" 400
check "TE not chunked 400" "$($PC raw $P "POST /smuggle4 HTTP/1.1\r\nHost: $H3\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n")" 400
check "obs-fold 400" "$($PC raw $P "GET /smuggle5 HTTP/1.1\r\nHost: $H3\r\nX-A: b\r\n c\r\n\r\n")" 400
check "space before colon 400" "$($PC raw $P "GET /smuggle6 HTTP/1.1\r\nHost: $H3\r\nContent-Length : 5\r\n\r\nhello")" 400
check "bad chunk size 400" "$($PC raw $P "POST /smuggle7 HTTP/1.1\r\nHost: $H3\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n")" 400
check "bare LF 400" "$($PC raw $P "GET /smuggle8 HTTP/1.1\nHost: $H3\n\n")" 400
check "control char 400" "$($PC raw $P "GET /smuggle9 HTTP/1.1\r\nHost: $H3\r\nX-A: a\x01b\r\n\r\n")" 400
check "two Hosts 400" "$($PC raw $P "GET /smuggle10 HTTP/1.1\r\nHost: $H3\r\nHost: $H8\r\n\r\n")" 400
check "absolute-form 400" "$($PC raw $P "GET http://$H3/smuggle11 HTTP/1.1\r\nHost: $H3\r\n\r\n")" 400
check "header over 16 KiB 431" "$($PC raw $P "GET /big HTTP/1.1\r\nHost: $H3\r\nX-Big: $(head -c 17000 /dev/zero | tr '\0' a)\r\n\r\n")" 431
check "second request for another host: 200 then 421/close" \
	"$($PC raw $P "GET / HTTP/1.1\r\nHost: $H3\r\n\r\nGET / HTTP/1.1\r\nHost: $H8\r\n\r\n")" 200
check "a bad pipelined request after a 5 MB response: all of it, then close" "$($PC drain $P $H3 $H8)" "HTTP/1.1 200 OK 5242880"
sleep 0.3
check "nothing smuggled reached the guest" "$(guestlog | grep -c '^REQ .*/smuggle\|^REQ .*/big')" 0
check "only the pinned-host requests reached the guest" "$(( $(guestlog | grep -c '^REQ') - before ))" 2
fi

# guests that misbehave, clients that dawdle
check "garbage from the guest: 502, gateway fine" "$($PC raw $P "GET /garbage HTTP/1.1\r\nHost: $H3\r\n\r\n")" 502
# a guest's cookies are its preview's own (host-only), and never the
# gateway's token cookie (docs/preview.md)
curl -s -m 10 $R3 -D "$T/ck" -o /dev/null $U3/cookies
check "guest cookies lose their Domain, the token cookie is dropped" \
	"$(grep -i '^set-cookie:' "$T/ck" | tr -d '\r' | tr '\n' '|')" "Set-Cookie: a=1; Path=/; HttpOnly|Set-Cookie: b=2|"
check "a response head with a bare LF: 502, after the response before it" \
	"$($PC raw $P "GET / HTTP/1.1\r\nHost: $H3\r\n\r\nGET /badhead HTTP/1.1\r\nHost: $H3\r\n\r\n")" "200 502"
( curl -s -m 3 $R3 $U3/hang >/dev/null; echo done >"$T/hang" ) &
check "a hanging guest request does not stall others" "$(code $R3 $U3/)" 200
if full "header timeouts, slow readers and idle floods"; then
# closed after the 2 s header timeout (never before it) and long before the
# 15 s the client keeps the head going: lws checks its timeouts once a
# second and the client sees the close on its next write, so 2-3.5 s on an
# idle machine, and a gateway kept off the CPU for a moment closes later
# (4 s, 3 probes in 8 with the gateway stopped for 1.5 s)
closed_in_time() { case "$1" in "closed after "[2-9]"s"*|"closed after 1"[01]"s"*) return 0;; esac; return 1; }
out=$($PC slowloris $P $H3 early)
closed_in_time "$out" && pass "slowloris head times out in the proxy ($out)" || fail "slowloris in the proxy: $out"
out=$($PC slowloris $P $H3)
closed_in_time "$out" && [ "${out##* }" = - ] && pass "slowloris Host times out at the front door ($out)" ||
	fail "slowloris at the front door: $out"

check "slow reader: gateway memory flat, download whole" "$($PC slowread $P $H3 $GWPID)" "flat whole"
check "400 idle connections, the gateway still answers at once" "$($PC idle $P $H3 400)" answered
fi
check "client reset mid-download" "$($PC reset $P $H3)" reset
check "gateway alive after reset and idle flood" "$(code http://127.0.0.1:$P/healthz)" 200

if full "proxy-parse, private previews"; then
# proxy-parse: only a 101 answer makes a connection a splice. rawheads.py
# answers every request, an Upgrade included, with 200 and logs each head
# exactly as it arrives.
H9=9100-$ID.localhost
check "put rawheads.py" "$(code -H "$A" --data-binary @tests/preview/rawheads.py -X PUT "$API/$ID/files?path=rawheads.py")" 200
code -H "$A" -d '{"cmd":"python3","args":["rawheads.py","9100","/tmp/raw.log"],"detached":true}' "$API/$ID/commands" >/dev/null
for _ in $(seq 100); do [ "$(code --resolve $H9:$P:127.0.0.1 http://$H9:$P/ready)" = 200 ] && break; sleep 0.1; done
rawlog() { curl -s -m 10 -H "$A" "$API/$ID/files?path=/tmp/raw.log"; }
check "proxy-parse: Upgrade answered 200, then a request on the same connection" \
	"$($PC upgrade_then $P $H9 "GET /second HTTP/1.1\r\nHost: $H9\r\nX-Forwarded-For: 6.6.6.6\r\nConnection: close\r\n\r\n")" "200 200"
check "proxy-parse: Upgrade and a request sent together, Upgrade answered 200" \
	"$($PC raw $P "GET /up HTTP/1.1\r\nHost: $H9\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nGET /third HTTP/1.1\r\nHost: $H9\r\nX-Forwarded-For: 6.6.6.6\r\nConnection: close\r\n\r\n")" "200 200"
check "proxy-parse: an Upgrade that is not the first request: the connection stays parsed" \
	"$($PC raw $P "GET /a HTTP/1.1\r\nHost: $H9\r\n\r\nGET /up HTTP/1.1\r\nHost: $H9\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nGET /fourth HTTP/1.1\r\nHost: $H9\r\nX-Forwarded-For: 6.6.6.6\r\nConnection: close\r\n\r\n")" "200 200 200"
check "proxy-parse: a smuggling request after an Upgrade answered 200 gets no answer" \
	"$($PC upgrade_then $P $H9 "POST /smuggle-up HTTP/1.1\r\nHost: $H9\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")" "200"
check "proxy-parse: the requests after the Upgrades reached the guest parsed (the proxy's X-Forwarded-For)" \
	"$(rawlog | grep -E '"GET /(second|third|fourth) ' | grep -c 'X-Forwarded-For: 127.0.0.1\\r\\nX-Forwarded-Proto')" 3
check "proxy-parse: no client X-Forwarded-For, nothing smuggled reached the guest" \
	"$(rawlog | grep -c '6\.6\.6\.6\|smuggle-up')" 0
$PC raw $P "\r\n\r\nGET /lead1 HTTP/1.1\r\nHost: $H9\r\n\r\n\n\r\nGET /lead2 HTTP/1.1\r\nHost: $H9\r\nConnection: close\r\n\r\n" >/dev/null
check "proxy-parse: empty lines before requests are not forwarded (each head reached the guest from its method on)" \
	"$(rawlog | grep -c '^"GET /lead[12] ') $(rawlog | grep -c '^"\\[rn]\|^""')" "2 0"

# preview_auth: a private preview needs its token
check "preview_auth must be a bool" "$(code -H "$A" -d '{"preview_auth":"yes"}' $API)" 422
check "no token in a public sandbox's object" "$(curl -s -m 10 -H "$A" $API/$ID | grep -c preview_token)" 0
check "create with preview_auth" "$(code -H "$A" -d '{"ports":[3000],"preview_auth":true}' $API)" 201
PID2=$(jget '["id"]') TOK=$(jget '["preview_token"]')
check "the owner gets a 32-hex token" "$(echo "$TOK" | grep -cE '^[0-9a-f]{32}$')" 1
code -H "$A" -d '{"cmd":"python3","args":["-m","http.server","3000","--bind","127.0.0.1"],"detached":true}' "$API/$PID2/commands" >/dev/null
HP=3000-$PID2.localhost RP="--resolve $HP:$P:127.0.0.1" UP=http://$HP:$P
for _ in $(seq 100); do [ "$(code $RP -H "X-Preview-Token: $TOK" $UP/)" = 200 ] && break; sleep 0.1; done
check "private preview without token 401" "$(code $RP $UP/)" 401
check "private preview, wrong token 401" "$(code $RP -H 'X-Preview-Token: 0123456789abcdef0123456789abcdef' $UP/)" 401
check "private preview, other sandbox's token 401" "$(code $RP -H "X-Preview-Token: $(python3 -c 'print("f"*32)')" $UP/)" 401
check "private preview with X-Preview-Token 200" "$(code $RP -H "X-Preview-Token: $TOK" $UP/)" 200
check "?token= link: 302 to the URL without it" "$(curl -s -m 10 $RP -o /dev/null -w '%{http_code} %{redirect_url}' "$UP/?a=1&token=$TOK&b=2")" "302 $UP/?a=1&b=2"
curl -s -m 10 $RP -c "$T/jar" -o /dev/null "$UP/?token=$TOK"
check "the link's cookie opens the preview" "$(code $RP -b "$T/jar" $UP/)" 200
check "the cookie is HttpOnly, this host only" "$(grep -c "^#HttpOnly_$HP" "$T/jar")" 1
check "a forged token cookie sent first does not shadow the real one" \
	"$(code $RP -H "Cookie: sbx_preview_token=$(python3 -c 'print("0"*32)'); sbx_preview_token=$TOK" $UP/)" 200
check "forged token cookies alone: 401" \
	"$(code $RP -H "Cookie: sbx_preview_token=$(python3 -c 'print("0"*32)'); x=1" $UP/)" 401

check "preview metrics counted (before the restart below)" "$(curl -s -m 5 -H 'Authorization: Bearer preview-metrics' http://127.0.0.1:$P/metrics | awk '/^sandbox_gateway_proxy_requests_total/{print ($2 > 10)}')" 1

# private: the ?token= link redirects only to its own preview host
loc() { $PC location $P "GET $1?token=$TOK HTTP/1.1\r\nHost: ${2:-$HP:$P}\r\n\r\n"; }
check "private: the link's redirect never leaves the preview host" \
	"$(loc //evil.example/) | $(loc '/\\evil.example/') | $(loc /%2F%2Fevil.example/) | $(loc ///evil.example)" \
	"302 $UP//evil.example/ | 302 $UP/\evil.example/ | 302 $UP/%2F%2Fevil.example/ | 302 $UP///evil.example"
check "private: absolute-form targets and odd Host ports are refused" \
	"$(loc http://evil.example/) | $(loc //evil.example/ "$HP:@evil.example") | $(loc / "$HP:80/x")" "400 - | 400 - | 400 -"

# private: the flag (kept by the runner) and the token key (kept in the
# secret file) survive a gateway restart
check "private: the secret file is made 0600 with 64 hex digits" \
	"$(stat -c %a "$T/psecret") $(tr -d '\n' <"$T/psecret" | grep -cE '^[0-9a-f]{64}$')" "600 1"
kill "$GWPID"; wait "$GWPID" 2>/dev/null
if start_gw $P "$T/gw.log" --preview-secret-file "$T/psecret"; then
	GWPID=$GW_PID
	check "private: after a gateway restart, no token is 401" "$(code $RP $UP/)" 401
	check "private: a token from before the restart still opens it" "$(code $RP -H "X-Preview-Token: $TOK" $UP/)" 200
	check "private: so does the cookie from before the restart" "$(code $RP -b "$T/jar" $UP/)" 200
	code -H "$A" $API/$PID2 >/dev/null
	check "private: the restarted gateway shows the owner the same token" "$(jget '["preview_token"]')" "$TOK"
else
	fail "private: the gateway did not restart"
fi
PX=$((P + 3))
if start_gw $PX "$T/gwx.log"; then
	check "private: a gateway with another secret: no token and the old token are 401" \
		"$(code --resolve $HP:$PX:127.0.0.1 http://$HP:$PX/) $(code --resolve $HP:$PX:127.0.0.1 -H "X-Preview-Token: $TOK" http://$HP:$PX/)" "401 401"
else
	fail "private: a gateway without a secret file did not start"
fi
printf '%064d\n' 7 >"$T/psecret644"; chmod 644 "$T/psecret644"
# (timeout: only a gateway that wrongly accepted the file would keep running)
check "private: a secret file others can read is refused" \
	"$(SANDBOX_API_KEYS=$KEY timeout 20 $GW --port 0 --runner-socket "$T/r.sock" --preview-secret-file "$T/psecret644" >/dev/null 2>&1; echo $?)" 1
# a runner whose replies lack preview_auth (or none at all): never the content
python3 tests/preview/strip_runner.py "$T/strip.sock" "$T/r.sock" &
STRIP=$!; h_track $STRIP
for _ in $(seq 100); do [ -S "$T/strip.sock" ] && break; sleep 0.05; done
PZ=$((P + 4))
if start_gw $PZ "$T/gwz.log" --runner-socket "$T/strip.sock"; then
	check "private: a runner that does not say whether a preview is private: 503 (public and private sandbox)" \
		"$(code --resolve $H3:$PZ:127.0.0.1 http://$H3:$PZ/) $(code --resolve $HP:$PZ:127.0.0.1 -H "X-Preview-Token: $TOK" http://$HP:$PZ/)" "503 503"
	kill "$STRIP"; wait "$STRIP" 2>/dev/null
	check "private: runner unreachable: 503" "$(code --resolve $HP:$PZ:127.0.0.1 http://$HP:$PZ/)" 503
else
	fail "private: the gateway on the stripping runner did not start"
fi
code -H "$A" -X DELETE $API/$PID2 >/dev/null
fi

# the same through the runner's spliced stream (runners or drivers that
# cannot pass the guest socket)
PQ=$((P + 2))
if start_gw $PQ "$T/gwq.log" --preview-stream; then
	RQ="--resolve $H3:$PQ:127.0.0.1"
	check "stream mode: GET" "$(curl -s -m 10 $RQ http://$H3:$PQ/)" "hello from node"
	check "stream mode: 50 MB download" "$(curl -s -m 60 $RQ http://$H3:$PQ/download?mb=50 | sha256sum | cut -d' ' -f1)" "$want"
	check "stream mode: upload" "$(curl -s -m 20 $RQ -T "$T/up300k" http://$H3:$PQ/upload)" "300000 $(sha256sum <"$T/up300k" | cut -d' ' -f1)"
	check "stream mode: WebSocket echo" "$($PC ws $PQ $H3)" "101 echo-ok"
	check "stream mode: pipelined" "$($PC pipeline $PQ $H3)" 2
	check "stream mode: 502 not listening" "$(code --resolve 9000-$ID.localhost:$PQ:127.0.0.1 http://9000-$ID.localhost:$PQ/)" 502
	grep -q 'Nothing is listening on port 9000' "$T/body" && pass "stream mode: 502 page says not listening" || fail "stream mode 502 page: $(cat "$T/body")"
else
	fail "stream-mode gateway did not start"
fi

# the API on the same port is untouched
check "API on a non-preview Host" "$(code -H "$A" -H 'Host: api.example' $API/$ID)" 200
check "API healthz by name" "$(code http://localhost:$P/healthz)" 200

if full "HTTPS and the browser"; then
# HTTPS: self-signed wildcard certificate, API and previews on one port
# (a wildcard right under a one-label name is refused by TLS clients, so
# this gateway's preview domain has two labels)
D=preview.localhost HS=3000-$ID.preview.localhost
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=*.$D" \
	-addext "subjectAltName=DNS:*.$D,DNS:localhost" \
	-keyout "$T/key.pem" -out "$T/cert.pem" >/dev/null 2>&1
PS=$((P + 1))
if start_gw $PS "$T/gws.log" --cert "$T/cert.pem" --key "$T/key.pem" --preview-domain $D; then
	RS="--resolve $HS:$PS:127.0.0.1"
	check "https preview GET" "$(curl -s -m 10 -k $RS https://$HS:$PS/)" "hello from node"
	check "https preview proto" "$(curl -s -m 10 -k $RS https://$HS:$PS/headers | python3 -c 'import json,sys;print(json.load(sys.stdin)["x-forwarded-proto"])')" https
	check "https preview verified with the wildcard cert" "$(curl -s -m 10 --cacert "$T/cert.pem" $RS https://$HS:$PS/)" "hello from node"
	check "https keeps ALPN http/1.1" "$(curl -s -m 10 -k --http2 -o /dev/null -w '%{http_version}' $RS https://$HS:$PS/)" 1.1
	check "https 50 MB download" "$(curl -s -m 60 -k $RS https://$HS:$PS/download?mb=50 | sha256sum | cut -d' ' -f1)" "$want"
	check "https API" "$(curl -s -m 10 -k -o /dev/null -w '%{http_code}' -H "$A" https://localhost:$PS/v1/sandboxes)" 200
	check "wss preview echo" "$($PC ws $PS $HS tls)" "101 echo-ok"
	check "plain HTTP on the TLS port refused" "$(curl -s -m 5 -o /dev/null -w '%{http_code}' http://127.0.0.1:$PS/healthz)" 000
else
	fail "TLS gateway did not start"
fi
check "non-loopback plain HTTP refused" "$(SANDBOX_API_KEYS=$KEY $GW --listen-address 0.0.0.0 --port 0 --runner-socket "$T/r.sock" >/dev/null 2>&1; echo $?)" 2

# browser: a preview page that opens a WebSocket to its own server
PW=""
for d in node_modules /work/main/node_modules; do [ -d $d/playwright-core ] && PW=$(cd $d && pwd) && break; done
if [ -x /usr/bin/chromium ] && [ -n "$PW" ]; then
	out=$(NODE_PATH=$PW timeout 60 node tests/preview/browser.cjs "$U3/page" "$P" 2>&1 | tail -1)
	check "chromium page + WebSocket via the preview" "$out" "echo: ping from page"
else
	skip "chromium or playwright-core missing"
fi
fi

if [ "$H_FAIL" != 0 ]; then   # context for a failure
	curl -s -m 5 -H "$A" $API/$ID | head -c 600; echo
	tail -5 "$RUNNER_LOG"
fi
# stop: the preview goes away
check "delete sandbox" "$(code -H "$A" -X DELETE $API/$ID)" 200
check "404 after stop" "$(code $R3 $U3/)" 404
check "gateway alive" "$(code http://127.0.0.1:$P/healthz)" 200
if grep -q 'ERROR: AddressSanitizer\|runtime error' "$T"/gw*.log; then
	fail "sanitizer report"; grep -A20 'ERROR: AddressSanitizer\|runtime error' "$T"/gw*.log | head -40
else
	pass "no sanitizer report"
fi
h_finish
