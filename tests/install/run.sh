#!/bin/bash
# Install suite: `make install` into a temporary DESTDIR, with PREFIX=/usr
# and PREFIX=/opt/sbx; lists what landed and checks it: the six programs
# (executable, built hardened, and they run: --help), the web demo, the two systemd units
# with their paths filled in for PREFIX (and accepted by systemd-analyze
# verify where it exists), and nothing else.
. "$(dirname "$0")/../lib/harness.sh"
h_begin install-test

installed() { # destdir prefix: the landed files, relative to destdir
	(cd "$1" && find . -type f -o -type l | sed 's|^\./|/|' | sort)
}

hardened() { # prefix program: built with the Makefile's hardening flags
	local n="$1: hardening: $(basename "$2")"
	check "$n is position-independent (PIE)" "$(readelf -hW "$2" | grep -c 'Type: *DYN')$(readelf -dW "$2" | grep -c 'FLAGS_1.*PIE')" 11
	check "$n has read-only relocations bound at start (RELRO, BIND_NOW)" \
		"$(readelf -lW "$2" | grep -c GNU_RELRO)$(readelf -dW "$2" | grep -c '(FLAGS).*BIND_NOW')" 11
	check "$n has stack canaries" "$(nm -D "$2" | grep -c ' U __stack_chk_fail')" 1
	check "$n uses the checked (fortified) libc functions" "$(nm -D "$2" | grep -cE ' U __[a-z_]+_chk' | sed 's/^[1-9][0-9]*$/some/')" some
}

check_prefix() { # prefix sysconfdir
	local prefix=$1 etc=$2 d=$T/root${1//\//_} u
	if ! make -s install DESTDIR="$d" PREFIX="$prefix" >"$T/make.log" 2>&1; then
		fail "$prefix: make install"; tail -20 "$T/make.log"
		return
	fi
	echo "landed in DESTDIR for PREFIX=$prefix:"
	installed "$d" | sed 's/^/  /'
	check "$prefix: the programs" "$(installed "$d" | grep -c "^$prefix/bin/")" 6
	for p in sandbox-gateway sandbox-runner sandbox-gvisor-watch sandbox-agent sandbox-vsockd sbx; do
		[ -x "$d$prefix/bin/$p" ] && pass "$prefix: $p is executable" || fail "$prefix: $p missing or not executable"
	done
	for p in sandbox-gateway sandbox-runner sandbox-gvisor-watch sandbox-agent sandbox-vsockd sbx; do hardened "$prefix" "$d$prefix/bin/$p"; done
	"$d$prefix/bin/sandbox-gateway" --help >"$T/help" 2>&1
	grep -q -- '--runner-socket' "$T/help" && pass "$prefix: the installed gateway runs (--help)" ||
		fail "$prefix: the installed gateway's --help: $(head -3 "$T/help")"
	# the document is inside the binary (mk/openapi_c.py): nothing to install beside it
	grep -qaF '{"openapi":"3.1.0"' "$d$prefix/bin/sandbox-gateway" &&
		pass "$prefix: the installed gateway carries its OpenAPI document (GET /v1/openapi.json)" ||
		fail "$prefix: no OpenAPI document in the installed gateway"
	check "$prefix: the web demo's page" "$(grep -c '<html' "$d$prefix/share/sandbox/web/index.html" 2>/dev/null)" 1
	check "$prefix: the web demo whole (as built)" "$(cd web-demo/dist && find . -type f | sort | xargs md5sum | md5sum)" \
		"$(cd "$d$prefix/share/sandbox/web" && find . -type f | sort | xargs md5sum | md5sum)"
	check "$prefix: the units" "$(cd "$d$prefix/lib/systemd/system" 2>/dev/null && ls)" \
		"$(printf 'sandbox-gateway.service\nsandbox-runner.service')"
	u=$d$prefix/lib/systemd/system
	check "$prefix: no placeholder left in the units" "$(grep -c '@[A-Z]*@' "$u"/*.service | grep -vc ':0$')" 0
	check "$prefix: the gateway unit starts the installed gateway with the installed web demo and keys" \
		"$(sed -n 's/^ExecStart=//p' "$u/sandbox-gateway.service" | grep -oE "^$prefix/bin/sandbox-gateway |--web-dir $prefix/share/sandbox/web|--keys-file $etc/sandbox/keys" | wc -l)" 3
	check "$prefix: the runner unit starts the installed runner on the gateway unit's socket" \
		"$(sed -n 's/^ExecStart=//p' "$u/sandbox-runner.service" | grep -oE "^$prefix/bin/sandbox-runner |--socket /run/sandbox/runner.sock" | wc -l)" 2
	check "$prefix: nothing else landed" "$(installed "$d" | grep -vcE "^$prefix/(bin|share/sandbox/web|lib/systemd/system)/")" 0
	if command -v systemd-analyze >/dev/null; then
		# verify looks for the programs where ExecStart names them: point
		# it at the staged copies
		mkdir -p "$T/verify$etc"
		for f in "$u"/*.service; do sed "s|=$prefix/bin/|=$d$prefix/bin/|" "$f" >"$T/verify$etc/$(basename "$f")"; done
		systemd-analyze verify "$T/verify$etc"/*.service >"$T/verify.log" 2>&1 &&
			pass "$prefix: systemd-analyze verify accepts the units" ||
			fail "$prefix: systemd-analyze verify: $(head -5 "$T/verify.log")"
	else
		skip "$prefix: systemd-analyze missing"
	fi
}

[ -f web-demo/dist/index.html ] || make -s web >"$T/web.log" 2>&1 || { tail -20 "$T/web.log"; h_abort "make web"; }
check_prefix /usr /etc
check_prefix /opt/sbx /opt/sbx/etc
h_finish
