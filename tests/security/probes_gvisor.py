"""Probes 80-84: which kernel a sandbox's syscalls reach. Each runs under
every driver and asserts that driver's answer: the jail shares the host
kernel (behind namespaces, seccomp and masks: probes 1-30), gvisor gives
the sandbox gVisor's kernel and vm a guest kernel of its own, so the host
kernel never sees their processes, sockets or /proc.

Probes 190-194: whatever root inside does to the agent's socket, uid 1000
never runs anything as root through the agent, under every driver (the
jail by SO_PEERCRED; gvisor, where SO_PEERCRED cannot tell, by keeping the
socket out of the sandbox's reach).

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
    33: "under gvisor no process inside can put anything where the host dials its agent: "
        "the socket leaves /run/sbx once the agent listens (probes 90, 190-194); the "
        "runner and gateway code that meets a hostile agent is the same for both drivers",
    42: WHOLE, 53: WHOLE, 170: WHOLE,
    44: "gVisor's tmpfs has no inode cap; files are bounded by memory_mb",
    51: "the host's pids.current counts gVisor's threads, not the guest's processes",
    52: "no host user namespace per sandbox: inotify lives in gVisor's kernel",
    91: "SO_PEERCRED is the jail's check: under gVisor it reports the caller's own "
        "credentials, so there no process inside reaches the agent's socket at all "
        "(probes 190-194)",
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
    if lib.ISOLATION == "vm":
        # the guest's own kernel: another release, root reads its own log
        return (rel and rel != host and "Linux version" in out and not leaked,
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
    if lib.ISOLATION in ("gvisor", "vm"):
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
    if lib.ISOLATION in ("gvisor", "vm"):
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
    # (a VM's guest kernel has its own few dozen kernel threads in /proc;
    # its boot id below tells it is another kernel)
    ok = (0 < npids < (100 if lib.ISOLATION == "vm" else 30) and host_cmdline not in out and
          "sandbox-agent" in out)
    say("inside: %d pids, boot id %s (host %s)" % (npids, inside_boot[:8], host_boot[:8]))
    if lib.ISOLATION in ("gvisor", "vm"):
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


# ---- 190-194: uid 1000 never runs anything as root through the agent ----
#
# The agent serves a connection as root. The jail refuses uid 1000 by
# SO_PEERCRED; under gVisor SO_PEERCRED reports the caller's own
# credentials, so there the socket must be out of every sandbox process's
# reach (runner/driver_gvisor_sock.c). Each probe has root inside do
# what it can to open the socket up, then a command of the sandbox's user
# (uid 1000, no sudo) connects wherever the socket might now be and asks
# the agent to run `id -u` as uid 0.

# ask(path): what the agent answered on that path: 'served:<stdout>' when
# it ran the command, else why not ('connect:ENOENT', 'closed', ...).
ASK = r"""
import json, socket, struct
def ask(path):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    try:
        s.connect(path)
    except OSError as e:
        return 'connect:' + errno.errorcode.get(e.errno, str(e.errno))
    req = json.dumps({"op": "exec", "cmd": "id", "args": ["-u"], "uid": 0,
                      "attach": True}).encode()
    buf, stdout, answered = b'', b'', False
    try:
        s.sendall(struct.pack('>IB', len(req), 3) + req)
        while True:
            d = s.recv(65536)
            if not d:
                break
            buf += d
            while len(buf) >= 5:
                n, t = struct.unpack('>IB', buf[:5])
                if len(buf) < 5 + n:
                    break
                p, buf = buf[5:5 + n], buf[5 + n:]
                answered = True
                if t == 1:
                    stdout += p
    except OSError as e:
        if not answered:
            return 'recv:' + errno.errorcode.get(e.errno, str(e.errno))
    finally:
        s.close()
    return 'served:' + stdout.decode(errors='replace').strip() if answered else 'closed'
def as_user(fn):
    # fn() run by a child that became uid 1000 (setresuid from root drops
    # every capability), its JSON result read back
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([]); os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
            v = dict(fn(), uid=os.getuid())
        except BaseException as e:
            v = {'error': repr(e)}
        os.write(w, json.dumps(v).encode())
        os._exit(0)
    os.close(w)
    data = b''
    while True:
        d = os.read(r, 65536)
        if not d:
            break
        data += d
    os.close(r)
    os.waitpid(pid, 0)
    return json.loads(data or b'{}')
"""

# as uid 1000: every path of argv
AS_USER = ASK + r"""
R['uid'] = os.getuid()
for p in sys.argv[1:]:
    R[p] = ask(p)
out()
"""


def user_attack(ctx, sid, paths):
    """A uid 1000 command of the sandbox asks the agent for root at each
    path: (ok, its answers)."""
    res = ctx.a.py(sid, AS_USER, args=list(paths))
    served = {k: v for k, v in res.items() if str(v).startswith("served")}
    return res.get("uid") == 1000 and not served, res


def sock_probe(ctx, root_line, paths):
    """Root inside runs root_line, then uid 1000 tries paths; the sandbox's
    host side must still reach its agent afterwards."""
    sid = ctx.own()
    setup = ctx.a.sh(sid, root_line, sudo=True)
    ok, res = user_attack(ctx, sid, paths)
    alive = ctx.a.req("POST", "/v1/sandboxes/%s/commands" % sid,
                      {"cmd": "echo", "args": ["alive"]}, timeout=30)
    ctx.drop(sid)
    alive_ok = alive[0] == 200 and alive[1].get("stdout") == "alive\n"
    say("root inside: %r" % setup[-600:])
    say("uid 1000: %s; host side afterwards: %s" % (res, alive_ok))
    if not alive_ok:
        return False, "the host side lost its agent: %s" % (alive,)
    return ok, "uid 1000 got %s" % res


@probe(190, "agent-sock: root inside opens the agent socket's mode (chmod 0777 on it and "
            "its dir): uid 1000 cannot run anything as root through the agent")
def p190(ctx):
    return sock_probe(ctx, "chmod -v 0777 /run/sbx /run/sbx/agent.sock 2>&1; ls -la /run/sbx",
                      ["/run/sbx/agent.sock"])


@probe(191, "agent-sock: root inside gives the agent socket and its dir to uid 1000 "
            "(chown): uid 1000 cannot run anything as root through the agent")
def p191(ctx):
    return sock_probe(ctx, "chown -v 1000:1000 /run/sbx /run/sbx/agent.sock 2>&1; "
                      "ls -lan /run/sbx", ["/run/sbx/agent.sock"])


# as root: the socket renamed, opened, linked into /tmp; a uid 1000 child
# asks at every name; then the name the host side dials is put back (while
# it is moved, the jail's runner cannot reach its agent: no new command
# could start, so the uid 1000 side runs in this same program)
RENAME = ASK + r"""
paths = ['/run/sbx/open.sock', '/tmp/agent.sock', '/tmp/agent.link', '/run/sbx/agent.sock']
R['chmod /run/sbx'] = tryf(os.chmod, '/run/sbx', 0o777)
R['rename'] = tryf(os.rename, '/run/sbx/agent.sock', '/run/sbx/open.sock')
R['chmod open.sock'] = tryf(os.chmod, '/run/sbx/open.sock', 0o777)
R['hard link into /tmp'] = tryf(os.link, '/run/sbx/open.sock', '/tmp/agent.sock')
R['symlink in /tmp'] = tryf(os.symlink, '/run/sbx/open.sock', '/tmp/agent.link')
R['uid 1000'] = as_user(lambda: {p: ask(p) for p in paths})
if R['rename'] == 'ok':
    R['renamed back'] = tryf(os.rename, '/run/sbx/open.sock', '/run/sbx/agent.sock')
out()
"""


@probe(192, "agent-sock: root inside renames the agent socket, links it into /tmp and "
            "opens it: uid 1000 cannot run anything as root through the agent")
def p192(ctx):
    sid = ctx.own()
    res = ctx.a.py(sid, RENAME, sudo=True)
    alive = ctx.a.sh(sid, "echo alive").strip()
    ctx.drop(sid)
    user = res.get("uid 1000", {})
    served = {k: v for k, v in user.items() if str(v).startswith("served")}
    say("root inside: %s" % {k: v for k, v in res.items() if k != "uid 1000"})
    say("uid 1000: %s; host side afterwards: %r" % (user, alive))
    return (user.get("uid") == 1000 and not served and alive == "alive",
            "uid 1000 got %s; root %s; host side %r" % (user, res, alive))


# as root: mount the socket dir elsewhere, or cover it, or leave the mount
# namespace (raw syscalls: the errno is the kernel's answer)
MOUNTS = r"""
MS_BIND, MNT_DETACH, CLONE_NEWNS = 4096, 2, 0x20000
os.makedirs('/tmp/m', exist_ok=True)
R['bind /run/sbx on /tmp/m'] = sc('mount', b'/run/sbx', b'/tmp/m', 0, MS_BIND, 0)
R['tmpfs on /run/sbx'] = sc('mount', b'none', b'/run/sbx', b'tmpfs', 0, 0)
R['umount /run/sbx'] = sc('umount2', b'/run/sbx', MNT_DETACH)
R['unshare mount ns'] = sc('unshare', CLONE_NEWNS)
for p in ('/tmp/m', '/tmp/m/agent.sock', '/run/sbx', '/run/sbx/agent.sock'):
    R['chmod ' + p] = tryf(os.chmod, p, 0o777)
out()
"""


@probe(193, "agent-sock: root inside tries to bind-mount the agent's socket dir elsewhere, "
            "cover or unmount it: uid 1000 cannot run anything as root through the agent")
def p193(ctx):
    sid = ctx.own()
    mounts = ctx.a.py(sid, MOUNTS, sudo=True)
    ok, res = user_attack(ctx, sid, ["/tmp/m/agent.sock", "/run/sbx/agent.sock"])
    alive = ctx.a.sh(sid, "echo alive").strip()
    ctx.drop(sid)
    say("root inside: %s" % mounts)
    say("uid 1000: %s; host side afterwards: %r" % (res, alive))
    # no CAP_SYS_ADMIN inside under either driver
    refused = all(v == "EPERM" for k, v in mounts.items()
                  if k.startswith(("bind", "tmpfs", "umount", "unshare")))
    return (ok and refused and alive == "alive",
            "uid 1000 got %s; root's mounts %s; host side %r" % (res, mounts, alive))


# as root: every socket file in the sandbox's tree opened up (and the
# agent's own descriptors under /proc/1/fd); root asks at each path, then
# hands an O_PATH descriptor of each to a uid 1000 child, which asks
# through /proc/self/fd (what passing it over a socket would give it)
SEARCH = ASK + r"""
import stat
found = ['/run/sbx/agent.sock']
for top, dirs, files in os.walk('/'):
    if top == '/':
        dirs[:] = [d for d in dirs if d not in ('proc', 'sys', 'dev')]
    for n in files:
        p = os.path.join(top, n)
        try:
            if stat.S_ISSOCK(os.lstat(p).st_mode) and p not in found:
                found.append(p)
        except OSError:
            pass
for p in found:
    d = os.path.dirname(p)
    while d != '/':
        tryf(os.chmod, d, 0o777)
        d = os.path.dirname(d)
    tryf(os.chmod, p, 0o777)
fds = []
for n in os.listdir('/proc/1/fd'):
    try:
        if os.readlink('/proc/1/fd/' + n).startswith('socket:'):
            fds.append('/proc/1/fd/' + n)
    except OSError:
        pass
R['found'] = found
R['root'] = {p: ask(p) for p in found + fds}
held = {}
for p in found + fds:
    try:
        held[p] = os.open(p, os.O_PATH)
    except OSError as e:
        R['root'][p + ' O_PATH'] = errno.errorcode.get(e.errno, str(e.errno))
R['uid 1000 via passed fd'] = as_user(
    lambda: {p: ask('/proc/self/fd/%d' % fd) for p, fd in held.items()})
out()
"""


@probe(194, "agent-sock: root inside opens every socket it can find and hands uid 1000 "
            "descriptors of them: uid 1000 cannot run anything as root through the agent "
            "(gvisor: no process inside reaches the agent at all)")
def p194(ctx):
    sid = ctx.own()
    res = ctx.a.py(sid, SEARCH, sudo=True)
    ok, user = user_attack(ctx, sid, res.get("found", []))
    alive = ctx.a.sh(sid, "echo alive").strip()
    ctx.drop(sid)
    via_fd = res.get("uid 1000 via passed fd", {})
    passed = {k: v for k, v in via_fd.items() if str(v).startswith("served")}
    root_served = {k: v for k, v in res.get("root", {}).items() if v.startswith("served")}
    say("root inside found %s; root asking: %s" % (res.get("found"), res.get("root")))
    say("uid 1000 with root's descriptors: %s; uid 1000 by path: %s" %
        (res.get("uid 1000 via passed fd"), user))
    # root inside is served by the jail's agent (SO_PEERCRED: its own uid);
    # under gvisor nothing inside reaches the agent, root included
    want_root = (not root_served if lib.ISOLATION == "gvisor" else
                 root_served.get("/run/sbx/agent.sock") == "served:0")
    return (ok and via_fd.get("uid") == 1000 and not passed and want_root and
            alive == "alive",
            "uid 1000 %s; passed fds served %s; root served %s; host side %r" %
            (user, passed, root_served, alive))
