#!/bin/bash
# The cluster's certificates with the OpenSSL command line only (docs/deploy.md):
#
#   deploy/certs.sh ca DIR                    DIR/ca.crt DIR/ca.key
#   deploy/certs.sh runner DIR NAME [DNS...]  DIR/runner-NAME.crt .key
#   deploy/certs.sh gateway DIR NAME          DIR/gateway-NAME.crt .key
#
# One CA signs both sides: a runner's certificate is its server certificate
# (the gateway checks that it names the runner: SAN DNS:NAME) and may also
# serve as a client one; a gateway's is a client certificate only. Keys are
# EC P-256, written mode 0600. A new DIR is made mode 0700 (it holds the CA's
# key). `ca` never overwrites a CA (every certificate it signed would stop
# verifying against a new one); `runner` and `gateway` re-issue (rotation).
#
# Validity in days: CERTS_CA_DAYS (default 3650), CERTS_DAYS (default 397)
# for runners and gateways.
set -euo pipefail

PROG=${0##*/}
CA_DAYS=${CERTS_CA_DAYS:-3650}
DAYS=${CERTS_DAYS:-397}

usage() { # [exit code]: 2 (to stderr) unless asked for with --help
	local rc=${1:-2}
	{ cat <<EOF
usage: $PROG ca DIR                    make the cluster CA: DIR/ca.crt, DIR/ca.key
       $PROG runner DIR NAME [DNS...]  DIR/runner-NAME.crt/.key signed by DIR's CA:
                                         SAN DNS:NAME (NAME = the runner's --name,
                                         1..16 of [a-z0-9]) and any extra DNS names
                                         or IP addresses; EKU serverAuth only
       $PROG gateway DIR NAME          DIR/gateway-NAME.crt/.key signed by DIR's CA:
                                         EKU clientAuth
validity in days: CERTS_CA_DAYS (default 3650), CERTS_DAYS (default 397)
EOF
	} >&$((rc == 0 ? 1 : 2))
	exit "$rc"
}

die() { echo "$PROG: $*" >&2; exit 1; }
bad() { echo "$PROG: $*" >&2; echo >&2; usage; }

# The temp files of the step under way: removed on every exit, so a failed
# run leaves nothing half-written behind.
TMPS=()
cleanup() { [ ${#TMPS[@]} = 0 ] || rm -f -- "${TMPS[@]}"; }
trap cleanup EXIT

# A positive number of days: anything else would make openssl fail later
# with a less clear message, or issue an already expired certificate.
days_ok() { [[ $1 =~ ^[1-9][0-9]{0,5}$ ]]; }

prepare_dir() { # dir
	[ -n "$1" ] || bad "DIR is empty"
	if [ ! -e "$1" ]; then
		# -m: the directory itself (it will hold the CA's key), not its parents
		# shellcheck disable=SC2174
		mkdir -p -m 0700 -- "$1" || die "cannot create $1"
	fi
	[ -d "$1" ] || die "$1 is not a directory"
	[ -w "$1" ] || die "$1 is not writable"
}

new_key() { # out: EC P-256, written 0600 from the start (umask), never world-readable
	(umask 077 && openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
		-pkeyopt ec_param_enc:named_curve -out "$1" 2>"$1.err") ||
		{ cat "$1.err" >&2; rm -f "$1.err"; die "openssl genpkey failed for $1"; }
	rm -f "$1.err"
	chmod 0600 "$1"
}

# 128 random bits, the top one clear: a positive serial of at most 16 octets
# (RFC 5280 allows 20), unique without a serial file to keep beside the CA.
serial() { printf '0x%x%s' $((0x$(openssl rand -hex 1) & 0x7f)) "$(openssl rand -hex 15)"; }

# dir kind name ext-lines...: the key and certificate, written as temp files
# and moved into place only when both are done and verify against the CA.
issue() {
	local dir=$1 kind=$2 name=$3 ext=$4 base key crt csr extf log
	base=$dir/$kind-$name
	[ -n "$dir" ] || bad "DIR is empty"
	[ -f "$dir/ca.crt" ] && [ -f "$dir/ca.key" ] ||
		die "no CA in $dir (ca.crt and ca.key): run '$PROG ca $dir' first"
	[ -w "$dir" ] || die "$dir is not writable"
	key=$(mktemp "$base.key.XXXXXX") crt=$(mktemp "$base.crt.XXXXXX")
	csr=$(mktemp "$base.csr.XXXXXX") extf=$(mktemp "$base.ext.XXXXXX")
	log=$(mktemp "$base.log.XXXXXX")
	TMPS+=("$key" "$crt" "$csr" "$extf" "$log")
	rm -f "$key"
	new_key "$key"
	printf '%s\n' "$ext" >"$extf"
	openssl req -new -key "$key" -subj "/O=sandbox/OU=$kind/CN=$name" -out "$csr" 2>"$log" ||
		{ cat "$log" >&2; die "openssl req failed for $kind $name"; }
	openssl x509 -req -in "$csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -set_serial "$(serial)" \
		-days "$DAYS" -sha256 -extfile "$extf" -out "$crt" 2>"$log" ||
		{ cat "$log" >&2; die "openssl x509 failed signing $kind $name (is $dir/ca.key the key of $dir/ca.crt?)"; }
	openssl verify -CAfile "$dir/ca.crt" "$crt" >"$log" 2>&1 ||
		{ cat "$log" >&2; die "the new certificate for $kind $name does not verify against $dir/ca.crt"; }
	chmod 0644 "$crt"
	mv -f -- "$key" "$base.key"
	mv -f -- "$crt" "$base.crt"
	echo "$base.crt $base.key"
}

cmd_ca() { # dir
	local dir=$1 key crt log
	prepare_dir "$dir"
	for f in "$dir/ca.crt" "$dir/ca.key"; do
		[ ! -e "$f" ] || die "$f exists: not overwriting a CA (the certificates it signed would stop verifying); remove it to start over"
	done
	days_ok "$CA_DAYS" || die "CERTS_CA_DAYS must be a number of days (1..999999), not '$CA_DAYS'"
	key=$(mktemp "$dir/ca.key.XXXXXX") crt=$(mktemp "$dir/ca.crt.XXXXXX") log=$(mktemp "$dir/ca.log.XXXXXX")
	TMPS+=("$key" "$crt" "$log")
	rm -f "$key"
	new_key "$key"
	# pathlen:0: this CA signs leaf certificates only, never another CA
	openssl req -x509 -new -key "$key" -sha256 -days "$CA_DAYS" -set_serial "$(serial)" \
		-subj "/O=sandbox/CN=sandbox cluster CA" \
		-addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
		-addext "keyUsage=critical,keyCertSign,cRLSign" \
		-addext "subjectKeyIdentifier=hash" -out "$crt" 2>"$log" ||
		{ cat "$log" >&2; die "openssl req failed making the CA"; }
	chmod 0644 "$crt"
	# ln: fails rather than replaces, should another run have made one meanwhile
	ln -- "$key" "$dir/ca.key" 2>/dev/null || die "$dir/ca.key appeared meanwhile: not overwriting it"
	ln -- "$crt" "$dir/ca.crt" 2>/dev/null || { rm -f "$dir/ca.key"; die "$dir/ca.crt appeared meanwhile: not overwriting it"; }
	echo "$dir/ca.crt $dir/ca.key"
}

# A runner's name is part of every sandbox id: the rule of the runner's
# --name (docs/runner.md), so the certificate can only name a runner that
# can exist.
runner_name_ok() { [[ $1 =~ ^[a-z0-9]{1,16}$ ]]; }
# A DNS name (labels of letters, digits, '-'; a leading '*.' wildcard), or an
# IPv4/IPv6 address (which goes in as an IP SAN).
dns_ok() { [[ ${#1} -le 253 && $1 =~ ^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$ ]]; }
ipv4_ok() { [[ $1 =~ ^([0-9]{1,3}\.){3}[0-9]{1,3}$ ]]; }
ipv6_ok() { [[ $1 == *:* && $1 =~ ^[0-9A-Fa-f:.]+$ ]]; }

cmd_runner() { # dir name dns...
	local dir=$1 name=$2 san a
	shift 2
	runner_name_ok "$name" || bad "runner name '$name': 1..16 of [a-z0-9] (the runner's --name)"
	san="DNS:$name"
	for a in "$@"; do
		if ipv4_ok "$a" || ipv6_ok "$a"; then san+=",IP:$a"
		elif dns_ok "$a"; then san+=",DNS:$a"
		else bad "'$a' is neither a DNS name nor an IP address"
		fi
	done
	days_ok "$DAYS" || die "CERTS_DAYS must be a number of days (1..999999), not '$DAYS'"
	issue "$dir" runner "$name" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=$san
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid"
}

cmd_gateway() { # dir name
	local dir=$1 name=$2
	# the name only tells gateways apart in the certificate and the file
	# name: a DNS-like label keeps it a safe file name and subject
	[[ $name =~ ^[A-Za-z0-9][A-Za-z0-9.-]{0,62}$ ]] || bad "gateway name '$name': 1..63 of [A-Za-z0-9.-], not starting with '.' or '-'"
	days_ok "$DAYS" || die "CERTS_DAYS must be a number of days (1..999999), not '$DAYS'"
	issue "$dir" gateway "$name" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid"
}

command -v openssl >/dev/null || die "openssl not found in PATH"
[ $# -ge 1 ] || usage
case $1 in
-h|--help|help) usage 0 ;;
ca)      [ $# = 2 ] || bad "ca takes one argument: DIR"; cmd_ca "$2" ;;
runner)  [ $# -ge 3 ] || bad "runner takes DIR NAME [DNS...]"; shift; cmd_runner "$@" ;;
gateway) [ $# = 3 ] || bad "gateway takes DIR NAME"; cmd_gateway "$2" "$3" ;;
*)       bad "unknown command '$1'" ;;
esac
