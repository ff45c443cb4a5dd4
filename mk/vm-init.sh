#!/bin/sh
# /init of the vm driver's initramfs (mk/vm-initramfs.sh): PID 1 until the
# sandbox's root is mounted. Loads the modules the kernel has as modules,
# then either runs sbx.run=PROGRAM from the initramfs (the backend's tests)
# or mounts the root (erofs image on vda under an overlay whose upper layer
# is the ext4 disk vdb) and hands PID 1 to the agent: the runner appends
# its agent runtime at /runtime and names its loader in sbx.loader=; the
# runtime is copied to a read-only tmpfs at /.sandbox of the new root, as
# the other drivers bind it there.
# Each step prints the guest's uptime: that is the boot trace.
export PATH=/bin
stamp() { read -r up _ </proc/uptime; echo "sbx-init: $up $*"; }
fail() { echo "sbx-init: $*"; echo o >/proc/sysrq-trigger; sleep 5; }

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
stamp start
run= loader= net= pids= machine=
for a in $(cat /proc/cmdline); do
	case "$a" in
	sbx.run=*) run=${a#sbx.run=} ;;
	sbx.machine=*) machine=${a#sbx.machine=} ;;
	sbx.loader=*) loader=${a#sbx.loader=} ;;
	sbx.net=*) net=${a#sbx.net=} ;;
	sbx.pids=*) pids=${a#sbx.pids=} ;;
	esac
done
# the NIC's modules only for a VM that has one, and each machine's own
# transport and panic device: virtio-mmio on microvm (sbx.machine=microvm,
# no PCI), PCI on q35 (each insmod is a tenth of a second under TCG)
while read -r m; do
	case "$m" in
	failover | net_failover | virtio_net) [ -n "$net" ] || continue ;;
	virtio_mmio | pvpanic-mmio) [ "$machine" = microvm ] || continue ;;
	pvpanic-pci) [ "$machine" != microvm ] || continue ;;
	esac
	insmod "/lib/modules/$m.ko" || echo "sbx-init: insmod $m failed"
done </lib/modules/order
stamp modules
# loopback up: the agent's forward (connect, previews) dials 127.0.0.1
ip link set lo up
# the sandbox's pids limit: PID 1 (and so the agent and every command) in
# a cgroup of the guest's own with pids.max, unmounted again (the guest's
# root may mount cgroup2 and lift it: the host's bound is the VM)
if [ -n "$pids" ] && [ "$pids" != 0 ]; then
	mkdir -p /cg && mount -t cgroup2 cgroup2 /cg && echo +pids >/cg/cgroup.subtree_control &&
		mkdir /cg/sandbox && echo "$pids" >/cg/sandbox/pids.max &&
		echo $$ >/cg/sandbox/cgroup.procs && umount /cg || fail "pids limit"
fi
# allow-all or an allow-list: sbx.net=ADDR/PREFIX,GATEWAY, the sandbox's
# address on the runner's veth (bridged to this NIC on the host side);
# the gateway is also the runner's resolver. Deny-all has no NIC.
if [ -n "$net" ]; then
	echo 1 >/proc/sys/net/ipv6/conf/eth0/disable_ipv6
	ip addr add "${net%,*}" dev eth0 && ip link set eth0 up &&
		ip route add default via "${net#*,}" || fail "network (eth0)"
	stamp network
fi
if [ -n "$run" ]; then
	stamp "run $run"
	exec "$run"
fi
mkdir -p /lower /upper /newroot
mount -t erofs -o ro /dev/vda /lower || fail "mount root image (vda)"
mount -t ext4 -o noinit_itable /dev/vdb /upper || fail "mount writable disk (vdb)"
mkdir -p /upper/upper /upper/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/upper/upper,workdir=/upper/work /newroot ||
	fail "overlay"
[ -n "$loader" ] && [ -d /runtime ] || fail "no agent runtime (sbx.loader=, /runtime)"
mkdir -p /newroot/.sandbox
mount -t tmpfs -o mode=0755,size=64m tmpfs /newroot/.sandbox
cp -a /runtime/. /newroot/.sandbox/
cp /bin/vm-envexec /newroot/.sandbox/vm-envexec
# the sandbox's env, which the runner wrote on the writable disk (outside
# the overlay's upper dir): readable by root only, and gone from the disk
: >/newroot/.sandbox/env
chmod 0400 /newroot/.sandbox/env
[ -f /upper/meta/env ] && cat /upper/meta/env >/newroot/.sandbox/env
# the runner's egress CA (public), beside its bundle in the upper layer
[ -f /upper/meta/egress-ca.pem ] && cp /upper/meta/egress-ca.pem /newroot/.sandbox/egress-ca.pem
# the image's WorkingDir (an imported OCI image's), the agent's --workdir
set -- /.sandbox/sandbox-agent --listen "vsock:1024"
[ -f /upper/meta/workdir ] && set -- "$@" --workdir "$(cat /upper/meta/workdir)"
rm -rf /upper/meta
mount -o remount,ro /newroot/.sandbox
if [ -n "$net" ]; then
	rm -f /newroot/etc/resolv.conf
	echo "nameserver ${net#*,}" >/newroot/etc/resolv.conf
fi
stamp root
for d in proc sys dev; do mkdir -p "/newroot/$d"; mount --move "/$d" "/newroot/$d"; done
# the agent's environment is the sandbox's, not init's
exec switch_root /newroot /.sandbox/vm-envexec /.sandbox/env "/.sandbox/lib/$loader" \
	--library-path /.sandbox/lib "$@"
