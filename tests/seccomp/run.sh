#!/bin/bash
# Seccomp policy suite (jail-default-v1, runner/driver_jail_seccomp.c):
#  1. the policy compiles; the probe binary refuses to run without it
#  2. the syscall probes (tests/seccomp/probe.c) on the host, under the policy
#  3. with the image: the same probes and the workload corpus
#     (tests/seccomp/workload.sh) inside the image's chroot, in fresh user,
#     mount, pid and net namespaces, on a throwaway overlay, under the policy
# Last line: "N passed, N failed, N skipped".
. "$(dirname "$0")/../lib/harness.sh"
TOP=$PWD

ROOTFS=$IMG/default/rootfs

pick() { # first existing executable
	local f
	for f in "$@"; do [ -x "$f" ] && { echo "$f"; return; }; done
}
EXEC=$(pick build/asan/bin/sandbox-seccomp-exec bin/sandbox-seccomp-exec)
PROBE=$(pick build/asan/tests/seccomp-probe build/release/tests/seccomp-probe)
if [ -z "$EXEC" ] || [ -z "$PROBE" ]; then
	fail "build: sandbox-seccomp-exec or seccomp-probe not built (make all)"
	h_finish
fi
EXEC=$TOP/$EXEC PROBE=$TOP/$PROBE
echo "using $EXEC"

WORK=$(mktemp -d /tmp/sbx-seccomp.XXXXXX)
cleanup() {
	# Mounts live only in the namespaces of in_image, which are gone once
	# its processes are; --one-file-system guards against a stray one.
	rm -rf --one-file-system "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The run with a bounded time: `timeout` kills the namespace's init, and
# with it the whole pid namespace. A bound against a hang, not a speed: on
# a loaded 2-core machine pip_build has taken 57 s and pip_wheel 39 s
# (venv and pip starts), so 120 s was a margin of two.
TMO=${SECCOMP_TEST_TIMEOUT:-300}
# Extra flags for sandbox-seccomp-exec in the image, e.g. --log to list
# (in the kernel log) the syscalls the corpus makes outside the allowlist.
export SECCOMP_EXEC_ARGS=${SECCOMP_EXEC_ARGS:-}

# 1. compile
if out=$("$EXEC" --info 2>&1); then pass "compile ($out)"; else fail "compile: $out"; fi
if "$PROBE" status >/dev/null 2>&1; then fail "probe_refuses_unfiltered"; else pass "probe_refuses_unfiltered"; fi

# 2. host probes
run_probes() { # label, command...
	local label=$1 out line n=0
	shift
	out=$("$@" 2>&1)
	while IFS= read -r line; do
		case $line in
		"PASS "*) pass "$label ${line#PASS }"; n=$((n + 1)) ;;
		"FAIL "*) fail "$label ${line#FAIL }"; n=$((n + 1)) ;;
		esac
	done <<<"$out"
	[ "$n" -gt 0 ] || fail "$label probes: no output: $(echo "$out" | tail -3)"
}
run_probes host timeout "$TMO" "$EXEC" "$PROBE"

# A workload that needs nothing from the image: python threads and
# multiprocessing with the host's python3.
if out=$(timeout "$TMO" "$EXEC" -- bash tests/seccomp/workload.sh python_threads 2>&1); then
	pass "host python_threads"
else
	fail "host python_threads: $(echo "$out" | tail -3)"
fi

# strace: refused with a clear message in the default profile, working in
# the debug profile.
if command -v strace >/dev/null; then
	if out=$(timeout "$TMO" "$EXEC" strace -f -o /dev/null true 2>&1); then
		fail "host strace_refused: strace succeeded"
	elif echo "$out" | grep -q "Operation not permitted"; then
		pass "host strace_refused"
	else
		fail "host strace_refused: $(echo "$out" | tail -2)"
	fi
	if out=$(timeout "$TMO" "$EXEC" --debug strace -f -o /dev/null true 2>&1); then
		pass "host strace_debug_profile"
	else
		fail "host strace_debug_profile: $(echo "$out" | tail -2)"
	fi
else
	skip "strace missing (host strace probes)"
fi

# 3. inside the image
if [ ! -f "$ROOTFS/.sandbox-image" ]; then
	skip "image missing (make image) (probes and workload corpus in $ROOTFS)"
	h_finish
fi

mkdir -p "$WORK/upper" "$WORK/work" "$WORK/merged" "$WORK/in"
cp tests/seccomp/workload.sh "$WORK/in/"
cp "$PROBE" "$WORK/in/seccomp-probe"

# in_image command... : fresh user (root mapped to root), mount, pid and
# net namespaces; the image as the lower layer of an overlay like the
# runner's; loopback up; then chroot + no_new_privs + policy + exec.
in_image() {
	env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 TERM=dumb \
		SECCOMP_EXEC_ARGS="$SECCOMP_EXEC_ARGS" \
		timeout "$TMO" unshare --user --map-root-user --mount --pid --net --fork -- \
		/bin/sh -c '
		set -e
		rootfs=$1 work=$2 exec=$3; shift 3
		m=$work/merged
		mount -t overlay overlay -o "lowerdir=$rootfs,upperdir=$work/upper,workdir=$work/work" "$m"
		mount -t proc proc "$m/proc"
		mount --rbind /dev "$m/dev"
		mount --bind "$work/in" "$m/mnt"
		ip link set lo up
		exec "$exec" $SECCOMP_EXEC_ARGS --chroot "$m" --chdir /root "$@"' \
		in_image "$ROOTFS" "$WORK" "$EXEC" "$@"
}

if ! out=$(in_image /bin/true 2>&1); then
	fail "image chroot setup: $(echo "$out" | tail -3)"
	h_finish
fi
pass "image chroot setup"

# The probe is static, so it runs from the bind mount inside the image.
run_probes image in_image /mnt/seccomp-probe

for item in python_threads seccomp_inherited pip_wheel pip_build npm_local \
	git_local node_http python_http shell_tools unshare_refused; do
	t0=$(date +%s%N)
	if out=$(in_image bash /mnt/workload.sh "$item" 2>&1); then
		pass "image $item ($((($(date +%s%N) - t0) / 1000000)) ms)"
	else
		fail "image $item: $(echo "$out" | tail -5 | tr '\n' ' ')"
	fi
done

# strace needs ptrace: refused in the default profile.
if out=$(in_image python3 -c 'import ctypes,os; l=ctypes.CDLL(None,use_errno=True); r=l.ptrace(0,0,0,0); print(r, os.strerror(ctypes.get_errno()))' 2>&1) &&
	[ "$out" = "-1 Operation not permitted" ]; then
	pass "image ptrace_ctypes"
else
	fail "image ptrace_ctypes: $out"
fi
# clone3 from python, as glibc would call it: ENOSYS so glibc falls back.
if out=$(in_image python3 -c 'import ctypes,os; l=ctypes.CDLL(None,use_errno=True); b=ctypes.create_string_buffer(88); r=l.syscall(435,b,88); print(r, os.strerror(ctypes.get_errno()))' 2>&1) &&
	[ "$out" = "-1 Function not implemented" ]; then
	pass "image clone3_ctypes"
else
	fail "image clone3_ctypes: $out"
fi

h_finish
