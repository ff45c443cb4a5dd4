#!/bin/bash
# The vm driver's initramfs: busybox (static), the kernel's modules from
# mk/vm-kernel.sh, /init (mk/vm-init.sh) and vm-envexec (mk/vm-envexec.c,
# built static here), packed with cpio, uncompressed: the guest kernel
# unpacking a gzip archive took about a second of each boot under TCG, and
# the file is read from the host's page cache anyway.
#
#   mk/vm-initramfs.sh KERNEL_DIR OUT [FILE...]
#
# Each FILE is copied into /bin of the initramfs (the tests add a guest
# program and run it with sbx.run=/bin/NAME on the kernel command line).
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: mk/vm-initramfs.sh KERNEL_DIR OUT [FILE...]" >&2; exit 2; }
kdir=$1 out=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
busybox=$(command -v busybox) || { echo "vm-initramfs: busybox (busybox-static) is not installed" >&2; exit 1; }
# a dynamically linked busybox cannot run in an initramfs without libc
if ! file -L "$busybox" 2>/dev/null | grep -q static && ldd "$busybox" >/dev/null 2>&1; then
	echo "vm-initramfs: $busybox is not static (install busybox-static)" >&2
	exit 1
fi
[ -f "$kdir/modules/order" ] || { echo "vm-initramfs: $kdir has no modules/order (mk/vm-kernel.sh)" >&2; exit 1; }

tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree"/{bin,dev,proc,sys,lib/modules}
cp "$busybox" "$tree/bin/busybox"
for app in $("$busybox" --list); do
	[ "$app" = busybox ] || ln -s busybox "$tree/bin/$app"
done
cp "$kdir"/modules/*.ko "$kdir/modules/order" "$tree/lib/modules/"
install -m 755 "$here/vm-init.sh" "$tree/init"
# the guest's PID 1 after switch_root: the agent's env is the sandbox's
cc -static -O2 -Wall -Wextra -Werror -o "$tree/bin/vm-envexec" "$here/vm-envexec.c"
for f in "$@"; do
	install -m 755 "$f" "$tree/bin/$(basename "$f")"
done
(cd "$tree" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet -R 0:0) \
	>"$out.tmp"
mv "$out.tmp" "$out"
