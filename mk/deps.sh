#!/bin/sh
# Install the Debian 12 packages the build, the tests and `make run` need.
# As root, missing packages are installed with apt-get; otherwise this prints
# the exact command to run and fails.
set -eu

PKGS="build-essential pkg-config clang libclang-rt-14-dev \
libwebsockets-dev libssl-dev libcjson-dev libseccomp-dev libcmocka-dev zlib1g-dev \
debootstrap iproute2 iptables bubblewrap curl nodejs npm python3 util-linux procps websocketd \
wrk nginx chromium stress-ng"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
# nodejs from other sources may ship npm itself.
case "$missing" in *" npm"*) command -v npm >/dev/null 2>&1 && missing=$(echo "$missing" | sed 's/ npm//') ;; esac
case "$missing" in *" nodejs"*) command -v node >/dev/null 2>&1 && missing=$(echo "$missing" | sed 's/ nodejs//') ;; esac

[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "missing Debian packages:$missing" >&2
	echo "install them with: sudo apt-get install -y$missing" >&2
	exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
