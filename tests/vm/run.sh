#!/bin/bash
# The vsock backend (sandbox-vsockd) with a real guest: QEMU (TCG when the
# host has no KVM) boots Debian's cloud kernel with an initramfs whose init
# is tests/vm/vsock_guest.c, and the host reaches it through the backend's
# hybrid socket (CONNECT <port>). Checks: echo, a guest that floods, a
# guest that stops reading (the host writer is paused, the backend holds
# no more memory), many connections at once, refusals, kill -9 of the
# backend, and a guest power-off ending the backend with nothing left.
. "$(dirname "$0")/../lib/harness.sh"
h_begin sbx-vm
VSOCKD=${VSOCKD:-bin/sandbox-vsockd}
CLIENT=tests/vm/vsock_client.py

[ -x "$VSOCKD" ] || h_skip_suite "no $VSOCKD (make)"
command -v qemu-system-x86_64 >/dev/null || h_skip_suite "no qemu-system-x86_64 (mk/deps.sh installs qemu-system-x86)"
command -v busybox >/dev/null && command -v cpio >/dev/null || h_skip_suite "no busybox-static or cpio (mk/deps.sh)"
kdir=$(mk/vm-kernel.sh) || h_skip_suite "no guest kernel (mk/vm-kernel.sh failed)"
gcc -static -O2 -o "$T/vsock-guest" tests/vm/vsock_guest.c || h_abort "build the guest program"
mk/vm-initramfs.sh "$kdir" "$T/initrd.cpio" "$T/vsock-guest" || h_abort "build the initramfs"
# TCG unless told: a /dev/kvm that opens is not yet a KVM that runs guests
accel=${VM_ACCEL:-tcg,tb-size=64}
# the uncompressed kernel boots at its PVH entry (mk/vm-kernel.sh)
kernel=$kdir/vmlinux
[ -f "$kernel" ] || kernel=$kdir/vmlinuz

boot() { # dir [backend args...]: the backend, then QEMU; BACKEND_PID, QEMU_PID
	local d=$1
	shift
	mkdir -p "$d"
	"$VSOCKD" --vhost-user "$d/vu.sock" --uds "$d/v.sock" 3>"$d/ready" --ready-fd 3 "$@" \
		2>"$d/vsockd.log" &
	BACKEND_PID=$!
	h_track "$BACKEND_PID"
	for _ in $(seq 100); do [ -s "$d/ready" ] && break; sleep 0.1; done
	# (MACHINE=microvm: the vsock device on virtio-mmio, as the driver's
	# microvm guests have it; the guest is told its TSC's rate, which it
	# cannot measure there: the host's, near enough for this guest)
	local m=(-M q35) dev=vhost-user-vsock-pci args=
	if [ "${MACHINE:-q35}" = microvm ]; then
		m=(-M microvm,x-option-roms=off,rtc=on,acpi=on) dev=vhost-user-vsock-device
		args="sbx.machine=microvm pci=off tsc_early_khz=$(awk '/^cpu MHz/ {printf "%d", $4 * 1000; exit}' /proc/cpuinfo)"
	fi
	qemu-system-x86_64 "${m[@]}" -accel "$accel" -cpu max -m 256 -smp 1 \
		-nodefaults -no-user-config -nographic -serial "file:$d/console" \
		-object memory-backend-memfd,id=mem,size=256M,share=on -machine memory-backend=mem \
		-chardev "socket,id=vu,path=$d/vu.sock" -device "$dev,chardev=vu" \
		-kernel "$kernel" -initrd "$T/initrd.cpio" -no-reboot \
		-append "console=ttyS0 quiet panic=-1 sbx.run=/bin/vsock-guest $args" 2>"$d/qemu.log" &
	QEMU_PID=$!
	h_track "$QEMU_PID"
	# generous: a loaded 2-core host under TCG
	for _ in $(seq 600); do
		grep -q "vsock-guest: listening" "$d/console" 2>/dev/null && return 0
		kill -0 "$QEMU_PID" 2>/dev/null || return 1
		sleep 0.2
	done
	return 1
}

d=$T/vm1
if ! boot "$d"; then
	cat "$d/console" "$d/qemu.log" "$d/vsockd.log" 2>/dev/null | tail -20
	h_abort "the guest did not come up"
fi
pass "guest up: $(grep -o 'sbx-init: [0-9.]* run' "$d/console" | awk '{print $2}') s of guest uptime to its program"
check "echo through the backend (1 MiB)" "$(python3 $CLIENT echo "$d/v.sock")" "echoed"
check "a guest that floods: 32 MiB, every byte" "$(python3 $CLIENT flood "$d/v.sock" 33554432)" "received 33554432, pattern ok"
check "a guest that stops reading: the writer is paused, others go on" \
	"$(python3 $CLIENT stall "$d/v.sock")" "paused yes, other connection echoes"
rss=$(awk '/VmRSS/ {print $2}' /proc/$BACKEND_PID/status)
if [ "$rss" -lt 32768 ]; then pass "backend holds ${rss} KiB after the stall"; else fail "backend holds ${rss} KiB after the stall"; fi
check "200 connections at once" "$(python3 $CLIENT many "$d/v.sock" 200)" "200 of 200 echoed"
check "a port nobody listens on is closed without OK" "$(python3 $CLIENT refused "$d/v.sock" 4000)" "closed"
check "a line that is not CONNECT is closed" "$(python3 $CLIENT badline "$d/v.sock")" "closed"
check "the guest closes while the host writes: the host's end is closed" \
	"$(python3 $CLIENT guestclose "$d/v.sock")" "closed"
check "the guest connecting to the host is reset at once" \
	"$(python3 $CLIENT dialhost "$d/v.sock")" "connect to the host: Connection reset by peer"
check "after both, the backend still echoes" "$(python3 $CLIENT echo "$d/v.sock")" "echoed"

# kill -9 of the backend: an open stream ends, nothing answers any more
python3 $CLIENT hold "$d/v.sock" >"$d/hold" &
holder=$!
for _ in $(seq 300); do [ -s "$d/hold" ] && break; sleep 0.1; done
kill -9 "$BACKEND_PID"
wait "$holder"
check "kill -9 of the backend: an open stream ends" "$(tail -1 "$d/hold")" "eof"
if python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])" "$d/v.sock" 2>/dev/null; then
	fail "kill -9 of the backend: its socket still accepts"
else
	pass "kill -9 of the backend: its socket refuses"
fi
kill "$QEMU_PID" 2>/dev/null; wait "$QEMU_PID" 2>/dev/null

# --relay-port: CONNECT to another port reaches the guest's relay port
# with the line as its first bytes (the echo returns it, no OK from the
# backend); the relay port itself is answered as always. Then (vm3) a guest that
# powers off ends QEMU, and the backend with it, cleanly.
d=$T/vm2
if boot "$d" --relay-port 1024; then
	check "relay: CONNECT 5000 reaches the guest's port 1024 as its first bytes" \
		"$(python3 -c "
import socket,sys
s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(60)
s.sendall(b'CONNECT 5000\\nafter')
got=b''
while len(got) < 18:
    b=s.recv(64)
    if not b: break
    got+=b
print(repr(got))" "$d/v.sock")" "b'CONNECT 5000\\nafter'"
	check "relay: the relay port itself is answered by the backend" "$(python3 $CLIENT echo "$d/v.sock")" "echoed"
	kill "$QEMU_PID"
	wait "$QEMU_PID" "$BACKEND_PID" 2>/dev/null
else
	fail "relay: the guest did not come up"
fi
# vm3 on microvm (when this host's TSC has one rate: the driver's rule)
d=$T/vm3 MACHINE=q35
grep -q '^flags.* constant_tsc.* nonstop_tsc' /proc/cpuinfo && MACHINE=microvm
if boot "$d"; then
	check "$MACHINE: echo through the backend (1 MiB)" "$(python3 $CLIENT echo "$d/v.sock")" "echoed"
	python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b'CONNECT 1027\n'); s.recv(10)" "$d/v.sock" 2>/dev/null
	wait "$QEMU_PID"
	wait "$BACKEND_PID"
	check "$MACHINE: guest power-off: the backend ends with status 0" "$?" "0"
	check "$MACHINE: guest power-off: no socket left behind" "$(ls "$d" | grep -c '\.sock$')" "0"
else
	cat "$d/console" "$d/qemu.log" 2>/dev/null | tail -20
	fail "$MACHINE: power-off: the guest did not come up"
fi
MACHINE=q35
# a vm sandbox through the gateway: create, files, commands, delete (one
# boot: each costs seconds under TCG)
if [ -n "$(h_services_missing)" ]; then
	skip "gateway with a vm sandbox: $(h_services_missing)"
	h_finish
fi
RUNNER=${RUNNER:-bin/sandbox-runner}
[ -x build/asan/bin/sandbox-runner ] && RUNNER=build/asan/bin/sandbox-runner
start_runner "vm$$" "$T/r.sock" "$T/state" --default-isolation vm || h_abort "runner did not start"
port=$(random_port)
SANDBOX_API_KEYS=key-one start_gateway "$GW" "$port" "$T/gw.log" --runner-socket "$T/r.sock" ||
	h_abort "gateway did not start"
u=http://127.0.0.1:$port/v1/sandboxes A='Authorization: Bearer key-one'
code() { curl -s -m 200 -o "$T/body" -w '%{http_code}' "$@"; }
jq1() { python3 -c 'import json,sys;d=json.load(open(sys.argv[1]));print(eval(sys.argv[2]))' "$T/body" "$1"; }
check "gateway: create a vm sandbox 201" "$(code -H "$A" -d '{"timeout_ms":600000,"isolation":"vm"}' $u)" 201
id=$(jq1 'd["id"]' 2>/dev/null)
check "gateway: the sandbox reports isolation vm" "$(jq1 'd.get("isolation")')" vm
printf 'hello\nvm\n' >"$T/f"
head -c 3000000 /dev/urandom >"$T/big"
check "gateway: put a file" "$(code -H "$A" --data-binary @"$T/f" -X PUT "$u/$id/files?path=a.txt")" 200
check "gateway: put 3 MB" "$(code -H "$A" --data-binary @"$T/big" -X PUT "$u/$id/files?path=big")" 200
check "gateway: get 3 MB exact" "$(curl -s -m 60 -H "$A" "$u/$id/files?path=big" | md5sum)" "$(md5sum <"$T/big")"
code -H "$A" -d '{"cmd":"cat","args":["a.txt"]}' "$u/$id/commands" >/dev/null
check "gateway: exec stdout" "$(jq1 'repr(d["stdout"]) + " " + str(d["exit_code"])')" "'hello\\nvm\\n' 0"
code -H "$A" -d '{"cmd":"uname","args":["-r"]}' "$u/$id/commands" >/dev/null
guest=$(jq1 'd["stdout"].strip()')
if [ -n "$guest" ] && [ "$guest" != "$(uname -r)" ]; then pass "gateway: uname -r is the guest's ($guest)"; else fail "gateway: uname -r is '$guest'"; fi
check "gateway: sudo exec is uid 0" "$(curl -s -m 60 -H "$A" -d '{"cmd":"id","args":["-u"],"sudo":true}' "$u/$id/commands" | python3 -c 'import json,sys;print(json.load(sys.stdin)["stdout"].strip())')" 0
check "gateway: delete 200" "$(code -H "$A" -X DELETE $u/$id)" 200
# (pgrep never counts itself; QEMU and the backend name the sandbox's dir;
# without an id, from a failed create, it would count every process)
if [ -n "$id" ]; then
	for _ in $(seq 100); do pgrep -f -- "$id" >/dev/null || break; sleep 0.2; done
	check "gateway: nothing of the vm left after delete" "$(pgrep -fc -- "$id")" 0
else
	fail "gateway: nothing of the vm left after delete: no sandbox to look for (the create failed)"
fi
h_finish
