#!/bin/bash
# The guest kernel of the vm driver: Debian's cloud kernel, taken from its
# package (bookworm-backports, `apt-get download`, `dpkg-deb -x`), never
# downloaded from anywhere else. Built once into
#   $SANDBOX_VM_DIR/kernel/<version>/{vmlinuz,modules/*.ko,version}
# with only the modules the initramfs loads, decompressed (busybox's insmod
# takes plain .ko files), and `current` pointing at it. Prints that dir.
#
#   mk/vm-kernel.sh [--force]
#
# Environment: SANDBOX_VM_DIR (default /var/cache/sandbox/vm).
set -euo pipefail

VM_DIR=${SANDBOX_VM_DIR:-/var/cache/sandbox/vm}
SERIES=6.12
# load order: each after what it depends on (the .ko's own depends= line)
# (virtio_mmio and pvpanic-mmio: microvm's devices, which has no PCI)
MODULES="drivers/virtio/virtio_mmio net/vmw_vsock/vsock \
net/vmw_vsock/vmw_vsock_virtio_transport_common \
net/vmw_vsock/vmw_vsock_virtio_transport drivers/block/virtio_blk \
fs/overlayfs/overlay lib/libcrc32c fs/erofs/erofs drivers/acpi/button drivers/input/evdev \
drivers/misc/pvpanic/pvpanic drivers/misc/pvpanic/pvpanic-pci \
drivers/misc/pvpanic/pvpanic-mmio net/core/failover \
drivers/net/net_failover drivers/net/virtio_net"

die() { echo "vm-kernel: $*" >&2; exit 1; }

# DIR/vmlinux from DIR/vmlinuz: the compressed payload starts at its
# format's magic (Debian's is zstd; xz and gzip as the kernel allows), and
# the ELF it holds must carry the PVH entry note (Xen note type 18) that
# QEMU's -kernel needs to boot it directly
vmlinux() {
	local d=$1 magic tool off
	[ -f "$d/vmlinux" ] && return 0
	for magic in '\x28\xb5\x2f\xfd:zstd' '\xfd\x37\x7a\x58\x5a\x00:xz' '\x1f\x8b\x08:gzip'; do
		tool=${magic#*:}
		command -v "$tool" >/dev/null || continue
		for off in $(LC_ALL=C grep -obUaP "${magic%:*}" "$d/vmlinuz" | cut -d: -f1); do
			tail -c +$((off + 1)) "$d/vmlinuz" | "$tool" -dc 2>/dev/null >"$d/vmlinux.tmp" ||
				true   # it says the data after the payload is not its format
			if [ "$(head -c 4 "$d/vmlinux.tmp")" = $'\x7fELF' ] &&
				readelf -n "$d/vmlinux.tmp" 2>/dev/null | grep -q 'Xen.*0x00000012'; then
				mv "$d/vmlinux.tmp" "$d/vmlinux"
				return 0
			fi
		done
	done
	rm -f "$d/vmlinux.tmp"
	echo "vm-kernel: no PVH-bootable vmlinux in $d/vmlinuz (the driver boots vmlinuz)" >&2
}

# built already, with the modules named here (a list that grew rebuilds it)
want=$(for m in $MODULES; do basename "$m"; done)
if [ "${1:-}" != "--force" ] && [ -f "$VM_DIR/kernel/current/version" ] &&
	[ "$want" = "$(cat "$VM_DIR/kernel/current/modules/order" 2>/dev/null)" ]; then
	vmlinux "$VM_DIR/kernel/current/"
	echo "$VM_DIR/kernel/current"
	exit 0
fi
# the newest cloud kernel of the series apt knows (bookworm-backports)
pkg=$(apt-cache search --names-only "^linux-image-$SERIES\.[0-9]+\+deb12-cloud-amd64-unsigned\$" |
	awk '{print $1}' | sort -V | tail -n1)
[ -n "$pkg" ] || die "no linux-image-$SERIES.*+deb12-cloud-amd64-unsigned known to apt (is bookworm-backports in the sources? mk/deps.sh adds it)"
ver=${pkg#linux-image-}; ver=${ver%-unsigned}

work=$(mktemp -d "$VM_DIR/.kernel.XXXXXX" 2>/dev/null) || { mkdir -p "$VM_DIR"; work=$(mktemp -d "$VM_DIR/.kernel.XXXXXX"); }
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
# apt's download user must be able to write the directory
(cd "$work" && chown _apt "$work" 2>/dev/null; apt-get download -q "$pkg" >/dev/null) ||
	die "apt-get download $pkg failed"
dpkg-deb -x "$work"/*.deb "$work/x"
out=$work/out
mkdir -p "$out/modules"
cp "$work/x/boot/vmlinuz-$ver" "$out/vmlinuz"
for m in $MODULES; do
	f="$work/x/lib/modules/$ver/kernel/$m.ko.xz"
	[ -f "$f" ] || die "$pkg has no $m.ko.xz"
	xz -dc "$f" >"$out/modules/$(basename "$m").ko"
	basename "$m" >>"$out/modules/order"
done
echo "$ver" >"$out/version"
vmlinux "$out"
mkdir -p "$VM_DIR/kernel"
rm -rf "${VM_DIR:?}/kernel/$ver"
mv "$out" "$VM_DIR/kernel/$ver"
ln -sfn "$ver" "$VM_DIR/kernel/current"
echo "$VM_DIR/kernel/current"
