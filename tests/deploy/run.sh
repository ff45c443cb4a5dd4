#!/bin/bash
# Deploy suite: what of deploy/ can be checked without Kubernetes or Nomad
# (neither runs here; docs/deploy.md says what that leaves untested).
#  - the manifests and job files (deploy_files.mjs): every YAML document
#    parses and is a resource, the names that tie them together agree, and
#    every flag they (and the systemd units) pass is one the built
#    binaries' --help lists
#  - deploy/certs.sh: the CA, runner and gateway certificates it makes
#    verify, carry the SANs, EKUs, key type, modes and validity docs/deploy.md
#    promises; a second `ca` refuses to overwrite; bad input is refused with
#    nothing written; and a mutual-TLS handshake (openssl s_server -Verify /
#    s_client, TLS 1.3) passes with the cluster's certificates and fails with
#    another CA's, without a client certificate, with a gateway certificate
#    posing as a runner, and for a runner name the certificate does not carry
#  - the runner itself (where it can run: root, the image) on certs.sh's
#    certificates: status over mutual TLS, another CA's client refused, a
#    certificate naming another runner refused at start
. "$(dirname "$0")/../lib/harness.sh"
h_begin deploy-test
CERTS=deploy/certs.sh

# -- the files and the flags
# the binaries whose --help counts: bin/ (RUNNER and GATEWAY_BIN to change)
GATEWAY_BIN=${GATEWAY_BIN:-bin/sandbox-gateway}
for b in "$GATEWAY_BIN" "$RUNNER"; do
	[ -x "$b" ] || h_abort "$b is not built (make)"
	"$b" --help >"$T/$(basename "$b").help" 2>&1
done
node tests/deploy/deploy_files.mjs "$T/sandbox-gateway.help" "$T/sandbox-runner.help" >"$T/files.out" 2>&1
h_count "$T/files.out"

# -- certs.sh
fp() { openssl x509 -in "$1" -noout -fingerprint -sha256 2>/dev/null; }
text() { openssl x509 -in "$1" -noout -text 2>/dev/null; }
# the lines after an extension's header in `x509 -text`, e.g. ext FILE "Subject Alternative Name"
ext() { text "$1" | grep -A1 "X509v3 $2" | tail -1 | sed 's/^ *//'; }
mode() { stat -c %a "$1" 2>/dev/null; }
runs() { # expected-exit name cmd...: the exit status and, on a refusal, the message
	local want=$1 name=$2 rc
	shift 2
	"$@" >"$T/out" 2>"$T/err" && rc=0 || rc=$?
	check "certs.sh: $name: exit $want" "$rc" "$want"
}

C=$T/cluster O=$T/other
runs 2 "no arguments is a usage error" $CERTS
check "certs.sh: no arguments prints the usage" "$(grep -c '^usage: certs.sh ca DIR' "$T/err")" 1
runs 0 "--help" $CERTS --help
check "certs.sh: --help prints the usage to stdout" "$(grep -c 'certs.sh runner DIR NAME' "$T/out")" 1
runs 2 "an unknown command is a usage error" $CERTS server "$C" r1
runs 1 "runner without a CA" $CERTS runner "$C" r1
check "certs.sh: runner without a CA says what to run" "$(grep -c "no CA in $C.*run 'certs.sh ca $C' first" "$T/err")" 1
check "certs.sh: runner without a CA leaves nothing" "$(ls "$C" 2>/dev/null | wc -l)" 0

runs 0 "ca" $CERTS ca "$C"
check "certs.sh: ca: the CA's files, and nothing else" "$(ls "$C" | tr '\n' ' ')" "ca.crt ca.key "
check "certs.sh: ca: the new directory is 0700 (it holds the CA's key)" "$(mode "$C")" 700
check "certs.sh: ca: key mode 0600" "$(mode "$C/ca.key")" 600
check "certs.sh: ca: an EC P-256 key" "$(openssl pkey -in "$C/ca.key" -noout -text 2>/dev/null | grep -c 'ASN1 OID: prime256v1')" 1
check "certs.sh: ca: a CA certificate (critical basicConstraints CA:TRUE, pathlen:0)" \
	"$(text "$C/ca.crt" | grep -A1 'Basic Constraints: critical' | tail -1 | tr -d ' ')" "CA:TRUE,pathlen:0"
check "certs.sh: ca: signs certificates only (keyUsage)" "$(ext "$C/ca.crt" "Key Usage: critical")" "Certificate Sign, CRL Sign"
openssl verify -CAfile "$C/ca.crt" "$C/ca.crt" >/dev/null 2>&1 && pass "certs.sh: ca: self-signed, verifies" || fail "certs.sh: ca: does not verify itself"
before_crt=$(fp "$C/ca.crt") before_key=$(md5sum <"$C/ca.key")
runs 1 "a second ca refuses" $CERTS ca "$C"
check "certs.sh: a second ca says why" "$(grep -c "ca.crt exists: not overwriting a CA" "$T/err")" 1
check "certs.sh: a second ca leaves the CA as it was" "$(fp "$C/ca.crt") $(md5sum <"$C/ca.key")" "$before_crt $before_key"
mv "$C/ca.crt" "$T/ca.crt.keep"
runs 1 "ca refuses a directory holding a CA key alone" $CERTS ca "$C"
check "certs.sh: ca with a key alone leaves the key, makes no certificate" "$(md5sum <"$C/ca.key") $(ls "$C" | tr '\n' ' ')" "$before_key ca.key "
mv "$T/ca.crt.keep" "$C/ca.crt"

runs 0 "runner" $CERTS runner "$C" r1 r1.runners.example.com 10.1.2.3 fd00::7
R=$C/runner-r1
check "certs.sh: runner: writes runner-NAME.crt and .key" "$(cat "$T/out")" "$R.crt $R.key"
check "certs.sh: runner: key mode 0600, certificate 0644" "$(mode "$R.key") $(mode "$R.crt")" "600 644"
check "certs.sh: runner: an EC P-256 key" "$(openssl pkey -in "$R.key" -noout -text 2>/dev/null | grep -c 'ASN1 OID: prime256v1')" 1
check "certs.sh: runner: the key is the certificate's" "$(openssl pkey -in "$R.key" -pubout 2>/dev/null | md5sum)" \
	"$(openssl x509 -in "$R.crt" -noout -pubkey 2>/dev/null | md5sum)"
check "certs.sh: runner: openssl verify against the CA" "$(openssl verify -CAfile "$C/ca.crt" "$R.crt" 2>&1)" "$R.crt: OK"
check "certs.sh: runner: SAN DNS:NAME first, then the extra names and addresses" "$(ext "$R.crt" "Subject Alternative Name")" \
	"DNS:r1, DNS:r1.runners.example.com, IP Address:10.1.2.3, IP Address:FD00:0:0:0:0:0:0:7"
check "certs.sh: runner: EKU serverAuth only" "$(ext "$R.crt" "Extended Key Usage")" \
	"TLS Web Server Authentication"
check "certs.sh: runner: not a CA" "$(text "$R.crt" | grep -A1 'Basic Constraints: critical' | tail -1 | tr -d ' ')" "CA:FALSE"
check "certs.sh: runner: names its runner (x509 -checkhost r1)" "$(openssl x509 -in "$R.crt" -noout -checkhost r1)" "Hostname r1 does match certificate"
check "certs.sh: runner: names no other runner (x509 -checkhost r2)" "$(openssl x509 -in "$R.crt" -noout -checkhost r2)" "Hostname r2 does NOT match certificate"
openssl verify -CAfile "$C/ca.crt" -purpose sslserver "$R.crt" >/dev/null 2>&1 && pass "certs.sh: runner: good for a TLS server" || fail "certs.sh: runner: not good for a TLS server"
# validity: 397 days by default (CERTS_DAYS): valid 396 days from now, not 398
openssl x509 -in "$R.crt" -noout -checkend $((396 * 86400)) >/dev/null && ! openssl x509 -in "$R.crt" -noout -checkend $((398 * 86400)) >/dev/null &&
	pass "certs.sh: runner: valid for 397 days" || fail "certs.sh: runner: validity $(openssl x509 -in "$R.crt" -noout -dates | tr '\n' ' ')"
openssl x509 -in "$C/ca.crt" -noout -checkend $((3649 * 86400)) >/dev/null && ! openssl x509 -in "$C/ca.crt" -noout -checkend $((3651 * 86400)) >/dev/null &&
	pass "certs.sh: ca: valid for 3650 days" || fail "certs.sh: ca: validity $(openssl x509 -in "$C/ca.crt" -noout -dates | tr '\n' ' ')"
CERTS_DAYS=30 $CERTS runner "$C" r30 >/dev/null 2>&1
openssl x509 -in "$C/runner-r30.crt" -noout -checkend $((29 * 86400)) >/dev/null 2>&1 && ! openssl x509 -in "$C/runner-r30.crt" -noout -checkend $((31 * 86400)) >/dev/null &&
	pass "certs.sh: CERTS_DAYS=30 gives 30 days" || fail "certs.sh: CERTS_DAYS=30 not honoured"
serial1=$(openssl x509 -in "$R.crt" -noout -serial)
runs 0 "runner again re-issues (rotation)" $CERTS runner "$C" r1
check "certs.sh: the re-issued runner certificate is new (another serial), and verifies" \
	"$([ "$(openssl x509 -in "$R.crt" -noout -serial)" != "$serial1" ] && openssl verify -CAfile "$C/ca.crt" "$R.crt" 2>&1)" "$R.crt: OK"

n=$(ls "$C" | wc -l)
for bad in R1 r_1 r-1 "" abcdefghijklmnopq; do
	runs 2 "runner name '$bad' is refused (1..16 of [a-z0-9])" $CERTS runner "$C" "$bad"
done
runs 2 "an extra name that is neither DNS nor IP is refused" $CERTS runner "$C" r3 'bad name'
runs 2 "an extra name with a slash is refused" $CERTS runner "$C" r3 '../x'
runs 1 "CERTS_DAYS=0 is refused" env CERTS_DAYS=0 $CERTS runner "$C" r3
check "certs.sh: refused runs write nothing (and leave no temp file)" "$(ls "$C" | wc -l)" "$n"

runs 0 "gateway" $CERTS gateway "$C" gw1
G=$C/gateway-gw1
check "certs.sh: gateway: key mode 0600" "$(mode "$G.key")" 600
check "certs.sh: gateway: openssl verify against the CA" "$(openssl verify -CAfile "$C/ca.crt" "$G.crt" 2>&1)" "$G.crt: OK"
check "certs.sh: gateway: EKU clientAuth only" "$(ext "$G.crt" "Extended Key Usage")" "TLS Web Client Authentication"
openssl verify -CAfile "$C/ca.crt" -purpose sslclient "$G.crt" >/dev/null 2>&1 && pass "certs.sh: gateway: good for a TLS client" || fail "certs.sh: gateway: not good for a TLS client"
openssl verify -CAfile "$C/ca.crt" -purpose sslserver "$G.crt" >/dev/null 2>&1 && fail "certs.sh: gateway: good for a TLS server (must not be)" || pass "certs.sh: gateway: not good for a TLS server"
runs 2 "gateway name '-x' is refused" $CERTS gateway "$C" -x
runs 2 "gateway name 'a/b' is refused" $CERTS gateway "$C" a/b

# another CA, and its certificates: they must not pass for the cluster's
$CERTS ca "$O" >/dev/null && $CERTS gateway "$O" gw1 >/dev/null && $CERTS runner "$O" r1 >/dev/null ||
	h_abort "certs.sh: the second CA's certificates"
openssl verify -CAfile "$C/ca.crt" "$O/gateway-gw1.crt" >/dev/null 2>&1 && fail "certs.sh: another CA's certificate verifies against the cluster CA" ||
	pass "certs.sh: another CA's certificate does not verify against the cluster CA"

# -- handshakes. A runner's side: s_server with its certificate, requiring
# a client certificate of the CA (-Verify, purpose sslclient, TLS 1.3). A
# gateway's side: s_client with its certificate, checking the server's
# chain (purpose sslserver) and name (-verify_hostname). s_server -rev
# answers a line reversed: "gnip" back means both ends accepted each
# other; a refused client never gets it, and s_server logs why.
handshake() { # name want(ok|refused) why server-crt server-key client-args...
	# why: for a refusal, what OpenSSL's log must say (either side's): the
	# refusal is for the reason the check is about, not another
	local name=$1 want=$2 why=$3 scrt=$4 skey=$5 port got spid try
	shift 5
	# a random port another suite's listener holds: try another (at most 3)
	for try in 1 2 3; do
		port=$(random_port)
		openssl s_server -accept "127.0.0.1:$port" -tls1_3 -cert "$scrt" -key "$skey" -CAfile "$C/ca.crt" \
			-Verify 1 -verify_return_error -purpose sslclient -naccept 1 -rev >"$T/srv.out" 2>"$T/srv.err" &
		spid=$!
		h_track $spid
		for _ in $(seq 100); do grep -q ACCEPT "$T/srv.out" && break; kill -0 $spid 2>/dev/null || break; sleep 0.1; done
		grep -q ACCEPT "$T/srv.out" && break
		kill $spid 2>/dev/null; wait $spid 2>/dev/null
		grep -q 'Address already in use' "$T/srv.err" && [ $try != 3 ] && continue
		fail "handshake: $name: s_server did not start: $(grep -v '^verify depth' "$T/srv.err" | head -3)"
		return
	done
	printf 'ping\nCLOSE\n' | timeout 20 openssl s_client -connect "127.0.0.1:$port" -tls1_3 -CAfile "$C/ca.crt" \
		-verify_return_error -purpose sslserver -quiet -ign_eof "$@" >"$T/cli.out" 2>"$T/cli.err"
	# s_server ends after its one connection (-naccept 1), and writes why it
	# refused a client only after it sent the alert: the client can be gone
	# before that line is written. Wait for its end (bounded), do not kill it.
	for _ in $(seq 100); do kill -0 $spid 2>/dev/null || break; sleep 0.1; done
	kill $spid 2>/dev/null
	wait $spid 2>/dev/null
	got=refused
	grep -qx gnip "$T/cli.out" && got=ok
	[ "$got" = refused ] && ! grep -q "$why" "$T/srv.err" "$T/cli.err" && got="refused, but not for '$why'"
	check "handshake: $name" "$got" "$want"
	[ "$got" = "$want" ] || { echo "  s_server:"; sed 's/^/    /' "$T/srv.err" | tail -5; echo "  s_client:"; sed 's/^/    /' "$T/cli.err" | tail -5; }
}
handshake "runner certificate vs gateway certificate of the cluster CA" ok - "$R.crt" "$R.key" \
	-cert "$G.crt" -key "$G.key" -verify_hostname r1
check "handshake: the runner's side saw the gateway's certificate" "$(grep -c 'depth=0.*CN = gw1' "$T/srv.err")" 1
handshake "a gateway certificate of another CA is refused" refused "unable to get local issuer certificate" "$R.crt" "$R.key" \
	-cert "$O/gateway-gw1.crt" -key "$O/gateway-gw1.key" -verify_hostname r1
check "handshake: the refusal is the runner's (certificate verify failed)" "$(grep -c 'tls_process_client_certificate:certificate verify failed' "$T/srv.err")" 1
handshake "a client without a certificate is refused" refused "peer did not return a certificate" "$R.crt" "$R.key" -verify_hostname r1
handshake "a runner of another CA is refused by the gateway" refused "unable to get local issuer certificate" "$O/runner-r1.crt" "$O/runner-r1.key" \
	-cert "$G.crt" -key "$G.key" -verify_hostname r1
handshake "a runner certificate for another name is refused by the gateway" refused "hostname mismatch" "$R.crt" "$R.key" \
	-cert "$G.crt" -key "$G.key" -verify_hostname r2
handshake "a gateway certificate cannot pose as a runner (no serverAuth)" refused "unsuitable certificate purpose" "$G.crt" "$G.key" \
	-cert "$G.crt" -key "$G.key" -verify_hostname gw1
handshake "a runner certificate cannot pose as a gateway (no clientAuth): one runner's key drives no other runner" refused "unsuitable certificate purpose" "$R.crt" "$R.key" \
	-cert "$R.crt" -key "$R.key" -verify_hostname r1

# -- the runner itself with certs.sh's certificates: it starts on a runner
# certificate naming it, answers `status` over mutual TLS to the gateway
# certificate (one request frame: 4-byte big-endian length, type 3 = JSON),
# refuses another CA's client, and will not start on a certificate naming
# another runner. The modelled handshakes above say what OpenSSL makes of
# the certificates; this says the runner agrees.
tls_request() { # crt key json: the reply's payload (frame header dropped)
	{ printf "\\x00\\x00\\x00\\x$(printf %02x ${#3})\\x03"; printf %s "$3"; } |
		timeout 20 openssl s_client -connect "127.0.0.1:$RPORT" -tls1_3 -CAfile "$C/ca.crt" \
			-verify_hostname "$RNAME" -verify_return_error -quiet -ign_eof -cert "$1" -key "$2" 2>>"$T/tls.err" |
		tail -c +6
}
why=$(h_services_missing)
if [ -n "$why" ]; then
	skip "runner: with certs.sh's certificates: $why"
elif ! grep -q -- --listen-tls "$T/$(basename "$RUNNER").help"; then
	skip "runner: with certs.sh's certificates: $RUNNER has no --listen-tls"
else
	RNAME=dep$$
	$CERTS runner "$C" "$RNAME" >/dev/null && $CERTS runner "$C" "${RNAME}x" >/dev/null || h_abort "certs.sh runner $RNAME"
	mkdir -p "$T/state"
	# a random port another suite's listener holds: try another (at most 3)
	for try in 1 2 3; do
		RPORT=$(random_port)
		start_runner "$RNAME" "$T/runner.sock" "$T/state" --listen-tls "127.0.0.1:$RPORT" \
			--cert "$C/runner-$RNAME.crt" --key "$C/runner-$RNAME.key" --client-ca "$C/ca.crt" >/dev/null && break
		grep -q 'Address already in use' "$RUNNER_LOG" || break
	done
	if [ -S "$T/runner.sock" ] && kill -0 "$RUNNER_PID" 2>/dev/null; then
		pass "runner: starts with certs.sh's runner certificate"
		reply=$(tls_request "$G.crt" "$G.key" '{"op":"status"}')
		check "runner: answers status over mutual TLS to certs.sh's gateway certificate" \
			"$(printf %s "$reply" | grep -o "^{\"ok\":true,\"runner\":{\"name\":\"$RNAME\"")" "{\"ok\":true,\"runner\":{\"name\":\"$RNAME\""
		reply=$(tls_request "$O/gateway-gw1.crt" "$O/gateway-gw1.key" '{"op":"status"}')
		check "runner: answers nothing to a gateway certificate of another CA" "$reply" ""
		kill "$RUNNER_PID"; wait "$RUNNER_PID" 2>/dev/null
		check "runner: logged the refused client with OpenSSL's reason" \
			"$(grep -c 'refused 127.0.0.1:[0-9]*: certificate verify failed' "$RUNNER_LOG")" 1
	else
		fail "runner: does not start with certs.sh's runner certificate: $(tail -3 "$RUNNER_LOG")"
	fi
	"$RUNNER" --name "$RNAME" --socket "$T/runner2.sock" --state-dir "$T/state" --image-dir "$IMG" \
		--listen-tls "127.0.0.1:$RPORT" --cert "$C/runner-${RNAME}x.crt" --key "$C/runner-${RNAME}x.key" \
		--client-ca "$C/ca.crt" >"$T/runner2.log" 2>&1 && rc=0 || rc=$?
	check "runner: will not start on a certificate naming another runner (exit 2, says so)" \
		"$rc $(grep -c "does not name runner $RNAME" "$T/runner2.log")" "2 1"
fi
h_finish
