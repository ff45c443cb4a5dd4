#!/bin/bash
# Build the default sandbox image: a Debian 13 (trixie) root filesystem
# used read-only as the lower layer of every sandbox's overlay.
#
#   mk/image.sh            build <image-dir>/default/rootfs unless it is there
#   mk/image.sh --force    rebuild even when a complete image exists
#
# Environment:
#   SANDBOX_IMAGE_DIR     image directory (default /var/cache/sandbox/images);
#                         kept outside the checkout so CI runs on the same
#                         machine reuse it
#   SANDBOX_IMAGE_MIRROR  Debian mirror URL (default: the one the host's apt uses)
#
# An image is complete only when rootfs/.sandbox-image exists with the
# current IMAGE_VERSION: the tree is built in a temporary directory and
# renamed into place as the very last step, so an interrupted build is never
# mistaken for an image.
set -euo pipefail

IMAGE_NAME=default
IMAGE_VERSION=3   # 2: /vercel/sandbox (the @vercel/sandbox SDK's default cwd)
                  # 3: Debian 13 (Node 20.19, Python 3.13), digest and size in the stamp
SUITE=trixie
# Small enough for debootstrap's own resolver; the heavy packages go through
# apt-get inside the new root, because debootstrap leaves npm's long
# dependency chain unconfigured.
BOOT_INCLUDE=ca-certificates
# python3-setuptools: Debian 12's pip pulled it in, Debian 13's does not (pip
# builds from setup.py need it); libatomic1: the official Node 26 binary
# (mk/runtime-images.sh) links it
APT_PACKAGES="python3 python3-pip python3-venv python3-setuptools nodejs npm git curl procps libatomic1"

IMAGE_DIR=${SANDBOX_IMAGE_DIR:-/var/cache/sandbox/images}
DEST=$IMAGE_DIR/$IMAGE_NAME
ROOTFS=$DEST/rootfs
STAMP_NAME=.sandbox-image
FORCE=0
[ "${1:-}" = "--force" ] && FORCE=1

START=$(date +%s.%N)
step() { # message
	awk -v s="$START" -v n="$(date +%s.%N)" -v m="$*" 'BEGIN { printf "[image %6.1fs] %s\n", n - s, m }'
}
die() { echo "image: $*" >&2; exit 1; }

stamp_ok() { # rootfs
	[ -f "$1/$STAMP_NAME" ] && grep -qx "version=$IMAGE_VERSION" "$1/$STAMP_NAME"
}

if [ "$FORCE" = 0 ] && stamp_ok "$ROOTFS"; then
	echo "image: $ROOTFS is up to date (version $IMAGE_VERSION)"
	exit 0
fi

[ "$(id -u)" = 0 ] || die "building the image needs root (debootstrap, chroot); run: sudo $0"
command -v debootstrap >/dev/null || die "debootstrap is missing (mk/deps.sh installs it)"

# The mirror the host's apt already uses for $SUITE main: deb822 .sources
# files first, then one-line .list files. Nothing is hard-coded so that the
# image builds wherever the host's apt works.
host_mirror() { # suite
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v suite="$1" '
			function flush() {
				if (uri != "" && deb && has_suite && has_main && enabled) { print uri; found = 1; exit }
				uri = ""; deb = 0; has_suite = 0; has_main = 0; enabled = 1
			}
			BEGIN { enabled = 1 }
			/^[ \t]*$/ { flush(); next }
			/^[ \t]*#/ { next }
			{
				key = tolower($1); sub(/:$/, "", key)
				if (key == "types") for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1
				if (key == "uris" && uri == "") uri = $2
				if (key == "suites") for (i = 2; i <= NF; i++) if ($i == suite) has_suite = 1
				if (key == "components") for (i = 2; i <= NF; i++) if ($i == "main") has_main = 1
				if (key == "enabled" && tolower($2) == "no") enabled = 0
			}
			END { if (!found) flush() }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		# deb [options] URI suite components...
		sed -E 's/\[[^]]*\]//' "$f" | awk -v suite="$1" \
			'$1 == "deb" && $3 == suite { for (i = 4; i <= NF; i++) if ($i == "main") { print $2; exit } }'
	done
}

# The security archive's URL, if the host uses one (same sources, suite
# $SUITE-security).
host_security_mirror() { # suite
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v suite="$1-security" '
			/^[ \t]*$/ { if (uri != "" && ok) { print uri; exit } uri = ""; ok = 0; next }
			{ key = tolower($1); sub(/:$/, "", key)
			  if (key == "uris") uri = $2
			  if (key == "suites") for (i = 2; i <= NF; i++) if ($i == suite) ok = 1 }
			END { if (uri != "" && ok) print uri }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		sed -E 's/\[[^]]*\]//' "$f" | awk -v suite="$1-security" '$1 == "deb" && $3 == suite { print $2; exit }'
	done
}

# A host of another release (a bookworm host building this trixie image)
# has no source for $SUITE: Debian's archives carry every release under one
# URL, so the mirror the host uses for its own release serves $SUITE too.
HOST_SUITE=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
MIRROR=${SANDBOX_IMAGE_MIRROR:-$(host_mirror "$SUITE" | head -1)}
[ -n "$MIRROR" ] || [ -z "$HOST_SUITE" ] || MIRROR=$(host_mirror "$HOST_SUITE" | head -1)
[ -n "$MIRROR" ] || die "no apt source for '$SUITE main' found on the host; set SANDBOX_IMAGE_MIRROR"
SECURITY=$(host_security_mirror "$SUITE" | head -1)
[ -n "$SECURITY" ] || [ -z "$HOST_SUITE" ] || SECURITY=$(host_security_mirror "$HOST_SUITE" | head -1)

mkdir -p "$DEST"
# One build at a time: make test and make run may both ask for the image.
exec 9>"$DEST/.lock"
flock 9
if [ "$FORCE" = 0 ] && stamp_ok "$ROOTFS"; then
	echo "image: $ROOTFS was built meanwhile"
	exit 0
fi

# Trees left by an earlier rebuild (see the end) and by a build killed with
# SIGKILL, which skips the exit trap.
for d in "$DEST"/rootfs.old.* "$DEST"/rootfs.build.*; do
	[ -d "$d" ] && rm -rf --one-file-system "$d"
done
TMP=$(mktemp -d "$DEST/rootfs.build.XXXXXX")
LOG=$DEST/build.log
: >"$LOG"
cleanup() {
	# Mounts were made in a private mount namespace (see in_root), so none
	# can be left under $TMP; --one-file-system is a second guard.
	if [ -n "${TMP:-}" ] && [ -d "$TMP" ]; then
		rm -rf --one-file-system "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() { # message
	echo "image: $1 failed; last lines of $LOG:" >&2
	tail -n 25 "$LOG" >&2
	exit 1
}

# Run a command chrooted in the new root with /proc and /dev mounted, inside
# a private mount namespace: the mounts vanish with the command even if it
# is killed.
in_root() {
	unshare --mount --propagation private -- /bin/sh -c '
		set -e
		root=$1; shift
		mount -t proc proc "$root/proc"
		mount --rbind /dev "$root/dev"
		exec chroot "$root" "$@"' in_root "$TMP" "$@"
}

step "1/5 debootstrap --variant=minbase $SUITE (log: $LOG)"
# debootstrap mounts /proc and /sys in the target for its second stage: in
# a private mount namespace those mounts cannot outlive a killed build.
unshare --mount --propagation private -- \
	debootstrap --variant=minbase --include="$BOOT_INCLUDE" --components=main \
	"$SUITE" "$TMP" "$MIRROR" >>"$LOG" 2>&1 || fail "debootstrap"

step "2/5 apt-get install $APT_PACKAGES"
{
	echo "deb $MIRROR $SUITE main"
	echo "deb $MIRROR $SUITE-updates main"
	[ -n "$SECURITY" ] && echo "deb $SECURITY $SUITE-security main"
} >"$TMP/etc/apt/sources.list"
# Some mirrors serve frozen snapshots whose Release files have expired.
printf 'Acquire::Check-Valid-Until "false";\nAPT::Install-Recommends "false";\n' \
	>"$TMP/etc/apt/apt.conf.d/90sandbox-image"
# No service may start inside the build root.
printf '#!/bin/sh\nexit 101\n' >"$TMP/usr/sbin/policy-rc.d"
chmod 755 "$TMP/usr/sbin/policy-rc.d"
cp -L /etc/resolv.conf "$TMP/etc/resolv.conf"
export DEBIAN_FRONTEND=noninteractive
in_root apt-get update >>"$LOG" 2>&1 || fail "apt-get update"
# shellcheck disable=SC2086
in_root apt-get install -y --no-install-recommends $APT_PACKAGES >>"$LOG" 2>&1 ||
	fail "apt-get install"

step "3/5 user sandbox (uid 1000, gid 1000, home /home/sandbox)"
in_root groupadd --gid 1000 sandbox >>"$LOG" 2>&1 || fail "groupadd"
in_root useradd --uid 1000 --gid 1000 --home-dir /home/sandbox --create-home \
	--shell /bin/bash sandbox >>"$LOG" 2>&1 || fail "useradd"
# the working directory code written for @vercel/sandbox assumes (docs/vercel.md)
install -d -o 1000 -g 1000 -m 755 "$TMP/vercel/sandbox" || fail "/vercel/sandbox"

step "4/5 clean caches and build-time files"
in_root apt-get clean >>"$LOG" 2>&1 || fail "apt-get clean"
rm -rf "$TMP"/var/lib/apt/lists/* "$TMP"/var/cache/apt/*.bin \
	"$TMP"/var/cache/debconf/*-old "$TMP"/var/lib/dpkg/*-old \
	"$TMP"/var/log/* "$TMP"/tmp/* "$TMP"/var/tmp/* "$TMP"/root/.cache \
	"$TMP/usr/sbin/policy-rc.d"
# The runner writes its own hosts, hostname and resolv.conf per sandbox.
rm -f "$TMP/etc/resolv.conf" "$TMP/etc/hostname" "$TMP/etc/machine-id"
: >"$TMP/etc/machine-id"
chmod 1777 "$TMP/tmp" "$TMP/var/tmp"
# Mount points the runner needs in a read-only lower layer.
mkdir -p "$TMP/proc" "$TMP/sys" "$TMP/dev" "$TMP/tmp" "$TMP/run" "$TMP/home/sandbox"

step "5/5 digest, stamp and rename into place"
chmod 755 "$TMP"
read -r DIGEST SIZE < <("$(dirname "$0")/image-digest.sh" "$TMP" "$DEST/manifest.new") ||
	fail "digest"
{
	echo "name=$IMAGE_NAME"
	echo "version=$IMAGE_VERSION"
	echo "suite=$SUITE"
	echo "packages=$BOOT_INCLUDE $APT_PACKAGES"
	echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "digest=$DIGEST"
	echo "size=$SIZE"
} >"$TMP/$STAMP_NAME"
chmod 755 "$TMP"
if [ -e "$ROOTFS" ]; then
	# An older or incomplete image: move it aside so the swap is two
	# renames. It is not deleted now: sandboxes still running have it as
	# their overlay's lower layer, and files removed under a live overlay
	# would vanish inside them. The next rebuild removes it.
	OLD=$(mktemp -d "$DEST/rootfs.old.XXXXXX")
	mv "$ROOTFS" "$OLD/rootfs"
	mv "$TMP" "$ROOTFS"
	step "previous image kept in $OLD until the next rebuild"
else
	mv "$TMP" "$ROOTFS"
fi
TMP=
mv "$DEST/manifest.new" "$DEST/manifest"
size=$(du -sh "$ROOTFS" 2>/dev/null | cut -f1)
step "done: $ROOTFS ($size, $DIGEST)"
