#!/bin/bash
# Egress under a network policy (docs/runner.md "Network", docs/security.md):
# the runner's resolver and egress proxy against a fake internet in a
# network namespace this suite makes (tests/egress/internet.py: a DNS
# server, HTTP and HTTPS under several names with a test CA), never the
# real one; the real @vercel/sandbox SDK runs its docs' firewall examples
# against it (sdk.test.mjs). The runner's upstream resolver is the fake one
# (SANDBOX_DNS_UPSTREAM). Sandboxes run under SANDBOX_TEST_ISOLATION (jail
# by default; tests/run.sh runs the suite once per driver). Cases: main.py.
# Ends with "N passed, N failed, N skipped".
. "$(dirname "$0")/../lib/harness.sh"
RUNNER=${EGRESS_RUNNER:-bin/sandbox-runner}
GW=build/asan/bin/sandbox-gateway
[ -x "$GW" ] || GW=bin/sandbox-gateway
NS=sbxegress
NAME=eg$$

if [ -n "$(h_services_missing)" ]; then
	h_skip_suite "egress suite: $(h_services_missing)"
fi
h_begin sbx-egress
chmod 755 "$T"
suite_cleanup() {
	ip netns del $NS 2>/dev/null
	ip link del ${NS}0 2>/dev/null
}
suite_cleanup

# the test CA and one certificate for every name of the fake internet,
# with the extensions a strict verifier wants (Python 3.13 in the Debian 13
# image verifies with VERIFY_X509_STRICT: key usages, key identifiers)
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=egress-test-ca \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
	-addext subjectKeyIdentifier=hash \
	-keyout "$T/ca.key" -out "$T/ca.pem" >/dev/null 2>&1 &&
openssl req -newkey rsa:2048 -nodes -subj /CN=allowed.test \
	-keyout "$T/srv.key" -out "$T/srv.csr" >/dev/null 2>&1 &&
printf 'subjectAltName=DNS:allowed.test,DNS:*.pkg.test,DNS:pkg.test,DNS:*.api.pkg.test,DNS:denied.test,DNS:other.test,DNS:rebind.test,IP:198.51.100.3\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid,issuer\n' >"$T/san" &&
openssl x509 -req -in "$T/srv.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial \
	-days 2 -extfile "$T/san" -out "$T/srv.pem" >/dev/null 2>&1 &&
# a self-signed certificate for selfsigned.test: right name, no trusted issuer
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=selfsigned.test \
	-addext subjectAltName=DNS:selfsigned.test \
	-keyout "$T/self.key" -out "$T/self.pem" >/dev/null 2>&1 || h_abort "cannot make the test CA"

# the fake internet: 198.51.100.1-4 behind a veth (198.51.100.254 here)
ip netns add $NS && ip link add ${NS}0 type veth peer name inet0 netns $NS &&
ip addr add 198.51.100.254/24 dev ${NS}0 && ip link set ${NS}0 up &&
ip -n $NS link set lo up && ip -n $NS link set inet0 up &&
for a in 1 2 3 4; do ip -n $NS addr add 198.51.100.$a/24 dev inet0 || exit 1; done &&
ip -n $NS route add default via 198.51.100.254 || h_abort "cannot make the fake internet's namespace"
ip netns exec $NS /usr/bin/python3 tests/egress/internet.py "$T/inet.log" "$T/srv.pem" "$T/srv.key" \
	"$T/self.pem" "$T/self.key" >"$T/inet.out" 2>&1 &
h_track $!
for _ in $(seq 100); do grep -q ready "$T/inet.log" 2>/dev/null && break; sleep 0.1; done
grep -q ready "$T/inet.log" || { cat "$T/inet.out"; h_abort "fake internet did not start"; }

# the runner verifies the servers of the names it decrypts against the
# test CA instead of the host's trust store
SANDBOX_DNS_UPSTREAM=198.51.100.1 SANDBOX_EGRESS_TRUST_FILE="$T/ca.pem" start_runner "$NAME" "$T/r.sock" "$T/state" \
	--default-isolation "${SANDBOX_TEST_ISOLATION:-jail}" || h_abort "runner did not start"
KEY=eg-$(head -c 9 /dev/urandom | od -An -tx1 | tr -d ' \n')
gw_up=
for _ in 1 2 3; do
	PORT=$(random_port)
	SANDBOX_API_KEYS="$KEY" start_gateway "$GW" $PORT "$T/gw.log" --runner-socket "$T/r.sock" \
		&& { gw_up=1; break; }
done
[ -n "$gw_up" ] || { tail -5 "$T/gw.log"; h_abort "gateway did not start"; }

export PYTHONDONTWRITEBYTECODE=1
EG_PORT=$PORT EG_KEY=$KEY EG_DIR=$T EG_RUNNER_LOG=$RUNNER_LOG \
	timeout 600 python3 tests/egress/main.py "$@" | tee "$T/out"
rc=${PIPESTATUS[0]}
h_count -q "$T/out"
[ $rc != 0 ] && [ "$H_FAIL" = 0 ] && fail "main.py exited $rc"
# the real @vercel/sandbox SDK's firewall examples (tests/compat has it)
if [ -d tests/compat/node_modules/@vercel/sandbox ]; then
	EG_PORT=$PORT EG_KEY=$KEY EG_DIR=$T timeout 300 node tests/egress/sdk.test.mjs | tee "$T/sdk.out"
	h_count -q "$T/sdk.out"
else
	skip "the @vercel/sandbox SDK's firewall examples: tests/compat/node_modules missing (make node-deps)"
fi
h_stop_all
if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$T/gw.log" "$RUNNER_LOG"; then
	fail "sanitizer report in the gateway's or the runner's log"
	grep -h -A20 -E 'ERROR: |runtime error:' "$T/gw.log" "$RUNNER_LOG" | head -40
fi
# the runner's rules go with its sandboxes: none names the gateway of one
# of this suite's sandboxes without its veth (another runner on the host
# may have the slot now, with its veth)
left=
for ip in $(sort -u "$T/gateways" 2>/dev/null); do
	left+=$({ iptables -S SBX-SVC; iptables -S SBX-POL; iptables -t nat -S SBX-DNAT; } 2>/dev/null |
		grep -F -- "-d $ip/32" | sed -n 's/.*-i \(sbxh[0-9]*\) .*/\1/p' |
		while read -r d; do ip link show "$d" >/dev/null 2>&1 || echo "$d "; done)
done
if [ ! -s "$T/gateways" ]; then
	fail "no sandbox gateway recorded"
elif [ -n "$left" ]; then
	fail "egress rules left after the runner stopped: $left"
else
	pass "no egress rules of the suite's sandboxes left after the runner stopped"
fi
h_finish
