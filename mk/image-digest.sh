#!/bin/bash
# The digest and size of an image tree, written by mk/image.sh and
# mk/runtime-images.sh into the image's stamp.
#
#   mk/image-digest.sh ROOTFS MANIFEST   prints "sha256:<hex> <bytes>"
#
# The digest is sha256 over a manifest of the tree itself: every entry's
# type, mode, owner, size and link target, then every regular file's
# content hash, in byte order of the paths. The tree, not the build's
# inputs, because the inputs (a package list against a moving mirror, a
# registry version range) do not pin what gets built; two trees with the
# same digest hold the same files. Times are left out: they say when, not
# what. The stamp (.sandbox-image) is left out because it carries the
# digest. MANIFEST keeps the list beside the image for diffing two builds.
set -euo pipefail
[ $# = 2 ] || { echo "usage: $0 ROOTFS MANIFEST" >&2; exit 2; }
root=$1 manifest=$2
export LC_ALL=C
cd "$root"
{
	find . -xdev ! -path ./.sandbox-image -printf '%y %m %U %G %s %P -> %l\n' | sort
	find . -xdev -type f ! -path ./.sandbox-image -print0 | sort -z |
		xargs -0 -r sha256sum
} >"$manifest"
digest=$(sha256sum <"$manifest" | cut -d' ' -f1)
size=$(find . -xdev -type f ! -path ./.sandbox-image -printf '%s\n' | awk '{ s += $1 } END { printf "%d", s }')
echo "sha256:$digest $size"
