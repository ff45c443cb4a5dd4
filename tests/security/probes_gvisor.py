"""Probes 80-84: which kernel a sandbox's syscalls reach. Each runs under
every driver and asserts that driver's answer: the jail shares the host
kernel (behind namespaces, seccomp and masks: probes 1-30), gvisor gives
the sandbox gVisor's kernel, so the host kernel never sees its processes,
sockets or /proc.

JAIL_ONLY lists the probes of the jail's own mechanism (seccomp, masked
host /proc and /sys, capabilities, the host counters it relies on); under
another driver main.py skips them with the reason given here."""
import os
import platform
import time

import lib
from lib import Skip, probe, say

HOST_KERNEL = ("the jail's view of the host kernel (seccomp, masked /proc and /sys, "
               "capabilities, devices); under gvisor the sandbox's syscalls, /proc, /sys "
               "and /dev are gVisor's own kernel's (probes 80-83 show it)")
ALLOW_ALL = "allow-all is refused under gvisor (probe 84 checks the refusal)"
WHOLE = ("under gvisor a memory overrun ends the whole sandbox (the host OOM killer meets "
         "the sentry; the runner suite checks stop_reason out_of_memory)")

JAIL_ONLY = {
    2: "gVisor shows uid 1000 PID 1's environ (no PR_SET_DUMPABLE there); it is the "
       "sandbox's env every command has. Host /proc: probe 83",
    4: HOST_KERNEL, 5: HOST_KERNEL, 6: HOST_KERNEL, 7: HOST_KERNEL, 8: HOST_KERNEL,
    9: "no seccomp under gvisor: root inside may PTRACE_TRACEME (inside gVisor's kernel); "
       "PTRACE_ATTACH to PID 1 is still refused",
    11: HOST_KERNEL, 13: HOST_KERNEL, 14: HOST_KERNEL, 16: HOST_KERNEL, 17: HOST_KERNEL,
    18: "gVisor's /proc/PID/status has no NoNewPrivs line (no_new_privs is set in the OCI spec)",
    19: "gVisor's /proc/PID/status has no CapAmb line", 20: HOST_KERNEL, 22: HOST_KERNEL,
    30: "uid maps: gVisor runs as root on the host; the sandbox's uids are gVisor's",
    35: ALLOW_ALL, 36: ALLOW_ALL, 37: ALLOW_ALL, 38: ALLOW_ALL, 39: ALLOW_ALL, 40: ALLOW_ALL,
    65: ALLOW_ALL,
    42: WHOLE, 53: WHOLE, 170: WHOLE,
    44: "gVisor's tmpfs has no inode cap; files are bounded by memory_mb",
    51: "the host's pids.current counts gVisor's threads, not the guest's processes",
    52: "no host user namespace per sandbox: inotify lives in gVisor's kernel",
    92: HOST_KERNEL,
}


def host_cmdlines():
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open("/proc/%s/cmdline" % p, "rb") as f:
                    out.append(f.read().replace(b"\0", b" ").decode(errors="replace"))
            except OSError:
                pass
    return out


@probe(80, "gvisor-kernel: uname and dmesg inside are the sandbox kernel's, not the host's")
def p80(ctx):
    sid = ctx.sandbox()
    out = ctx.a.sh(sid, "uname -r; dmesg 2>&1 | head -50; echo rc=$?", sudo=True)
    rel = out.splitlines()[0].strip() if out else ""
    host = platform.release()
    say("inside: uname -r %r (host %r); dmesg: %r" % (rel, host, out.splitlines()[1:4]))
    hostlog = lib.run("dmesg | tail -20").stdout.splitlines()
    host_lines = [l.split("]", 1)[1].strip() for l in hostlog if "]" in l and len(l) > 30]
    leaked = [l for l in host_lines if l and l in out]
    if lib.ISOLATION == "gvisor":
        return (rel and rel != host and "gVisor" in out and not leaked,
                "uname %r host %r leaked %r out %r" % (rel, host, leaked[:3], out[:300]))
    # the jail shares the host kernel (same release) and refuses its log
    return (rel == host and not leaked and ("not permitted" in out or "denied" in out),
            "uname %r host %r leaked %r out %r" % (rel, host, leaked[:3], out[:300]))


@probe(81, "gvisor-kernel: a process inside is (jail) / is not (gvisor) a host kernel task")
def p81(ctx):
    sid = ctx.sandbox()
    mark = "sbxmark%d" % int(time.time() * 1000)
    ctx.a.exec(sid, "bash", ["-c", "exec -a %s sleep 60" % mark], detached=True)
    seen_inside = lib.wait_until(lambda: mark in ctx.a.sh(sid, "ps -eo args"), 10)
    on_host = [c for c in host_cmdlines() if mark in c and "bash -c" not in c]
    ctx.a.sh(sid, "pkill -f %s; true" % mark)
    say("inside: %s; host tasks with the mark: %d" % (bool(seen_inside), len(on_host)))
    if lib.ISOLATION == "gvisor":
        return seen_inside and not on_host, "inside %s host %r" % (bool(seen_inside), on_host)
    return seen_inside and len(on_host) >= 1, "inside %s host %r" % (bool(seen_inside), on_host)


@probe(82, "gvisor-kernel: a TCP listener inside lives in gVisor's netstack, not in the "
           "host kernel's socket table")
def p82(ctx):
    sid = ctx.sandbox()
    port = 40000 + int(time.time()) % 20000
    ctx.a.exec(sid, "python3", ["-c", "import socket,time\ns=socket.socket()\n"
                                "s.bind(('127.0.0.1',%d))\ns.listen()\ntime.sleep(30)" % port],
               detached=True)
    inside = lib.wait_until(lambda: ("%X" % port) in ctx.a.sh(sid, "cat /proc/net/tcp"), 10)
    hexport = ":%04X" % port
    host = []
    for pid in lib.host_pids_of(sid):
        try:
            with open("/proc/%d/net/tcp" % pid) as f:
                if hexport in f.read():
                    host.append(pid)
        except OSError:
            pass
    ctx.a.sh(sid, "pkill -f 'socket,time' ; true")
    say("listener on %d: inside %s; host netns of %d sandbox tasks list it: %d" %
        (port, bool(inside), len(lib.host_pids_of(sid)), len(host)))
    if lib.ISOLATION == "gvisor":
        return inside and lib.host_pids_of(sid) and not host, "inside %s host %r" % (inside, host)
    return inside and host, "inside %s host %r" % (inside, host)


@probe(83, "gvisor-proc: the host's /proc is not visible (pids, cmdline, boot id)")
def p83(ctx):
    sid = ctx.sandbox()
    out = ctx.a.sh(sid, "ls /proc | grep -c '^[0-9]'; cat /proc/sys/kernel/random/boot_id; "
                   "cat /proc/cmdline 2>/dev/null | head -c 300; echo; cat /proc/1/cmdline | tr '\\0' ' '")
    lines = out.splitlines()
    with open("/proc/sys/kernel/random/boot_id") as f:
        host_boot = f.read().strip()
    with open("/proc/cmdline") as f:
        host_cmdline = f.read().strip()
    npids = int(lines[0]) if lines and lines[0].isdigit() else -1
    inside_boot = lines[1].strip() if len(lines) > 1 else ""
    ok = 0 < npids < 30 and host_cmdline not in out and "sandbox-agent" in out
    say("inside: %d pids, boot id %s (host %s)" % (npids, inside_boot[:8], host_boot[:8]))
    if lib.ISOLATION == "gvisor":
        # a kernel of its own: another boot id
        return ok and inside_boot and inside_boot != host_boot, out[:400]
    return ok, out[:400]


@probe(84, "gvisor: network allow-all is refused (422 naming network), never run in the jail")
def p84(ctx):
    if lib.ISOLATION != "gvisor":
        raise Skip("a gvisor refusal; the jail offers allow-all (probes 35-40)")
    st, d = ctx.a.create(network="allow-all", timeout_ms=60000)
    before = lib.run("ls %s/state/sandboxes | wc -l" % ctx.dir).stdout.strip()
    return (st == 422 and "network" in str(d) and "gvisor" in str(d),
            "%s %s (dirs %s)" % (st, d, before))
