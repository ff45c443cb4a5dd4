#!/bin/bash
# REST GET of files whose size at open is not their length
# (gateway/svc/svc_files.c, gateway/http/gw_rest_sink.c): procfs files that say 0, one without end, one
# growing while read (tests/gateway/reads.py does the reads). A gateway of
# its own with key-reads, on a runner's socket. Sourced by tests/gateway/
# run.sh where runners and sandboxes can run (defines suite_reads
# GATEWAY-BIN RUNNER-SOCKET PORT); run on its own: tests/gateway/reads.sh.

suite_reads() { # gateway-bin runner-socket port
	local u=http://127.0.0.1:$3 A='Authorization: Bearer key-reads' id
	SANDBOX_API_KEYS=key-reads start_gateway "$1" "$3" "$T/gw.reads.log" --runner-socket "$2" ||
		{ fail "file-read: the gateway did not start"; return; }
	id=$(curl -s -m 30 -H "$A" -d '{"timeout_ms":300000}' $u/v1/sandboxes |
		python3 -c 'import json,sys;print(json.load(sys.stdin)["id"])' 2>/dev/null)
	[ -n "$id" ] || { fail "file-read: no sandbox"; return; }
	curl -s -m 30 -H "$A" -d '{"cmd":"sh","args":["-c","printf abc >/tmp/small; : >/tmp/empty; head -c 8388608 /dev/zero >/tmp/grow"]}' \
		"$u/v1/sandboxes/$id/commands" >/dev/null
	# the grower: 4 KiB every 10 ms (at most 12 MB more), so that a read of
	# its 8 MiB outlasts a few appends
	curl -s -m 30 -H "$A" -d '{"cmd":"sh","args":["-c","for i in $(seq 3000); do head -c 4096 /dev/zero >>/tmp/grow; sleep 0.01; done"],"detached":true}' \
		"$u/v1/sandboxes/$id/commands" >/dev/null
	curl -s -m 30 -H "$A" -d '{"cmd":"cat","args":["/proc/version"],"encoding":"base64"}' "$u/v1/sandboxes/$id/commands" |
		python3 -c 'import base64,json,sys;sys.stdout.buffer.write(base64.b64decode(json.load(sys.stdin)["stdout"]))' >"$T/reads.version"
	[ -s "$T/reads.version" ] || { fail "file-read: cat /proc/version gave nothing"; return; }
	python3 tests/gateway/reads.py "$u" key-reads "$id" "$T/reads.version" >"$T/reads.out" 2>&1
	# under gvisor the endless-file check is a SKIP (gVisor's /proc has no pagemap)
	h_count_lines "$T/reads.out" "$([ "${SANDBOX_TEST_ISOLATION:-jail}" = gvisor ] && echo 4 || echo 5)"
	check "file-read: the gateway answers after the reads" "$(curl -s -m 10 -o /dev/null -w '%{http_code}' $u/healthz)" 200
	curl -s -m 30 -H "$A" -X DELETE "$u/v1/sandboxes/$id" >/dev/null
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then   # on its own
	. "$(dirname "$0")/../lib/harness.sh"
	h_begin gw-reads
	why=$(h_services_missing)
	[ -z "$why" ] || h_skip_suite "file-read: $why"
	gwb=${GWB:-build/asan/bin/sandbox-gateway}; [ -x $gwb ] || gwb=bin/sandbox-gateway
	start_runner "rd$$" "$T/r.sock" "$T/state" || h_abort "file-read: the runner did not start"
	suite_reads $gwb "$T/r.sock" "$(random_port)"
	GW_LOG=$T/gw.reads.log stop_gateway_checked
	h_finish
fi
