#!/bin/bash
# Leak checker: everything a runner named NAME left on the host.
#   leaks.sh NAME [STATE_DIR]
# Sandbox ids of that runner start with sbx_NAME_ (docs/runner.md). Lists
# leftover processes (by cgroup or cmdline), mounts under STATE_DIR or
# naming such a sandbox, cgroups (v1 controllers and v2) named sbx_NAME_* (and
# the gvisor driver's sandbox/gvisor_NAME parent), runsc state in STATE/gvisor,
# per-sandbox state dirs, network namespaces, the host veths of leftover
# sandboxes (sbxh<slot>, found from leftover state or processes) and
# iptables rules naming a sandbox. Prints each; exits 0 when nothing is left.
# The firewall chains SBX-FWD/SBX-IN match every sbxh+ device and stay by
# design (docs/runner.md), so they are not leaks.
set -u
NAME=${1:?usage: leaks.sh NAME [STATE_DIR]}
STATE=${2:-}
PFX="sbx_${NAME}_"
n=0
leak() { echo "LEAK: $*"; n=$((n + 1)); }

# processes: cgroup path or command line names a sandbox of this runner
leftpids=()
for p in $({ grep -l "/$PFX" /proc/[0-9]*/cgroup; grep -la "$PFX" /proc/[0-9]*/cmdline; } 2>/dev/null |
	cut -d/ -f3 | sort -un); do
	[ "$p" = $$ ] && continue
	cmd=$({ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null)
	case "$cmd" in *leaks.sh*|grep*) continue ;; esac   # this checker's own pipeline
	[ -e "/proc/$p" ] || continue
	leftpids+=("$p")
	leak "process $p uid $(awk '/^Uid:/{print $2}' "/proc/$p/status" 2>/dev/null): ${cmd:0:100}"
done

# mounts (the host's mount namespace)
findmnt -rn -o TARGET,SOURCE,FSTYPE | while read -r t s f; do
	if { [ -n "$STATE" ] && [[ "$t" == "$STATE"/* ]]; } || [[ "$t$s" == *"$PFX"* ]]; then
		echo "LEAK: mount $t ($f from $s)"
	fi
done | { c=0; while read -r l; do echo "$l"; c=$((c + 1)); done; exit $c; }
n=$((n + $?))

# cgroups, v1 controllers and v2
for c in /sys/fs/cgroup/*/sandbox /sys/fs/cgroup/sandbox /sys/fs/cgroup/unified/sandbox; do
	[ -d "$c" ] || continue
	for g in "$c"/"$PFX"*; do [ -e "$g" ] && leak "cgroup $g"; done
	# the gvisor driver's sandboxes sit below a parent of their runner's,
	# removed with its last sandbox
	[ -e "$c/gvisor_$NAME" ] && leak "cgroup $c/gvisor_$NAME ($(ls "$c/gvisor_$NAME" | grep -c "^$PFX") sandboxes)"
done

# runsc's own state (the gvisor driver's --root) of this runner's sandboxes
if [ -n "$STATE" ] && [ -d "$STATE/gvisor" ]; then
	for f in "$STATE"/gvisor/*"$PFX"*; do [ -e "$f" ] && leak "runsc state $f"; done
fi

# per-sandbox state dirs and the slots they held
slots=()
if [ -n "$STATE" ] && [ -d "$STATE/sandboxes" ]; then
	for s in "$STATE"/sandboxes/*; do
		[ -e "$s" ] || continue
		leak "state dir $s"
		sl=$(grep -o '"slot":[0-9]*' "$s/state.json" 2>/dev/null | cut -d: -f2)
		[ -n "$sl" ] && slots+=("$sl")
	done
fi

# network namespaces: named ones and bind-mounted nsfs naming a sandbox
ip netns list 2>/dev/null | grep "$PFX" | while read -r l; do echo "LEAK: netns $l"; done
n=$((n + $(ip netns list 2>/dev/null | grep -c "$PFX")))

# host veths: sbxh<slot> of leftover state, and the peer of a leftover
# process's eth0 (a veth lives as long as the sandbox's netns)
for p in "${leftpids[@]}"; do
	idx=$(nsenter -t "$p" -n ip -o link show eth0 2>/dev/null | sed -nE 's/.*eth0@if([0-9]+).*/\1/p')
	[ -n "$idx" ] && leak "veth ifindex $idx ($(ip -o link 2>/dev/null | awk -F': ' -v i="$idx" '$1==i{print $2}' | cut -d@ -f1)) of process $p"
done
for sl in "${slots[@]}"; do
	ip link show "sbxh$sl" >/dev/null 2>&1 && leak "veth sbxh$sl of a leftover sandbox"
done
ip -o link 2>/dev/null | grep "$PFX" | while read -r l; do echo "LEAK: link $l"; done
n=$((n + $(ip -o link 2>/dev/null | grep -c "$PFX")))

# firewall rules naming a sandbox
for t in filter nat mangle raw; do
	c=$(iptables-save -t $t 2>/dev/null | grep -c "$PFX")
	[ "$c" != 0 ] && { iptables-save -t $t | grep "$PFX" | sed 's/^/LEAK: iptables /'; n=$((n + c)); }
done

if [ $n = 0 ]; then
	echo "no leftovers of runner $NAME"
	exit 0
fi
echo "$n leftover(s) of runner $NAME"
exit 1
