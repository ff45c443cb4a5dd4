#!/bin/bash
# Gateway suite: real sandbox-gateway (release and ASan builds) with curl.
# REST errors, auth, healthz, metrics and limits need no runner; the
# sandbox flow needs a working sandbox-runner and image, else SKIP.
. "$(dirname "$0")/tls.sh"
. "$(dirname "$0")/runners.sh"
. "$(dirname "$0")/reads.sh"
. "$(dirname "$0")/../lib/harness.sh"
h_begin gw-test

start_gw() { # bin port runner-socket
	SANDBOX_API_KEYS=key-one,key-two SANDBOX_METRICS_KEY=metrics-key start_gateway "$1" "$2" "$T/gw.$2.log" \
		--runner-socket "$3" --max-sandboxes-per-key 2
}

code() { curl -s -m 20 -o "$T/body" -w '%{http_code}' "$@"; }

suite_basic() { # bin port
	local b=$1 u=http://127.0.0.1:$2 A='Authorization: Bearer key-one' n=$(basename "$(dirname "$(dirname "$1")")")
	check "$n healthz" "$(code $u/healthz)" 200
	check "$n no key 401" "$(code $u/v1/sandboxes)" 401
	check "$n wrong key 401" "$(code -H 'Authorization: Bearer nope' $u/v1/sandboxes)" 401
	check "$n unknown path 404" "$(code -H "$A" $u/v1/nothing)" 404
	check "$n bad json 400" "$(code -H "$A" -d '{"a":' $u/v1/sandboxes)" 400
	grep -q 'at byte [0-9]' "$T/body" && pass "$n bad json says where" || fail "$n bad json says where: $(cat $T/body)"
	check "$n not an object 400" "$(code -H "$A" -d '[1]' $u/v1/sandboxes)" 400
	check "$n duplicate key 400" "$(code -H "$A" -d '{"a":1,"a":2}' $u/v1/sandboxes)" 400
	head -c 200000 /dev/zero >"$T/big"
	check "$n body over cap 413" "$(code -H "$A" --data-binary @"$T/big" $u/v1/sandboxes)" 413
	# its runner may be the one that has not said its name (none answers here)
	check "$n unknown sandbox while no runner answers: 503 runner_unavailable" \
		"$(code -H "$A" $u/v1/sandboxes/sbx_local_aaaaaaaaaaaaaaaaaaaaaaaa) $(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["error"]["code"])' "$T/body")" "503 runner_unavailable"
	check "$n bad id chars 404" "$(code -H "$A" "$u/v1/sandboxes/%00x")" 404
	check "$n method 405" "$(code -H "$A" -X PATCH $u/v1/sandboxes)" 405
	check "$n 405 names the path's methods (Allow)" "$(curl -s -m 5 -o /dev/null -D - -H "$A" -X PATCH $u/v1/sandboxes | tr -d '\r' | sed -n 's/^allow: //Ip')" "POST, GET"
	check "$n metrics" "$(curl -s -m 5 -H 'Authorization: Bearer metrics-key' $u/metrics | grep -c '^sandbox_gateway_http_requests_total')" 1
	check "metrics-auth: $n no key 401" "$(code $u/metrics)" 401
	check "metrics-auth: $n an API key is not the metrics key 401" "$(code -H "$A" $u/metrics)" 401
	check "metrics-auth: $n wrong key 401, nothing shown" "$(code -H 'Authorization: Bearer metrics-kez' $u/metrics)$(grep -c sandbox_gateway "$T/body")" 4010
	grep -q 'key-one' "$T/gw.$2.log" && fail "$n key in log" || pass "$n no key in log"
	check "$n listens on loopback only" "$(ss -ltnH "sport = :$2" | awk '{print $4}' | grep -vc '^127.0.0.1:')" 0
	curl -s -m 5 -H "$A" -d '{"a":' $u/v1/sandboxes >/dev/null
	check "$n still alive" "$(code $u/healthz)" 200
}

suite_flow() { # bin port socket
	local u=http://127.0.0.1:$2/v1/sandboxes A='Authorization: Bearer key-one' n=flow
	local c id
	c=$(code -H "$A" -d '{"timeout_ms":60000,"unknown_field":1}' $u)
	check "$n create 201" "$c" 201
	id=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["id"])' "$T/body" 2>/dev/null)
	[ -n "$id" ] || { fail "$n no id"; return; }
	grep -q agent_socket "$T/body" && fail "$n agent_socket leaked" || pass "$n no agent_socket"
	check "isolation: $n the sandbox reports its isolation (the runner's default, ${SANDBOX_TEST_ISOLATION:-jail})" "$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1])).get("isolation"))' "$T/body")" "${SANDBOX_TEST_ISOLATION:-jail}"
	check "$n other key 404" "$(code -H 'Authorization: Bearer key-two' $u/$id)" 404
	check "$n list own" "$(curl -s -m 10 -H "$A" $u | grep -c "$id")" 1
	check "$n list other key empty" "$(curl -s -m 10 -H 'Authorization: Bearer key-two' $u | grep -c "$id")" 0
	printf 'hello\nworld\n' >"$T/f"
	check "$n put file" "$(code -H "$A" --data-binary @"$T/f" -X PUT "$u/$id/files?path=src/a.txt")" 200
	check "$n put chunked 411" "$(code -H "$A" -T "$T/f" -H 'Transfer-Encoding: chunked' "$u/$id/files?path=src/b.txt")" 411
	check "$n put second file" "$(code -H "$A" --data-binary @"$T/f" -X PUT "$u/$id/files?path=src/b.txt")" 200
	check "$n get file" "$(curl -s -m 10 -H "$A" "$u/$id/files?path=src/a.txt" | md5sum)" "$(md5sum <"$T/f")"
	check "$n get chunked-put file" "$(curl -s -m 10 -H "$A" "$u/$id/files?path=src/b.txt" | md5sum)" "$(md5sum <"$T/f")"
	head -c 3000000 /dev/urandom >"$T/big3"
	check "$n put 3MB" "$(code -H "$A" --data-binary @"$T/big3" -X PUT "$u/$id/files?path=big")" 200
	check "$n get 3MB exact" "$(curl -s -m 20 -H "$A" "$u/$id/files?path=big" | md5sum)" "$(md5sum <"$T/big3")"
	# a download that outlives lws's 5 s request deadline: 3 MB read at
	# 400 KB/s takes 7.5 s however fast the machine; every byte must come
	check "$n slow download of 3MB is whole" "$(curl -s -m 60 --limit-rate 400k -H "$A" "$u/$id/files?path=big" | md5sum)" "$(md5sum <"$T/big3")"
	check "$n missing file 404" "$(code -H "$A" "$u/$id/files?path=nope")" 404
	check "$n mkdir" "$(code -H "$A" -d '{"path":"x/y","parents":true}' "$u/$id/files/mkdir")" 200
	check "$n list dir" "$(curl -s -m 10 -H "$A" "$u/$id/files/list?path=src" | grep -c '"b.txt"')" 1
	c=$(code -H "$A" -d '{"cmd":"cat","args":["src/a.txt"]}' "$u/$id/commands")
	check "$n exec 200" "$c" 200
	check "$n exec stdout" "$(python3 -c 'import json,sys;d=json.load(open(sys.argv[1]));print(repr(d["stdout"]),d["exit_code"])' "$T/body")" "'hello\\nworld\\n' 0"
	c=$(code -H "$A" -d '{"cmd":"nosuchprog"}' "$u/$id/commands")
	check "$n exec missing 127" "$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["exit_code"])' "$T/body")" 127
	check "$n exec sudo uid 0" "$(curl -s -m 10 -H "$A" -d '{"cmd":"id","args":["-u"],"sudo":true}' "$u/$id/commands" | python3 -c 'import json,sys;print(json.load(sys.stdin)["stdout"].strip())')" 0
	check "$n exec uid 1000" "$(curl -s -m 10 -H "$A" -d '{"cmd":"id","args":["-u"]}' "$u/$id/commands" | python3 -c 'import json,sys;print(json.load(sys.stdin)["stdout"].strip())')" 1000
	check "$n exec cmd missing 422" "$(code -H "$A" -d '{"args":[]}' "$u/$id/commands")" 422
	check "$n exec wrong type 422" "$(code -H "$A" -d '{"cmd":5}' "$u/$id/commands")" 422
	c=$(code -H "$A" -d '{"cmd":"sleep","args":["30"],"detached":true}' "$u/$id/commands")
	check "$n detached 201" "$c" 201
	local cid
	cid=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["id"])' "$T/body")
	check "$n command status" "$(curl -s -m 10 -H "$A" "$u/$id/commands/$cid" | grep -c '"running"')" 1
	check "$n kill" "$(code -H "$A" -d '{"signal":"SIGKILL"}' "$u/$id/commands/$cid/kill")" 200
	check "$n wait" "$(curl -s -m 10 -H "$A" "$u/$id/commands/$cid?wait=1" | grep -c 'SIGKILL')" 1
	check "$n commands list" "$(curl -s -m 10 -H "$A" "$u/$id/commands" | grep -c "$cid")" 1
	c=$(code -H "$A" -d '{"cmd":"cat","detached":true}' "$u/$id/commands")
	cid=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["id"])' "$T/body")
	check "$n stdin eof" "$(code -H "$A" --data-binary 'abc' "$u/$id/commands/$cid/stdin?eof=1")" 200
	check "$n stdin reached cmd" "$(curl -s -m 10 -H "$A" "$u/$id/commands/$cid?wait=1" | grep -c '"exit_code":0')" 1
	check "$n extend" "$(code -H "$A" -d '{"duration_ms":1000}' "$u/$id/extend")" 200
	check "$n quota: second ok" "$(code -H "$A" -d '{}' $u)" 201
	local id2; id2=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["id"])' "$T/body")
	check "$n quota 429" "$(code -H "$A" -d '{}' $u)" 429
	check "$n timeout quota 422/429" "$(code -H 'Authorization: Bearer key-two' -d '{"timeout_ms":99999999999}' $u)" 429
	check "$n delete" "$(code -H "$A" -X DELETE $u/$id)" 200
	check "$n delete again" "$(code -H "$A" -X DELETE $u/$id)" 200
	check "$n stopped state" "$(curl -s -m 10 -H "$A" $u/$id | grep -c '"stop_reason":"requested"')" 1
	code -H "$A" -X DELETE $u/$id2 >/dev/null
}

# isolation: GET /v1/capabilities and the two 422s of a create
jerr() { python3 -c 'import json,sys;e=json.load(open(sys.argv[1]))["error"];print(e["code"], all(w in e["message"] for w in sys.argv[2:]))' "$T/body" "$@"; }
suite_isolation() { # port (gateway on the suite's runner)
	local u=http://127.0.0.1:$1 A='Authorization: Bearer key-two' n=isolation c
	check "$n: capabilities without a key 401" "$(code $u/v1/capabilities)" 401
	check "$n: capabilities 200" "$(code -H "$A" $u/v1/capabilities)" 200
	check "$n: capabilities lists jail available (reason null), default ${SANDBOX_TEST_ISOLATION:-jail}" \
		"$(python3 -c 'import json,sys;d=json.load(open(sys.argv[1]));j=[x for x in d["isolation"] if x["name"]=="jail"];print(len(j), j[0]["available"], j[0]["reason"], d["default"])' "$T/body")" "1 True None ${SANDBOX_TEST_ISOLATION:-jail}"
	check "$n: capabilities is GET only (405)" "$(code -H "$A" -X POST $u/v1/capabilities)" 405
	c=$(code -H "$A" -d '{"isolation":"nosuch"}' $u/v1/sandboxes)
	check "$n: unknown isolation 422 unknown_isolation naming the known ones" "$c $(jerr nosuch jail)" "422 unknown_isolation True"
	c=$(code -H "$A" -d '{"isolation":["jail"]}' $u/v1/sandboxes)
	check "$n: isolation not a string 422 invalid" "$c $(jerr isolation)" "422 invalid True"
	# vm says how it runs guests: KVM when QEMU runs a guest with it here,
	# else TCG; on microvm when QEMU has it, else q35
	code -H "$A" $u/v1/capabilities >/dev/null
	c=$(python3 -c 'import json,sys;v=[x for x in json.load(open(sys.argv[1]))["isolation"] if x["name"]=="vm"];print("%s %s" % (v[0].get("accel"), v[0].get("machine")) if v and v[0]["available"] else "unavailable")' "$T/body")
	case "$c" in
	"kvm microvm" | "kvm q35" | "tcg microvm" | "tcg q35") pass "$n: capabilities says how vm runs guests ($c)" ;;
	unavailable) skip "$n: vm is not available here: no accel to show" ;;
	*) fail "$n: capabilities: vm's accel and machine are '$c'" ;;
	esac
	c=$(code -H "$A" -d '{"isolation":"jail","timeout_ms":60000}' $u/v1/sandboxes)
	check "$n: isolation jail 201, reported; refused creates took no quota" \
		"$c $(python3 -c 'import json,sys;print(json.load(open(sys.argv[1])).get("isolation"))' "$T/body")" "201 jail"
	local iid; iid=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["id"])' "$T/body" 2>/dev/null)
	check "$n: get reports the isolation" "$(curl -s -m 10 -H "$A" $u/v1/sandboxes/$iid | grep -c '"isolation":"jail"')" 1
	# GET /v1/images: what the runner read of each image's files, against
	# what the image's own node and python say when run in a sandbox of it
	check "images: without a key 401" "$(code $u/v1/images)" 401
	check "images: 200" "$(code -H "$A" $u/v1/images)" 200
	cp "$T/body" "$T/images.json"
	local have want
	have=$(python3 -c 'import json,sys;d={i["name"]:i for i in json.load(open(sys.argv[1]))["images"]}["default"];print("Debian" in d["os"], d["runtimes"].get("node"), d["runtimes"].get("python"), d["created_at"] > 0)' "$T/images.json" 2>&1)
	want="True $(curl -s -m 30 -H "$A" -d '{"cmd":"node","args":["--version"]}' "$u/v1/sandboxes/$iid/commands" | python3 -c 'import json,sys;print(json.load(sys.stdin)["stdout"].strip().lstrip("v"))') $(curl -s -m 30 -H "$A" -d '{"cmd":"python3","args":["--version"]}' "$u/v1/sandboxes/$iid/commands" | python3 -c 'import json,sys;print(json.load(sys.stdin)["stdout"].split()[1])') True"
	check "images: default is Debian, its node and python versions are what they print in a sandbox" "$have" "$want"
	check "images: GET and POST only (405)" "$(code -H "$A" -X PUT $u/v1/images)" 405
	check "images: POST without a name is 422 (tests/oci imports)" "$(code -H "$A" -X POST $u/v1/images)" 422
	c=$(code -H "$A" -d '{"image":"nosuch","timeout_ms":60000}' $u/v1/sandboxes)
	check "images: an unknown image is 422 invalid naming the images there are, never a host path" \
		"$c $(jerr nosuch default) $(grep -c /var "$T/body")" "422 invalid True 0"
	code -H "$A" -X DELETE $u/v1/sandboxes/$iid >/dev/null
}

# GET /v1/sandboxes pages: 7 sandboxes of one key read 3 at a time, each
# once and in id order, a cursor that resumes after any id, and another
# key's sandboxes never on a page
suite_list_pages() { # gateway-bin runner-socket
	local gp u A='Authorization: Bearer key-pages' ids=() all got cur i
	gp=$(random_port)
	if ! SANDBOX_API_KEYS=key-pages,key-other start_gateway "$1" $gp "$T/gw.pages.log" \
		--runner-socket "$2" --max-sandboxes-per-key 9; then
		fail "list pages: the gateway did not start"; return
	fi
	u=http://127.0.0.1:$gp/v1/sandboxes
	for i in 1 2 3 4 5 6 7; do
		code -H "$A" -d '{"timeout_ms":120000}' $u >/dev/null
		ids+=("$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["id"])' "$T/body" 2>/dev/null)")
	done
	code -H 'Authorization: Bearer key-other' -d '{"timeout_ms":120000}' $u >/dev/null
	all=$(printf '%s\n' "${ids[@]}" | sort | tr '\n' ' ')
	got="" cur="" i=0
	while [ $i -lt 6 ]; do
		curl -s -m 20 -H "$A" "$u?limit=3${cur:+&cursor=$cur}" >"$T/page.json"
		got+=$(python3 -c 'import json,sys;print(" ".join(s["id"] for s in json.load(open(sys.argv[1]))["sandboxes"]), end=" ")' "$T/page.json")
		cur=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["next_cursor"] or "")' "$T/page.json")
		i=$((i + 1))
		[ -n "$cur" ] || break
	done
	check "list pages: 7 sandboxes, 3 a page: each once, in id order, over 3 pages" "$got|$i" "$all|3"
	check "list pages: a cursor resumes after its id" \
		"$(curl -s -m 20 -H "$A" "$u?limit=2&cursor=$(echo $all | cut -d' ' -f3)" | python3 -c 'import json,sys;print(" ".join(s["id"] for s in json.load(sys.stdin)["sandboxes"]))')" \
		"$(echo $all | cut -d' ' -f4,5)"
	check "list pages: the default page holds all 7 and ends (next_cursor null)" \
		"$(curl -s -m 20 -H "$A" $u | python3 -c 'import json,sys;d=json.load(sys.stdin);print(len(d["sandboxes"]), d["next_cursor"])')" "7 None"
	check "list pages: limit 0 and 1001, a cursor over 95 bytes: 422" \
		"$(code -H "$A" "$u?limit=0") $(code -H "$A" "$u?limit=1001") $(code -H "$A" "$u?cursor=$(printf 'x%.0s' $(seq 100))")" "422 422 422"
	for i in "${ids[@]}"; do code -H "$A" -X DELETE $u/$i >/dev/null; done
	curl -s -m 20 -H 'Authorization: Bearer key-other' $u | python3 -c 'import json,sys;[print(s["id"]) for s in json.load(sys.stdin)["sandboxes"]]' |
		while read -r i; do code -H 'Authorization: Bearer key-other' -X DELETE $u/$i >/dev/null; done
	kill $GW_PID 2>/dev/null
}

# keepalive: nginx (proxy_read_timeout 5s, its own config and files in
# $T/ngx, nothing of /etc/nginx) in front of gateway A pinging every 2 s and
# gateway B not pinging; keepalive.mjs runs beside the streams suite. Ports
# below the ephemeral range, where no client socket's TIME_WAIT holds them.
keepalive_start() { # gateway-bin runner-socket
	local ga gb na nb d="$T/ngx" lp up
	ga=$(random_port)
	gb=$((ga + 1)) na=$((ga + 2)) nb=$((ga + 3))
	if ! command -v nginx >/dev/null; then skip "keepalive: nginx not installed"; return 1; fi
	SANDBOX_API_KEYS=key-one SANDBOX_METRICS_KEY=metrics-key "$1" --port $ga --runner-socket "$2" --keepalive-s 2 >>"$T/gw.kaA.log" 2>&1 &
	h_track $!
	SANDBOX_API_KEYS=key-one bin/sandbox-gateway --port $gb --runner-socket "$2" --keepalive-s 0 >>"$T/gw.kaB.log" 2>&1 &
	h_track $!
	mkdir -p "$d"
	{
		printf 'daemon off;\nmaster_process off;\npid %s/nginx.pid;\nerror_log %s/error.log info;\n' "$d" "$d"
		printf 'events { worker_connections 64; }\nhttp {\n access_log %s/access.log;\n' "$d"
		for t in client_body proxy fastcgi uwsgi scgi; do printf ' %s_temp_path %s/%s;\n' $t "$d" $t; done
		printf ' map $http_upgrade $connection_upgrade { default upgrade; "" close; }\n'
		for pair in "$na $ga" "$nb $gb"; do
			read -r lp up <<<"$pair"
			printf ' server {\n  listen 127.0.0.1:%s;\n  location / {\n   proxy_pass http://127.0.0.1:%s;\n' $lp $up
			printf '   proxy_http_version 1.1;\n   proxy_set_header Upgrade $http_upgrade;\n'
			printf '   proxy_set_header Connection $connection_upgrade;\n   proxy_read_timeout 5s;\n  }\n }\n'
		done
		printf '}\n'
	} >"$d/nginx.conf"
	nginx -p "$d/" -c "$d/nginx.conf" -e "$d/error.log" &
	h_track $!
	for p in $ga $gb $na $nb; do
		wait_healthz $p 50 || { fail "keepalive: port $p did not answer"; cat "$d/error.log"; return 1; }
	done
	kagb=$gb
	node tests/gateway/keepalive.mjs "http://127.0.0.1:$na" "http://127.0.0.1:$nb" \
		"http://127.0.0.1:$ga" "http://127.0.0.1:$gb" key-one >"$T/keepalive.out" 2>&1 &
	kapid=$!
}
keepalive_finish() {
	wait $kapid
	h_count "$T/keepalive.out"
	# the control's cuts were nginx's own timeout, once for the WebSocket
	# and once for the ndjson (gateway B itself cuts nothing, checked above)
	check "keepalive: nginx timed out the control's two quiet streams, and only those" \
		"$(grep 'upstream timed out' "$T/ngx/error.log" | grep -c "upstream: \"http://127.0.0.1:$kagb/")/$(grep -c 'upstream timed out' "$T/ngx/error.log")" "2/2"
}

# GATEWAY_CHECKS=flow (tests/run.sh's vm pass, where every sandbox is a
# kernel's boot): only the sandbox flow and the isolation checks, which
# are what differ between drivers; the rest runs in the jail pass
if [ "${GATEWAY_CHECKS:-}" = flow ]; then
	[ -z "$(h_services_missing)" ] || h_skip_suite "gateway flow: $(h_services_missing)"
	start_runner "gw$$" "$T/r.sock" "$T/state" --default-isolation "${SANDBOX_TEST_ISOLATION:-jail}"
	gwb=build/asan/bin/sandbox-gateway; [ -x $gwb ] || gwb=bin/sandbox-gateway
	port=$(random_port)
	if start_gw $gwb $port "$T/r.sock"; then suite_flow $gwb $port "$T/r.sock"; suite_isolation $port; else fail "gateway with runner did not start"; fi
	h_finish
fi

port=$(random_port)
for b in bin/sandbox-gateway build/asan/bin/sandbox-gateway; do
	if [ ! -x "$b" ]; then skip "$b not built"; continue; fi
	port=$((port + 1))
	if start_gw "$b" $port "$T/none.sock"; then suite_basic "$b" $port; else fail "$b did not start"; fi
done

# idle and slowloris connections (no runner needed)
port=$((port + 1))
SANDBOX_API_KEYS=key-one start_gateway bin/sandbox-gateway $port "$T/gw.slow.log" --runner-socket "$T/none.sock"
python3 tests/gateway/slow.py $port $GW_PID >"$T/slow.out" 2>&1
h_count_lines "$T/slow.out" 4

# flags: numbers are checked (exit 2 naming the flag), --help lists every
# flag with its default
check "flags: --port abc is refused (exit 2)" "$(SANDBOX_API_KEYS=k timeout 10 bin/sandbox-gateway --port abc 2>"$T/flag.err"; echo $?)" 2
grep -q -- "--port: 'abc' is not a whole number from 0 to 65535" "$T/flag.err" && pass "flags: the error names the flag and its range" || fail "flags: error: $(cat "$T/flag.err")"
check "flags: --port 70000 is refused (exit 2)" "$(SANDBOX_API_KEYS=k timeout 10 bin/sandbox-gateway --port 70000 2>/dev/null; echo $?)" 2
check "flags: --max-sandboxes-per-key -1 is refused (exit 2)" "$(SANDBOX_API_KEYS=k timeout 10 bin/sandbox-gateway --max-sandboxes-per-key -1 2>/dev/null; echo $?)" 2
check "flags: --header-timeout 5x is refused (exit 2)" "$(SANDBOX_API_KEYS=k timeout 10 bin/sandbox-gateway --header-timeout 5x 2>/dev/null; echo $?)" 2
check "flags: an unknown flag is refused (exit 2)" "$(SANDBOX_API_KEYS=k timeout 10 bin/sandbox-gateway --nope 2>/dev/null; echo $?)" 2
check "flags: --help exits 0" "$(timeout 10 bin/sandbox-gateway --help >"$T/help.out" 2>&1; echo $?)" 0
missing=""
for f in port listen-address runner-socket keys-file preview-domain max-sandboxes-per-key max-timeout-ms \
	web-dir state-dir image-dir cert key insecure-http header-timeout idle-timeout preview-stream \
	keepalive-s metrics-key-file preview-secret-file fd-reserve preview-max-per-sandbox \
	preview-max-per-client drivers default-isolation verbose; do
	grep -q -- "^  --$f[ ].*(default" "$T/help.out" || missing="$missing $f"
done
check "flags: --help lists every flag with its default" "$missing" ""

# one way out: a gateway stopped (SIGTERM) while its embedded runner is
# still starting stops that runner and removes its runtime directory (a
# signal in that window used to end the gateway at once and leave both).
# A stand-in runner beside a copy of the gateway never listens, so the
# gateway is surely in that window.
mkdir -p "$T/fake"
cp bin/sandbox-gateway "$T/fake/"
printf '#!/bin/sh\necho $$ >"$FAKE_RUNNER_PID"\nexec sleep 120\n' >"$T/fake/sandbox-runner"
chmod +x "$T/fake/sandbox-runner"
port=$((port + 1))
FAKE_RUNNER_PID="$T/fake.pid" SANDBOX_API_KEYS=key-one "$T/fake/sandbox-gateway" --port $port >"$T/gw.fake.log" 2>&1 &
fgw=$!
for _ in $(seq 100); do [ -s "$T/fake.pid" ] && break; sleep 0.1; done
kill -TERM $fgw; wait $fgw; frc=$?
fpid=$(cat "$T/fake.pid" 2>/dev/null)
fdir=$(sed -n 's/.*starting the local runner .* (state \(\/tmp\/sandbox-gateway\.[A-Za-z0-9]*\)\/state.*/\1/p' "$T/gw.fake.log")
check "shutdown: SIGTERM while the embedded runner starts: exit 1, that runner stopped" \
	"$frc-$(kill -0 "$fpid" 2>/dev/null && echo running || echo stopped)" "1-stopped"
check "shutdown: ... and its runtime directory removed" "$([ -n "$fdir" ] && [ ! -e "$fdir" ] && echo removed || echo "left: '$fdir'")" removed
[ -n "$fpid" ] && kill "$fpid" 2>/dev/null
# a start-up failure after the runner started (the port is taken) takes the same way out
port=$((port + 1))
python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1",int(sys.argv[1]))); s.listen(); time.sleep(60)' $port &
busy=$!; h_track $busy
for _ in $(seq 50); do ss -ltnH "sport = :$port" | grep -q . && break; sleep 0.1; done
rm -f "$T/fake.pid"
printf '#!/bin/sh\necho $$ >"$FAKE_RUNNER_PID"\nexec python3 -c "import socket,sys,time; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(); time.sleep(120)" "$2"\n' >"$T/fake/sandbox-runner"
FAKE_RUNNER_PID="$T/fake.pid" SANDBOX_API_KEYS=key-one timeout 60 "$T/fake/sandbox-gateway" --port $port >"$T/gw.fake2.log" 2>&1; frc=$?
fpid=$(cat "$T/fake.pid" 2>/dev/null)
fdir=$(sed -n 's/.*starting the local runner .* (state \(\/tmp\/sandbox-gateway\.[A-Za-z0-9]*\)\/state.*/\1/p' "$T/gw.fake2.log")
check "shutdown: the port is taken: exit 1, the embedded runner stopped, its directory removed" \
	"$frc-$(kill -0 "$fpid" 2>/dev/null && echo running || echo stopped)-$([ -n "$fdir" ] && [ ! -e "$fdir" ] && echo removed || echo left)" "1-stopped-removed"
[ -n "$fpid" ] && kill "$fpid" 2>/dev/null
kill $busy 2>/dev/null

if [ -z "$(h_services_missing)" ]; then
	# one run per driver (tests/run.sh): the isolation of every sandbox
	start_runner "gw$$" "$T/r.sock" "$T/state" --default-isolation "${SANDBOX_TEST_ISOLATION:-jail}"
	rpid=$RUNNER_PID   # frozen by the owner-sync check below
	port=$((port + 1))
	gwb=build/asan/bin/sandbox-gateway; [ -x $gwb ] || gwb=bin/sandbox-gateway
	if start_gw $gwb $port "$T/r.sock"; then suite_flow $gwb $port "$T/r.sock"; suite_isolation $port; else fail "gateway with runner did not start"; fi
	suite_list_pages $gwb "$T/r.sock"
	# a runner whose only driver cannot run (no agent): listed unavailable
	# with the reason, and a create is 422 isolation_unavailable
	start_runner "gwu$$" "$T/ru.sock" "$T/ustate" --drivers jail --agent /nonexistent/sandbox-agent
	port=$((port + 1))
	if start_gw $gwb $port "$T/ru.sock"; then
		check "isolation: an unavailable driver is listed with its reason" \
			"$(curl -s -m 10 -H 'Authorization: Bearer key-one' http://127.0.0.1:$port/v1/capabilities | python3 -c 'import json,sys;d=json.load(sys.stdin);print([(x["name"],x["available"],"/nonexistent/sandbox-agent" in x["reason"]) for x in d["isolation"]])')" \
			"[('jail', False, True), ('gvisor', False, False), ('vm', False, False)]"
		c=$(code -H 'Authorization: Bearer key-one' -d '{}' http://127.0.0.1:$port/v1/sandboxes)
		check "isolation: create on an unavailable driver 422 isolation_unavailable with the reason" \
			"$c $(jerr jail /nonexistent/sandbox-agent)" "422 isolation_unavailable True"
	else
		fail "gateway on the runner without an agent did not start"
	fi
	# WebSocket streams, terminals, ndjson logs: a separate gateway (the
	# flow above used up key-one's quota), with the `ws` client from npm
	port=$((port + 1))
	SANDBOX_API_KEYS=key-one,key-two SANDBOX_METRICS_KEY=metrics-key start_gateway $gwb $port "$T/gw.$port.log" \
		--runner-socket "$T/r.sock" --max-sandboxes-per-key 8
	sgw=$GW_PID
	if [ -d node_modules/ws ]; then
		keepalive_start $gwb "$T/r.sock" && ka=1 || ka=0
		node tests/gateway/streams.mjs "http://127.0.0.1:$port" key-one key-two "$sgw" >"$T/streams.out" 2>&1
		h_count "$T/streams.out"
		[ $ka = 1 ] && keepalive_finish
		# the same on poll (the checks above ran on the default, libuv):
		# a stream's output is written as it is read and from WRITEABLE
		# alike, whichever loop tells the gateway a socket is ready (gw_ws.c)
		port=$((port + 1))
		SANDBOX_API_KEYS=key-one,key-two SANDBOX_METRICS_KEY=metrics-key start_gateway $gwb $port \
			"$T/gw.$port.log" --runner-socket "$T/r.sock" --max-sandboxes-per-key 8 --event-loop poll
		check "streams on poll: the gateway runs on poll" \
			"$(grep -o 'event loop: [a-z]*' "$T/gw.$port.log")" "event loop: poll"
		node tests/gateway/streams.mjs "http://127.0.0.1:$port" key-one key-two "$GW_PID" \
			>"$T/streams_poll.out" 2>&1
		sed -i -E 's/^(PASS|FAIL|SKIP): /\1: poll: /' "$T/streams_poll.out"
		h_count "$T/streams_poll.out"
		node tests/gateway/stream_whole.mjs "http://127.0.0.1:$port" key-two "one large stream, poll" \
			>"$T/whole_poll.out" 2>&1
		h_count "$T/whole_poll.out"
		# and over TLS (lws writes through OpenSSL), on each loop
		openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/ws-tls.key" -out "$T/ws-tls.crt" \
			-days 2 -subj /CN=localhost >/dev/null 2>&1
		for loop in poll uv; do
			port=$((port + 1))
			SANDBOX_API_KEYS=key-one start_gateway $gwb $port "$T/gw.$port.log" \
				--runner-socket "$T/r.sock" --event-loop $loop --cert "$T/ws-tls.crt" --key "$T/ws-tls.key"
			node tests/gateway/stream_whole.mjs "https://127.0.0.1:$port" key-one \
				"one large stream over TLS, $loop" >"$T/whole_tls_$loop.out" 2>&1
			h_count "$T/whole_tls_$loop.out"
		done
	else
		fail "streams: node_modules/ws missing (make node-deps)"
	fi
	# query arguments at their longest, stream-token scopes: a gateway with
	# a key of the longest length a key may have (255 bytes)
	port=$((port + 1))
	longkey=$(head -c 255 /dev/zero | tr '\0' L)
	SANDBOX_API_KEYS=key-one,$longkey start_gateway $gwb $port "$T/gw.$port.log" --runner-socket "$T/r.sock"
	node tests/gateway/access.mjs "http://127.0.0.1:$port" key-one "$longkey" >"$T/access.out" 2>&1
	h_count "$T/access.out"
	# whole strings: a NUL in any string of a JSON body (REST, stream
	# messages, the @vercel/sandbox routes) is refused naming the field
	port=$((port + 1))
	SANDBOX_API_KEYS=key-nul start_gateway $gwb $port "$T/gw.$port.log" --runner-socket "$T/r.sock"
	python3 tests/gateway/nul.py $port key-nul >"$T/nul.out" 2>&1
	h_count "$T/nul.out"
	# a runner on another host: TCP + mutual TLS (tls.sh)
	suite_tls $gwb
	# several runners behind one gateway, two gateways on them (runners.sh)
	suite_runners $gwb
	suite_runner_busy $gwb
	# files whose size at open is not their length (reads.sh)
	port=$((port + 1))
	suite_reads $gwb "$T/r.sock" $port
	# a runner of this host that stops listening has lost its sandboxes:
	# the streams that went straight to their agents end at once with
	# close 4502 saying so (the stream layer's runner_lost hook), not
	# when their sandboxes are reaped. The runner is then started again on
	# its state, which reaps what its predecessor left, and stopped.
	if start_runner "gwl$$" "$T/rl.sock" "$T/lstate" --default-isolation "${SANDBOX_TEST_ISOLATION:-jail}"; then
		lrun=$RUNNER_PID
		port=$((port + 1))
		SANDBOX_API_KEYS=key-one start_gateway $gwb $port "$T/gw.lost.log" --runner-socket "$T/rl.sock"
		code -H 'Authorization: Bearer key-one' -d '{}' http://127.0.0.1:$port/v1/sandboxes >/dev/null
		lid=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["id"])' "$T/body" 2>/dev/null)
		code -H 'Authorization: Bearer key-one' -d '{"cmd":"sleep","args":["60"],"detached":true}' \
			http://127.0.0.1:$port/v1/sandboxes/$lid/commands >/dev/null
		lcid=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["id"])' "$T/body" 2>/dev/null)
		timeout 60 node -e '
			const WebSocket = require("ws");
			const ws = new WebSocket(process.argv[1]);
			let msg = "";
			ws.on("open", () => console.log("open"));
			ws.on("message", (d) => { msg = d.toString(); });
			ws.on("close", (c) => { console.log(c, msg.includes("the runner went away")); });
		' "ws://127.0.0.1:$port/v1/sandboxes/$lid/commands/$lcid/stream?access_token=key-one" >"$T/lost.out" 2>&1 &
		lnode=$!
		for _ in $(seq 300); do grep -q '^open$' "$T/lost.out" && break; kill -0 $lnode 2>/dev/null || break; sleep 0.1; done
		kill -KILL $lrun; wait $lrun 2>/dev/null
		wait $lnode
		check "runner-lost: a killed runner's open stream ends (close 4502, the runner went away)" \
			"$(tr '\n' ' ' <"$T/lost.out")" "open 4502 true "
		check "runner-lost: the gateway logs the streams it ended" \
			"$(grep -c "runner gwl$$ .* is gone: 1 stream(s) of its sandboxes ended" "$T/gw.lost.log")" 1
		rm -f "$T/rl.sock"
		start_runner "gwl$$" "$T/rl.sock" "$T/lstate" --default-isolation "${SANDBOX_TEST_ISOLATION:-jail}" &&
			{ kill -TERM $RUNNER_PID; wait $RUNNER_PID 2>/dev/null; }
	else
		fail "runner-lost: its runner did not start"
	fi
	if grep -q 'ERROR: AddressSanitizer\|runtime error' "$T"/gw.*.log; then fail "sanitizer report"; grep -A20 'ERROR: AddressSanitizer\|runtime error' "$T"/gw.*.log | head -40; else pass "no sanitizer report"; fi
	# a gateway killed with -9 and started again knows its keys' sandboxes
	# (owner tags kept by the runner) and a command's output is all there
	port=$((port + 1))
	SANDBOX_API_KEYS=key-one,key-two start_gateway bin/sandbox-gateway $port "$T/gw.restart.log" --runner-socket "$T/r.sock"
	rgw=$GW_PID
	code -H 'Authorization: Bearer key-two' -d '{}' http://127.0.0.1:$port/v1/sandboxes >/dev/null
	rid=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["id"])' "$T/body" 2>/dev/null)
	code -H 'Authorization: Bearer key-two' -d '{"cmd":"sh","args":["-c","echo before; sleep 1; echo after"],"detached":true}' \
		http://127.0.0.1:$port/v1/sandboxes/$rid/commands >/dev/null
	rcid=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["id"])' "$T/body" 2>/dev/null)
	kill -9 $rgw; wait $rgw 2>/dev/null
	SANDBOX_API_KEYS=key-one,key-two start_gateway bin/sandbox-gateway $port "$T/gw.restart.log" --runner-socket "$T/r.sock"
	check "gateway restart: the key still sees its sandbox" "$(code -H 'Authorization: Bearer key-two' http://127.0.0.1:$port/v1/sandboxes/$rid)" 200
	check "gateway restart: another key still does not" "$(code -H 'Authorization: Bearer key-one' http://127.0.0.1:$port/v1/sandboxes/$rid)" 404
	check "gateway restart: the command's output is whole" "$(curl -s -m 10 -H 'Authorization: Bearer key-two' "http://127.0.0.1:$port/v1/sandboxes/$rid/commands/$rcid/logs?follow=1" | python3 -c 'import json,sys;print("".join(json.loads(l).get("data","") for l in sys.stdin))')" "$(printf 'before\nafter\n')"
	grep -q "$(printf '%s' key-two)" "$T/gw.restart.log" && fail "gateway restart: key in log" || true
	code -H 'Authorization: Bearer key-two' -X DELETE http://127.0.0.1:$port/v1/sandboxes/$rid >/dev/null

	# stream tokens across gateways sharing --preview-secret-file
	head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$T/psecret.shared"; echo >>"$T/psecret.shared"
	head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$T/psecret.other"; echo >>"$T/psecret.other"
	chmod 600 "$T/psecret.shared" "$T/psecret.other"
	for g in 1 2 3; do
		f=shared; [ $g = 3 ] && f=other
		SANDBOX_API_KEYS=key-one start_gateway bin/sandbox-gateway $((port + g)) "$T/gw.across$g.log" \
			--runner-socket "$T/r.sock" --preview-secret-file "$T/psecret.$f"
	done
	node tests/gateway/token_across.mjs http://127.0.0.1:$((port + 1)) http://127.0.0.1:$((port + 2)) \
		http://127.0.0.1:$((port + 3)) key-one >"$T/across.out" 2>&1
	h_count "$T/across.out"
	port=$((port + 3))

	# SIGHUP re-reads the keys: a removed key is refused at once and its open
	# streams end; an added key works
	port=$((port + 1))
	printf 'key-a\nkey-b\n' >"$T/keys"
	start_gateway bin/sandbox-gateway $port "$T/gw.hup.log" --runner-socket "$T/r.sock" --keys-file "$T/keys"
	hgw=$GW_PID
	code -H 'Authorization: Bearer key-b' -d '{}' http://127.0.0.1:$port/v1/sandboxes >/dev/null
	hid=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["id"])' "$T/body" 2>/dev/null)
	code -H 'Authorization: Bearer key-b' -d '{"cmd":"sleep","args":["30"],"detached":true}' http://127.0.0.1:$port/v1/sandboxes/$hid/commands >/dev/null
	hcid=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["id"])' "$T/body" 2>/dev/null)
	# the stream is open before the keys change (node may take seconds to
	# start on a busy machine), and the checks wait for the reload's line
	# (the signal is handled in the gateway's loop, a moment after kill)
	timeout 60 node -e '
		const WebSocket = require("ws");
		const ws = new WebSocket(process.argv[1]);
		let msg = "";
		ws.on("open", () => console.log("open"));
		ws.on("message", (d) => { msg = d.toString(); });
		ws.on("close", (c) => { console.log(c, msg.includes("revoked")); });
	' "ws://127.0.0.1:$port/v1/sandboxes/$hid/commands/$hcid/stream?access_token=key-b" >"$T/hup.out" 2>&1 &
	hnode=$!
	for _ in $(seq 300); do grep -q '^open$' "$T/hup.out" && break; kill -0 $hnode 2>/dev/null || break; sleep 0.1; done
	nrel=$(grep -c 'keys reloaded' "$T/gw.hup.log")
	printf 'key-a\nkey-c\n' >"$T/keys"
	kill -HUP $hgw
	for _ in $(seq 300); do [ "$(grep -c 'keys reloaded' "$T/gw.hup.log")" -gt "$nrel" ] && break; sleep 0.1; done
	check "SIGHUP: a removed key is refused" "$(code -H 'Authorization: Bearer key-b' http://127.0.0.1:$port/v1/sandboxes)" 401
	check "SIGHUP: an added key works" "$(code -H 'Authorization: Bearer key-c' http://127.0.0.1:$port/v1/sandboxes)" 200
	wait $hnode
	check "SIGHUP: the open stream of the removed key ends (close 4401, revoked)" "$(tr '\n' ' ' <"$T/hup.out")" "open 4401 true "
	check "SIGHUP: the gateway is still up" "$(code http://127.0.0.1:$port/healthz)" 200

	# the loop never waits for the runner: a revoked key's sandboxes are
	# stopped by runner calls whose replies nobody waits for. With the
	# runner frozen (SIGSTOP) the reload is done and the gateway answers
	# while the stop is still unconfirmed (the gateway used to wait for the
	# runner inside the loop, up to 2 s a sandbox, and log the stop as done
	# before the reload line); the stop is confirmed once the runner runs.
	code -H 'Authorization: Bearer key-c' -d '{}' http://127.0.0.1:$port/v1/sandboxes >/dev/null
	fid=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["id"])' "$T/body" 2>/dev/null)
	printf 'key-a\n' >"$T/keys"
	nrel=$(grep -c 'keys reloaded' "$T/gw.hup.log")
	nstop=$(grep 'revoked key .*stopped$' "$T/gw.hup.log" | grep -vc "$hid")
	kill -STOP $rpid
	kill -HUP $hgw
	for _ in $(seq 100); do [ "$(grep -c 'keys reloaded' "$T/gw.hup.log")" -gt "$nrel" ] && break; sleep 0.1; done
	check "owner-sync: with the runner frozen, the reload is done and /healthz answers" \
		"$(grep -c 'keys reloaded' "$T/gw.hup.log")-$(code http://127.0.0.1:$port/healthz)" "$((nrel + 1))-200"
	check "owner-sync: the revoked key's stop is not yet confirmed while the runner is frozen" \
		"$(grep 'revoked key .*stopped$' "$T/gw.hup.log" | grep -vc "$hid")" "$nstop"
	check "owner-sync: the API answers while the runner is frozen (a removed key 401)" \
		"$(code -H 'Authorization: Bearer key-c' http://127.0.0.1:$port/v1/sandboxes)" 401
	kill -CONT $rpid
	for _ in $(seq 300); do grep -q "sandbox $fid stopped" "$T/gw.hup.log" && break; sleep 0.1; done
	check "owner-sync: once the runner runs again the stop is confirmed" "$(grep -c "revoked key [0-9]*: sandbox $fid stopped" "$T/gw.hup.log")" 1

	# a key revoked while its create is on its way (the runner frozen):
	# the key added in the same reload does not take its place, so the
	# sandbox made for the revoked key is nobody's and stops, and is not
	# the new key's (it was, with the revoked key's count on it)
	reload_keys() { # KEYS...: the keys file, SIGHUP, the reload's line
		local n
		n=$(grep -c 'keys reloaded' "$T/gw.hup.log")
		printf '%s\n' "$@" >"$T/keys"
		kill -HUP $hgw
		for _ in $(seq 300); do [ "$(grep -c 'keys reloaded' "$T/gw.hup.log")" -gt "$n" ] && break; sleep 0.1; done
	}
	reload_keys key-a key-d
	kill -STOP $rpid
	curl -s -m 60 -o "$T/late.body" -w '%{http_code}' -H 'Authorization: Bearer key-d' -d '{}' \
		http://127.0.0.1:$port/v1/sandboxes >"$T/late.code" &
	lcurl=$!
	sleep 0.5
	reload_keys key-a key-e
	kill -CONT $rpid
	wait $lcurl
	lid=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["id"])' "$T/late.body" 2>/dev/null)
	if [ "$(cat "$T/late.code")" = 201 ] && [ -n "$lid" ]; then
		for _ in $(seq 300); do grep -q "sandbox $lid stopped" "$T/gw.hup.log" && break; sleep 0.1; done
		check "revoked mid-create: the key added beside it cannot reach its sandbox (404)" \
			"$(code -H 'Authorization: Bearer key-e' http://127.0.0.1:$port/v1/sandboxes/$lid)" 404
		check "revoked mid-create: the sandbox made for the revoked key is stopped" \
			"$(grep -c "revoked key [0-9]*: sandbox $lid stopped" "$T/gw.hup.log")" 1
	else
		skip "revoked mid-create: the create did not reach the frozen runner ($(cat "$T/late.code"))"
	fi


	# the embedded default: no --runner-socket, the gateway runs its own
	# runner; SIGTERM stops it all and leaves no runtime dir or process.
	# This gateway's own directory (its log names it) and processes: other
	# gateways on the host come and go meanwhile.
	rundir() { sed -n 's/.*starting the local runner .* (state \(\/tmp\/sandbox-gateway\.[A-Za-z0-9]*\)\/state.*/\1/p' "$1"; }
	port=$((port + 1))
	SANDBOX_API_KEYS=key-one SANDBOX_IMAGE_DIR="$IMG" start_gateway bin/sandbox-gateway $port "$T/gw.embedded.log" \
		--drivers jail --default-isolation jail
	egw=$GW_PID
	c=$(code -H 'Authorization: Bearer key-one' -d '{}' http://127.0.0.1:$port/v1/sandboxes)
	eid=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["id"])' "$T/body" 2>/dev/null)
	check "embedded runner: create 201" "$c" 201
	check "embedded runner: --drivers/--default-isolation reach it (capabilities)" \
		"$(curl -s -m 10 -H 'Authorization: Bearer key-one' http://127.0.0.1:$port/v1/capabilities)" \
		'{"isolation":[{"name":"jail","available":true,"reason":null},{"name":"gvisor","available":false,"reason":"not enabled on this runner (--drivers)"},{"name":"vm","available":false,"reason":"not enabled on this runner (--drivers)"}],"default":"jail"}'
	kill -TERM $egw; wait $egw 2>/dev/null
	edir=$(rundir "$T/gw.embedded.log")
	check "embedded runner: SIGTERM leaves no runtime dir" "$([ -n "$edir" ] && [ ! -e "$edir" ] && echo removed || echo "left: '$edir'")" removed
	check "embedded runner: no sandbox process left" "$([ -n "$edir" ] && pgrep -f -- "$edir/" | wc -l)$(grep -c "$eid: stopped" "$T/gw.embedded.log")" "01"
	# an isolation the registry does not know stops the embedded runner,
	# and with it the gateway, at start, saying which names exist
	port=$((port + 1))
	SANDBOX_API_KEYS=key-one SANDBOX_IMAGE_DIR="$IMG" timeout 30 bin/sandbox-gateway --port $port \
		--default-isolation nosuch >"$T/gw.embedded2.log" 2>&1
	check "embedded runner: an unknown --default-isolation stops the gateway at start" \
		"$? $(grep -c 'no driver "nosuch" (known: jail, gvisor, vm)' "$T/gw.embedded2.log")" "1 1"
	edir=$(rundir "$T/gw.embedded2.log")
	check "embedded runner: nothing left of the refused start" "$([ -n "$edir" ] && [ ! -e "$edir" ] && echo removed || echo "left: '$edir'")" removed
else
	skip "sandbox flow: needs root, bin/sandbox-runner and $IMG/default/rootfs"
fi

# the web demo's files: / is index.html, types by extension, nothing outside
mkdir -p "$T/web/sub" && echo '<h1>demo</h1>' >"$T/web/index.html" && echo 'export const a = 1;' >"$T/web/sub/app.js"
echo secret >"$T/outside.txt"
port=$((port + 1))
SANDBOX_API_KEYS=key-one start_gateway bin/sandbox-gateway $port "$T/gw.web.log" --runner-socket "$T/none.sock" --web-dir "$T/web"
check "static: / is index.html" "$(curl -s -m 5 http://127.0.0.1:$port/)" "<h1>demo</h1>"
check "static: .js as text/javascript" "$(curl -s -m 5 -o /dev/null -w '%{content_type}' http://127.0.0.1:$port/sub/app.js)" "text/javascript"
check "static: .. cannot leave the directory" "$(curl -s -m 5 --path-as-is -o /dev/null -w '%{http_code}' http://127.0.0.1:$port/../outside.txt)" 404
check "static: missing file 404" "$(code http://127.0.0.1:$port/nope.js)" 404
check "static: the API is still the API" "$(code http://127.0.0.1:$port/v1/sandboxes)" 401
check "metrics-auth: no metrics key configured: /metrics is closed (401)" "$(code http://127.0.0.1:$port/metrics)" 401
h_finish
