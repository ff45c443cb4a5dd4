#!/bin/sh
# Install the Debian 12 packages the build, the tests and `make run` need.
# As root, missing packages are installed with apt-get; otherwise this prints
# the exact command to run and fails.
set -eu

PKGS="build-essential pkg-config clang libclang-rt-14-dev \
libwebsockets-dev libssl-dev libcjson-dev libseccomp-dev libcmocka-dev zlib1g-dev \
debootstrap iproute2 iptables bubblewrap curl nodejs npm python3 util-linux procps websocketd \
wrk nginx chromium stress-ng"
# the gateway's event loop: libuv, and lws's plugin that runs on it (gateway/core/gw_loop.c)
PKGS="$PKGS libuv1-dev libwebsockets-evlib-uv"
# the gateway build turns docs/openapi.yaml into JSON with it (mk/openapi_c.py)
PKGS="$PKGS python3-yaml"
# The Python client (clients/python): what it imports, what builds it, and the
# venv and type checker of its suite (tests/python-client).
PKGS="$PKGS python3-httpx python3-setuptools python3-wheel python3-venv mypy"
# OCI images (tests/oci): busybox to build them, skopeo to pull, the reference registry
PKGS="$PKGS busybox-static skopeo docker-registry"
# the vm driver: QEMU, and what mk/vm.sh and the runner build its disks with
PKGS="$PKGS qemu-system-x86 cpio busybox-static erofs-utils zstd"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
# nodejs from other sources may ship npm itself.
case "$missing" in *" npm"*) command -v npm >/dev/null 2>&1 && missing=$(echo "$missing" | sed 's/ npm//') ;; esac
case "$missing" in *" nodejs"*) command -v node >/dev/null 2>&1 && missing=$(echo "$missing" | sed 's/ nodejs//') ;; esac

# gVisor's runsc for the runner's `gvisor` driver: optional. The service runs
# without it (the driver's probe then says why gvisor is unavailable), so a
# failure here prints one line and does not fail the install. Debian 12's own
# build (2022) breaks `ls -l` (statx) and lacks systrap; bookworm-backports'
# build (20240729) is the one the driver needs.
RUNSC_MIN=20240729
BPO_LIST=/etc/apt/sources.list.d/bookworm-backports.sources

runsc_version() {
	# "runsc version release-20240729.0" upstream; Debian's build prints its
	# package version, so fall back to dpkg's idea of it.
	v=$(runsc --version 2>/dev/null | sed -n 's/.*[^0-9]\(20[0-9]\{6\}\).*/\1/p' | head -n1)
	[ -n "$v" ] || v=$(dpkg-query -W -f='${Version}' runsc 2>/dev/null | sed -n 's/.*\(20[0-9]\{6\}\).*/\1/p')
	echo "${v:-0}"
}

runsc_ok() {
	command -v runsc >/dev/null 2>&1 || return 1
	[ "$(runsc_version)" -ge "$RUNSC_MIN" ] || return 1
	runsc help platforms 2>/dev/null | grep -qw systrap || runsc --help 2>&1 | grep -qw systrap
}

install_runsc() {
	runsc_ok && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "deps: gvisor unavailable: runsc >= $RUNSC_MIN with systrap is not installed (as root: add bookworm-backports, apt-get install -t bookworm-backports runsc)" >&2
		return 0
	fi
	if [ ! -f "$BPO_LIST" ]; then
		cat >"$BPO_LIST" <<-SRC
		Types: deb
		URIs: http://deb.debian.org/debian
		Suites: bookworm-backports
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
		SRC
	fi
	echo "deps: installing runsc from bookworm-backports"
	if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends -t bookworm-backports runsc; } >/dev/null 2>&1; then
		echo "deps: gvisor unavailable: apt-get could not install runsc from bookworm-backports (the service works without it)" >&2
		return 0
	fi
	runsc_ok || echo "deps: gvisor unavailable: runsc $(runsc_version) is older than $RUNSC_MIN or offers no systrap platform" >&2
	return 0
}

if [ -n "$missing" ]; then
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
fi
install_runsc
