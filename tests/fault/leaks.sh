#!/bin/bash
# Leak check for one runner: prints what is left of its sandboxes and exits
# non-zero if anything is. usage: leaks.sh NAME STATE_DIR [SLOT...]
#  - processes in a cgroup of the runner's sandboxes (sbx_NAME_*)
#  - cgroups sandbox/sbx_NAME_* under /sys/fs/cgroup/{memory,pids,cpu} (v1)
#    or /sys/fs/cgroup/sandbox (v2)
#  - mounts under STATE_DIR (other than STATE_DIR itself)
#  - per-sandbox state dirs under STATE_DIR/sandboxes
#  - the host ends of allow-all veths (sbxh<SLOT>) of the given slots
#  - sockets bound under STATE_DIR
set -u
name=$1 state=$(realpath -m "$2"); shift 2
left=0
say() { echo "  leak: $*"; left=$((left + 1)); }
for f in $(grep -l "/sbx_${name}_" /proc/[0-9]*/cgroup 2>/dev/null); do
	p=${f#/proc/}; p=${p%/cgroup}
	[ -e "/proc/$p" ] || continue
	say "process $p ($(tr '\0' ' ' </proc/$p/cmdline 2>/dev/null | head -c 80)) in a sandbox cgroup"
done
for c in /sys/fs/cgroup/memory/sandbox /sys/fs/cgroup/pids/sandbox /sys/fs/cgroup/cpu/sandbox /sys/fs/cgroup/sandbox; do
	[ -d "$c" ] || continue
	for d in "$c"/sbx_"${name}"_*; do [ -d "$d" ] && say "cgroup $d"; done
done
while read -r _ _ _ _ mp _; do
	case "$mp" in "$state"/*) say "mount $mp" ;; esac
done </proc/self/mountinfo
if [ -d "$state/sandboxes" ]; then
	for d in "$state"/sandboxes/*; do [ -e "$d" ] && say "state $d"; done
fi
for s in "$@"; do
	ip link show "sbxh$s" >/dev/null 2>&1 && say "veth sbxh$s"
done
if ss -xlH 2>/dev/null | grep -q " $state/sandboxes/"; then
	say "listening socket under $state/sandboxes"
fi
[ "$left" = 0 ] && echo "  leak check ($name): nothing left"
[ "$left" = 0 ]
