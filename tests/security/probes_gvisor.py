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
    # (generous: a process start on a busy machine; the wait ends when it is seen)
    seen_inside = lib.wait_until(lambda: mark in ctx.a.sh(sid, "ps -eo args"), 30)
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
                                "s.bind(('127.0.0.1',%d))\ns.listen()\ntime.sleep(300)" % port],
               detached=True)
    # a python start on a busy machine takes its time: wait for the listener
    # (it stays until the pkill below, however long that took)
    inside = lib.wait_until(lambda: ("%X" % port) in ctx.a.sh(sid, "cat /proc/net/tcp"), 60)
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


@probe(84, "allow-all under every driver: the fake internet host is reached, never the "
           "always-denied ranges (host, loopback, RFC1918, CGNAT, metadata)")
def p84(ctx):
    from probes_b import META, Listener, allow, up_counts
    lst = Listener()
    try:
        net = allow(ctx)
        c0 = up_counts()
        code = r"""
port = int(sys.argv[1])
gw = gateway_ip()
R['gateway ip'] = gw
R['upstream 203.0.113.1:80'] = tcp('203.0.113.1', 80)
hosts = ['127.0.0.1', '192.0.2.2', '203.0.113.2'] + ([gw] if gw else [])
for h in hosts:
    R['host %s:listener' % h] = tcp(h, port)
for h in ('10.0.0.1', '172.16.0.1', '192.168.0.1', '100.64.0.1', '169.254.169.254',
          '169.254.170.2', '100.100.100.200', '0.0.0.1', '224.0.0.1', '240.0.0.1'):
    R['denied %s:80' % h] = tcp(h, 80)
out()
"""
        res = ctx.a.py(net, code, args=[str(lst.port)])
        time.sleep(0.5)
        c1 = up_counts()
    finally:
        lst.close()
    meta_pk = sum(c1.get(m, 0) - c0.get(m, 0) for m in META)
    say(res)
    say("host listener accepted %d; packets at the fake metadata hosts: %d" % (lst.n, meta_pk))
    opened = [k for k, v in res.items() if v == "OPEN" and not k.startswith("upstream")]
    return (res.get("upstream 203.0.113.1:80") == "OPEN" and res.get("gateway ip") and
            not opened and lst.n == 0 and meta_pk == 0,
            "%s; open: %s, accepted %d, metadata packets %d" % (res, opened, lst.n, meta_pk))
