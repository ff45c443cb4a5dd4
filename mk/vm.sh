#!/bin/bash
# What the vm driver boots, built once under SANDBOX_VM_DIR (default
# /var/cache/sandbox/vm): the guest kernel (mk/vm-kernel.sh) and the base
# initramfs (mk/vm-initramfs.sh) at initrd.cpio. The runner appends its agent
# runtime to it and builds each image's root disk itself.
#   mk/vm.sh [--force]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
VM_DIR=${SANDBOX_VM_DIR:-/var/cache/sandbox/vm}
kdir=$("$here/vm-kernel.sh" "$@")
if [ "${1:-}" = "--force" ] || [ ! -f "$VM_DIR/initrd.cpio" ] ||
	[ "$here/vm-init.sh" -nt "$VM_DIR/initrd.cpio" ] || [ "$kdir/version" -nt "$VM_DIR/initrd.cpio" ]; then
	"$here/vm-initramfs.sh" "$kdir" "$VM_DIR/initrd.cpio"
fi
echo "$VM_DIR"
