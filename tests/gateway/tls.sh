# Gateway to a runner on another host: TCP + mutual TLS (gateway/core/
# gw_tls.c, gw_up.c). Sourced by tests/gateway/run.sh where a runner and
# sandboxes can run; defines suite_tls GATEWAY-BIN. The runner is a real
# sandbox-runner with --listen-tls on loopback (no fd passing, no direct
# agent path: every byte goes through its TLS port, as from another host).
# The certificates are made here with the openssl command line.

tls_certs() { # dir runner-name other-runner-name
	local d=$1
	mkdir -p "$d"
	for ca in ca ca2; do
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$d/$ca.key" \
			-out "$d/$ca.crt" -days 2 -subj "/CN=gateway suite $ca" 2>/dev/null || return 1
	done
	tls_leaf "$d" runner ca "subjectAltName=DNS:$2" serverAuth,clientAuth &&
	tls_leaf "$d" other ca2 "subjectAltName=DNS:$3" serverAuth,clientAuth &&
	tls_leaf "$d" gateway ca "" clientAuth &&
	tls_leaf "$d" gateway2 ca2 "" clientAuth
}

tls_leaf() { # dir name ca san-line eku
	local d=$1
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$d/$2.key" -out "$d/$2.csr" \
		-subj "/CN=$2" 2>/dev/null || return 1
	printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=%s\n%s\n' "$5" "$4" >"$d/$2.ext"
	openssl x509 -req -in "$d/$2.csr" -CA "$d/$3.crt" -CAkey "$d/$3.key" -CAcreateserial \
		-out "$d/$2.crt" -days 2 -extfile "$d/$2.ext" 2>/dev/null
}

# a gateway that must refuse to start: "exit-code matched-message"
tls_gw_refused() { # bin want-text args...
	local bin=$1 want=$2 rc
	shift 2
	SANDBOX_API_KEYS=key-one timeout 20 "$bin" --port "$(random_port)" "$@" >"$T/gw.tlsflag.log" 2>&1
	rc=$?
	echo "$rc $(grep -cF -- "$want" "$T/gw.tlsflag.log")"
}

suite_tls() { # gateway-bin
	local gwb=$1 d=$T/tls rt=gwt$$ ro=gwo$$ tp op gp c id cid t0 A='Authorization: Bearer key-one'
	if ! tls_certs "$d" "$rt" "$ro"; then fail "tls: cannot make the test certificates"; return; fi
	local G="--runner-ca $d/ca.crt --runner-cert $d/gateway.crt --runner-key $d/gateway.key"
	tp=$(random_port)
	op=$((tp + 1))

	# the flags: all three with a TLS runner, each file checked at start
	check "tls flags: a HOST:PORT runner without --runner-ca exits 2 saying what is missing" \
		"$(tls_gw_refused "$gwb" "is a TLS runner: give --runner-ca, --runner-cert and --runner-key" --runner-socket 127.0.0.1:$tp)" "2 1"
	check "tls flags: --runner-ca alone exits 2 (the three go together)" \
		"$(tls_gw_refused "$gwb" "--runner-ca, --runner-cert and --runner-key go together" --runner-socket 127.0.0.1:$tp --runner-ca "$d/ca.crt")" "2 1"
	check "tls flags: an unreadable --runner-ca exits 2 naming it" \
		"$(tls_gw_refused "$gwb" "--runner-ca $d/nope.crt" --runner-socket 127.0.0.1:$tp --runner-ca "$d/nope.crt" --runner-cert "$d/gateway.crt" --runner-key "$d/gateway.key")" "2 1"
	check "tls flags: a --runner-cert that is no certificate exits 2 naming it" \
		"$(tls_gw_refused "$gwb" "--runner-cert $d/gateway.key" --runner-socket 127.0.0.1:$tp --runner-ca "$d/ca.crt" --runner-cert "$d/gateway.key" --runner-key "$d/gateway.key")" "2 1"
	check "tls flags: a --runner-key not matching the certificate exits 2 naming both" \
		"$(tls_gw_refused "$gwb" "--runner-key $d/runner.key does not match the certificate in $d/gateway.crt" --runner-socket 127.0.0.1:$tp --runner-ca "$d/ca.crt" --runner-cert "$d/gateway.crt" --runner-key "$d/runner.key")" "2 1"
	check "tls flags: a runner address that is not numeric exits 2 saying so" \
		"$(tls_gw_refused "$gwb" "not an IPv4 address" --runner-socket runner.example:$tp $G)" "2 1"

	if ! start_runner "$rt" "$T/rt.sock" "$T/tstate" --listen-tls 127.0.0.1:$tp \
		--cert "$d/runner.crt" --key "$d/runner.key" --client-ca "$d/ca.crt"; then
		fail "tls: the TLS runner did not start"; tail -5 "$RUNNER_LOG"; return
	fi
	local rlog=$RUNNER_LOG
	for _ in $(seq 100); do ss -ltnH "sport = :$tp" | grep -q . && break; sleep 0.1; done

	# create, exec, files, logs, WebSocket streams and stop, every byte
	# through the runner's TLS port
	gp=$(random_port)
	GW_LOG=$T/gw.tls.log
	if ! SANDBOX_API_KEYS=key-one,key-two SANDBOX_METRICS_KEY=m-tls start_gateway "$gwb" $gp "$GW_LOG" --runner-socket 127.0.0.1:$tp $G \
		--max-sandboxes-per-key 8; then
		fail "tls: the gateway on the TLS runner did not start"; tail -5 "$GW_LOG"; return
	fi
	local u=http://127.0.0.1:$gp/v1/sandboxes
	c=$(code -H "$A" -d '{"timeout_ms":120000,"ports":[3000]}' $u)
	id=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["id"])' "$T/body" 2>/dev/null)
	check "tls runner: create 201" "$c" 201
	case "$id" in sbx_${rt}_*) pass "tls runner: the id carries the runner's name" ;; *) fail "tls runner: id '$id'"; return ;; esac
	check "tls runner: exec" "$(curl -s -m 20 -H "$A" -d '{"cmd":"sh","args":["-c","echo hi; id -u"]}' $u/$id/commands | python3 -c 'import json,sys;d=json.load(sys.stdin);print(repr(d["stdout"]),d["exit_code"])')" "'hi\\n1000\\n' 0"
	head -c 3000000 /dev/urandom >"$T/tls.big"
	check "tls runner: put 3MB" "$(code -H "$A" --data-binary @"$T/tls.big" -X PUT "$u/$id/files?path=big")" 200
	check "tls runner: get 3MB exact" "$(curl -s -m 30 -H "$A" "$u/$id/files?path=big" | md5sum)" "$(md5sum <"$T/tls.big")"
	# a slow reader: the gateway pauses the runner's TLS stream (flow
	# control) and resumes it; every byte still comes, in order
	check "tls runner: a slow download of 3MB is whole (paused and resumed reads)" \
		"$(curl -s -m 60 --limit-rate 600k -H "$A" "$u/$id/files?path=big" | md5sum)" "$(md5sum <"$T/tls.big")"
	c=$(code -H "$A" -d '{"cmd":"sh","args":["-c","for i in 1 2 3; do echo line$i; sleep 0.2; done"],"detached":true}' $u/$id/commands)
	cid=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["id"])' "$T/body" 2>/dev/null)
	check "tls runner: detached exec, its logs followed to the end" \
		"$c $(curl -s -m 20 -H "$A" "$u/$id/commands/$cid/logs?follow=1" | python3 -c 'import json,sys;print("".join(json.loads(l).get("data","") for l in sys.stdin).split())')" \
		"201 ['line1', 'line2', 'line3']"
	# 12 MB: within the agent's 16 MiB retention, so all of it is there
	c=$(code -H "$A" -d '{"cmd":"sh","args":["-c","head -c 12000000 /dev/urandom | tee /tmp/o"],"detached":true}' $u/$id/commands)
	cid=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["id"])' "$T/body" 2>/dev/null)
	curl -s -m 30 -H "$A" "$u/$id/commands/$cid?wait=1" >/dev/null
	check "tls runner: 12 MB of output streamed byte-exact (logs, base64)" \
		"$(curl -s -m 60 -H "$A" "$u/$id/commands/$cid/logs?encoding=base64" | python3 -c 'import json,sys,base64,hashlib;h=hashlib.md5();[h.update(base64.b64decode(json.loads(l)["data"])) for l in sys.stdin if "data" in l];print(h.hexdigest())')" \
		"$(curl -s -m 20 -H "$A" "$u/$id/files?path=/tmp/o" | md5sum | cut -d' ' -f1)"
	if [ -d node_modules/ws ]; then
		timeout 30 node -e '
			const WebSocket = require("ws");
			const [base, key, sid] = process.argv.slice(1);
			(async () => {
				const r = await fetch(`${base}/v1/sandboxes/${sid}/commands`, { method: "POST",
					headers: { Authorization: `Bearer ${key}` },
					body: JSON.stringify({ cmd: "cat", detached: true }) });
				const cid = (await r.json()).id;
				const ws = new WebSocket(`${base.replace(/^http/, "ws")}/v1/sandboxes/${sid}/commands/${cid}/stream?access_token=${key}`);
				let out = "";
				ws.on("open", () => { ws.send(Buffer.concat([Buffer.from([0]), Buffer.from("over tls\n")])); ws.send(JSON.stringify({ type: "stdin_eof" })); });
				ws.on("message", (d, bin) => { if (bin) out += d.subarray(1).toString(); else if (JSON.parse(d).type === "exit") { console.log(JSON.stringify(out)); ws.close(); } });
				ws.on("error", (e) => console.log("error", e.message));
			})();
		' "http://127.0.0.1:$gp" key-one "$id" >"$T/tls.ws" 2>&1
		check "tls runner: a WebSocket stream: stdin in, stdout out, exit" "$(cat "$T/tls.ws")" '"over tls\n"'
	else
		fail "tls runner: node_modules/ws missing (make node-deps)"
	fi
	# every control connection reads its reply, and with it a new ticket:
	# the next one resumes instead of showing both certificates again
	curl -s -m 10 -H 'Authorization: Bearer m-tls' http://127.0.0.1:$gp/metrics >"$T/tls.metrics"
	check "tls runner: control connections resume their TLS session (a full handshake first)" \
		"$(awk '/^sandbox_gateway_runner_tls_handshakes_total\{kind="full"\}/ {f=$2} /^sandbox_gateway_runner_tls_handshakes_total\{kind="resumed"\}/ {r=$2} END {print (f >= 1), (r >= 1)}' "$T/tls.metrics")" "1 1"
	# kept-alive control connections (gw_up_keep.c): requests one after
	# another (and the status probe between them) share one or two
	# connections, so 20 GETs cost at most a few handshakes, not 20
	hs() { curl -s -m 10 -H 'Authorization: Bearer m-tls' http://127.0.0.1:$gp/metrics |
		awk '/^sandbox_gateway_runner_tls_handshakes_total/ {n += $2} /^sandbox_gateway_runner_kept_requests_total/ {k = $2} END {print n + 0, k + 0}'; }
	read -r h0 k0 <<<"$(hs)"
	n200=0
	for _ in $(seq 20); do [ "$(code -H "$A" $u/$id)" = 200 ] && n200=$((n200 + 1)); done
	read -r h1 k1 <<<"$(hs)"
	echo "  20 GETs: $((h1 - h0)) TLS handshakes, $((k1 - k0)) requests on kept connections"
	check "tls runner: 20 GETs in a row: all 200, at most 4 TLS handshakes, the rest on kept connections" \
		"$n200 $((h1 - h0 <= 4)) $((k1 - k0 >= 16))" "20 1 1"
	# a preview: the runner relays the guest's port (no socket passed)
	code -H "$A" -d '{"cmd":"sh","args":["-c","mkdir -p /tmp/www && echo preview over tls >/tmp/www/index.html && cd /tmp/www && exec python3 -m http.server 3000"],"detached":true}' $u/$id/commands >/dev/null
	for _ in $(seq 100); do
		[ "$(code -H "Host: 3000-$id.localhost" http://127.0.0.1:$gp/index.html)" = 200 ] && break
		sleep 0.2
	done
	check "tls runner: a preview through the runner's relay" \
		"$(curl -s -m 10 -H "Host: 3000-$id.localhost" http://127.0.0.1:$gp/index.html)" "preview over tls"
	check "tls runner: stop" "$(code -H "$A" -X DELETE $u/$id)$(grep -c '"status":"stopped"' "$T/body")" "2001"
	check "tls runner: the runner refused no peer" "$(grep -c 'tls: refused' "$rlog")" 0
	stop_gateway_checked

	# a runner whose certificate is of another CA: refused by the gateway,
	# saying why and where, once
	if start_runner "$ro" "$T/ro.sock" "$T/ostate" --listen-tls 127.0.0.1:$op \
		--cert "$d/other.crt" --key "$d/other.key" --client-ca "$d/ca.crt"; then
		for _ in $(seq 100); do ss -ltnH "sport = :$op" | grep -q . && break; sleep 0.1; done
		gp=$(random_port)
		GW_LOG=$T/gw.tlsother.log
		SANDBOX_API_KEYS=key-one start_gateway "$gwb" $gp "$GW_LOG" --runner-socket 127.0.0.1:$op $G
		c=$(code -H "$A" -d '{}' http://127.0.0.1:$gp/v1/sandboxes)
		check "tls-peer: a runner certificate of another CA: 503 runner_unavailable naming the runner and the reason" \
			"$c $(jerr "127.0.0.1:$op" "certificate" "unable to get local issuer certificate")" "503 runner_unavailable True"
		# the status probe finds it (gw_probe.c): logged once, as the runner's
		# state changes, not once a second; a create does not try a runner
		# that is down
		check "tls-peer: ... logged with the runner's address, once (the runner is down)" \
			"$(grep -c "runner 127.0.0.1:$op: TLS handshake: the runner's certificate: unable to get local issuer certificate" "$GW_LOG")" 1
		check "tls-peer: ... and no sandbox was made there" \
			"$(bin/sandbox-runner ctl status --socket "$T/ro.sock" | python3 -c 'import json,sys;print(json.load(sys.stdin)["runner"]["sandboxes"])')" 0
		stop_gateway_checked
	else
		fail "tls-peer: the other CA's runner did not start"
	fi

	# the runner refuses a gateway whose certificate is of another CA
	gp=$(random_port)
	GW_LOG=$T/gw.tlsrefused.log
	SANDBOX_API_KEYS=key-one start_gateway "$gwb" $gp "$GW_LOG" --runner-socket 127.0.0.1:$tp \
		--runner-ca "$d/ca.crt" --runner-cert "$d/gateway2.crt" --runner-key "$d/gateway2.key"
	c=$(code -H "$A" -d '{}' http://127.0.0.1:$gp/v1/sandboxes)
	check "tls-peer: the runner refuses our certificate: 503 runner_unavailable naming the runner" \
		"$c $(jerr "127.0.0.1:$tp")" "503 runner_unavailable True"
	stop_gateway_checked

	# nothing listens on the runner's port: 503 at once, the connect's own
	# error (refused), not the 5 s connect deadline
	local np; np=$(random_port)
	while ss -ltnH "sport = :$np" | grep -q .; do np=$((np + 1)); done
	gp=$(random_port)
	GW_LOG=$T/gw.tlsnone.log
	SANDBOX_API_KEYS=key-one start_gateway "$gwb" $gp "$GW_LOG" --runner-socket 127.0.0.1:$np $G
	c=$(code -m 4 -H "$A" -d '{}' http://127.0.0.1:$gp/v1/sandboxes)
	check "tls: a refused connect: 503 runner_unavailable saying refused, naming the runner" \
		"$c $(jerr "127.0.0.1:$np" "refused")" "503 runner_unavailable True"
	stop_gateway_checked

	# a port that takes the TCP connect and never answers the handshake:
	# the status probe's deadline (1.5 s, shorter than the connection's own
	# 5 s) marks it down, and a create is a 503 at once, not a hang; curl
	# gets 20 s
	local hp; hp=$(random_port)
	python3 -c 'import socket,sys,time
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16); time.sleep(60)' $hp &
	local hpid=$!
	h_track $hpid
	# listening before the gateway starts: a refused first probe would be
	# another check (on a busy machine python takes its time)
	for _ in $(seq 100); do ss -ltnH "sport = :$hp" | grep -q . && break; sleep 0.1; done
	gp=$(random_port)
	GW_LOG=$T/gw.tlshung.log
	SANDBOX_API_KEYS=key-one GW_WAIT=150 start_gateway "$gwb" $gp "$GW_LOG" --runner-socket 127.0.0.1:$hp $G
	c=$(code -H "$A" -d '{}' http://127.0.0.1:$gp/v1/sandboxes)
	check "tls: a runner that never answers the handshake: 503 runner_unavailable (no status reply)" \
		"$c $(jerr "127.0.0.1:$hp" "no status reply in 1500 ms")" "503 runner_unavailable True"
	stop_gateway_checked
	kill $hpid 2>/dev/null; wait $hpid 2>/dev/null
}
