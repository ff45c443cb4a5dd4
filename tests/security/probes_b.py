"""Group B: network probes (SECURITY.md 3.B). Traffic goes only to loopback
or to a fake internet host in the network namespace `sbxsecup` made here
(203.0.113.1, plus 169.254.169.254 and 100.100.100.200 standing in for
metadata services, reached through host routes this suite adds and
removes). Allow-all sandboxes resolve names only at the fake host's DNS
server (probe 38); no DNS leaves the machine."""
import json
import os
import socket
import subprocess
import threading
import time

import lib
from lib import Skip, probe, say

NS = "sbxsecup"
META = ["169.254.169.254", "100.100.100.200"]


def sh(c):
    return subprocess.run(c, shell=True, capture_output=True, text=True, timeout=30)


def upstream(ctx):
    """Creates the fake internet once; returns the log path."""
    if "up" in ctx.cache:
        return ctx.cache["up"]
    log = os.path.join(ctx.dir, "upstream.log")
    steps = ["ip netns add %s" % NS, "ip link add %s0 type veth peer name up1 netns %s" % (NS, NS),
             "ip addr add 203.0.113.2/30 dev %s0" % NS, "ip link set %s0 up" % NS,
             "ip -n %s addr add 203.0.113.1/30 dev up1" % NS, "ip -n %s link set up1 up" % NS,
             "ip -n %s link set lo up" % NS, "ip -n %s route add default via 203.0.113.2" % NS]
    steps += ["ip -n %s addr add %s/32 dev lo" % (NS, m) for m in META]
    # host routes toward the fake metadata hosts: if the firewall let a
    # packet through, it would arrive (and be logged) there
    steps += ["ip route add %s/32 via 203.0.113.1" % m for m in META]

    def undo():
        for m in META:
            sh("ip route del %s/32 via 203.0.113.1" % m)
        if ctx.cache.get("up_proc"):
            ctx.cache["up_proc"].kill()
        sh("ip netns del %s; ip link del %s0" % (NS, NS))
    ctx.cleanups.append(undo)
    sh("ip netns del %s; ip link del %s0" % (NS, NS))     # a crashed earlier run
    for c in steps:
        r = sh(c)
        if r.returncode:
            raise Skip("cannot build the test upstream netns (%s: %s)" % (c, r.stderr.strip()))
    # iptables counters in the namespace: every packet that reaches it
    for d in ["203.0.113.1"] + META:
        sh("ip netns exec %s iptables -A INPUT -d %s" % (NS, d))
    p = subprocess.Popen(["ip", "netns", "exec", NS, "/usr/bin/python3",
                          os.path.join(lib.HERE, "upstream.py"), log, "600"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ctx.cache["up_proc"] = p
    # generous: a python start on a busy machine; the wait ends when it is ready
    if not lib.wait_until(lambda: os.path.exists(log) and "ready" in open(log).read(), 60):
        raise RuntimeError("the test upstream (upstream.py) did not start")
    ctx.cache["up"] = log
    firewall_guard(ctx)
    return log


def firewall_guard(ctx):
    """The runner installs its chains on the first allow-all create; remove
    them at the end unless they were there before (as tests/runner does)."""
    had = sh("iptables -S SBX-FWD").returncode == 0
    fwd = open("/proc/sys/net/ipv4/ip_forward").read().strip()
    if had:
        return

    def undo():
        for c in ["iptables -D FORWARD -i sbxh+ -j SBX-FWD", "iptables -D FORWARD -o sbxh+ -j SBX-IN",
                  "iptables -D INPUT -i sbxh+ -j DROP",
                  "iptables -t nat -D POSTROUTING -s 10.201.0.0/18 ! -o sbxh+ -j MASQUERADE",
                  "iptables -F SBX-FWD", "iptables -X SBX-FWD", "iptables -F SBX-IN", "iptables -X SBX-IN"]:
            sh(c)
        with open("/proc/sys/net/ipv4/ip_forward", "w") as f:
            f.write(fwd)
    ctx.cleanups.insert(0, undo)     # after the sandboxes are gone


def up_log(ctx):
    with open(ctx.cache["up"]) as f:
        return [l.split() for l in f.read().splitlines() if l != "ready"]


def up_counts():
    out = sh("ip netns exec %s iptables -L INPUT -v -n -x" % NS).stdout
    c = {}
    for l in out.splitlines()[2:]:
        f = l.split()
        if len(f) >= 8:
            c[f[7]] = int(f[0])
    return c


def allow(ctx, role="NET"):
    upstream(ctx)
    return ctx.sandbox(role, network="allow-all")


class Listener:
    """A host TCP listener on every address, counting connections."""

    def __init__(self):
        self.s = socket.socket()
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.s.bind(("0.0.0.0", 0))
        self.s.listen(64)
        self.s.settimeout(0.2)
        self.port = self.s.getsockname()[1]
        self.n = 0
        self.stop = False
        self.t = threading.Thread(target=self.loop, daemon=True)
        self.t.start()

    def loop(self):
        while not self.stop:
            try:
                c, _ = self.s.accept()
                self.n += 1
                c.close()
            except OSError:
                pass

    def close(self):
        self.stop = True
        self.t.join(2)
        self.s.close()


@probe(34, "deny-all egress: TCP, UDP, ICMP, DNS, IPv6 all fail fast, upstream sees nothing")
def p34(ctx):
    upstream(ctx)
    sid = ctx.sandbox()
    c0, n0 = up_counts(), len(up_log(ctx))
    code = r"""
import time, socket
t0 = time.time()
R['tcp 80'] = tcp('203.0.113.1', 80)
R['tcp 8080'] = tcp('203.0.113.1', 8080)
R['tcp metadata'] = tcp('169.254.169.254', 80)
R['udp 9999'] = udp('203.0.113.1', 9999)
R['dns udp 53'] = udp('203.0.113.1', 53, bytes.fromhex('12340100000100000000000003777777076578616d706c6503636f6d0000010001'))
R['tcp6'] = tcp('2001:db8::1', 80)
R['icmp dgram socket'] = tryf(socket.socket, socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)
R['ping'] = os.system('ping -c1 -W1 203.0.113.1 >/dev/null 2>&1') >> 8
R['interfaces'] = sorted(os.listdir('/sys/class/net')) if os.path.exists('/sys/class/net') else open('/proc/net/dev').read().split()[-17:-16]
R['seconds'] = round(time.time() - t0, 1)
out()
"""
    res = ctx.a.py(sid, code)
    time.sleep(0.5)
    c1, n1 = up_counts(), len(up_log(ctx))
    say("attempts:", res)
    say("upstream packet counters before", c0, "after", c1, "; logged connections", n1 - n0)
    say("(deny-all has no veth at all, so there is no host-side drop counter: the packets "
        "cannot leave the sandbox's own network namespace)")
    fails = all(res[k] != "OPEN" and res[k] != "sent" for k in
                ("tcp 80", "tcp 8080", "tcp metadata", "udp 9999", "dns udp 53", "tcp6"))
    # "fast": every attempt is refused at once (no route), none waits out its timeout; how
    # long that took is only reported (a loaded machine stretches it).
    fast = all(res[k] != "timeout" for k in ("tcp 80", "tcp 8080", "tcp metadata", "tcp6"))
    # The jail refuses the ICMP socket itself; gVisor's own netstack hands one
    # out (its kernel, not the host's), which with no interface reaches
    # nothing: there the counters and the failed ping are what count.
    icmp_ok = lib.ISOLATION == "gvisor" or not res["icmp dgram socket"].startswith("ok")
    ok = fails and fast and icmp_ok and res["ping"] != 0 and c0 == c1 and n0 == n1
    return ok, str(res)


@probe(35, "host services: host loopback, host addresses, runner socket unreachable")
def p35(ctx):
    lst = Listener()
    try:
        deny = ctx.sandbox()
        net = allow(ctx)
        targets = "127.0.0.1 192.0.2.2 203.0.113.2".split()
        code = r"""
port, gwport = int(sys.argv[1]), int(sys.argv[2])
gw = gateway_ip()
R['gateway ip'] = gw
hosts = sys.argv[3:] + ([gw] if gw else [])
res = tcp_many([(h, p) for h in hosts for p in (port, gwport)])
for h in hosts:
    R['%s:listener' % h] = res['%s:%d' % (h, port)]
    R['%s:gateway' % h] = res['%s:%d' % (h, gwport)]
out()
"""
        args = [str(lst.port), str(ctx.port)] + targets
        r1 = ctx.a.py(deny, code, args=args)
        r2 = ctx.a.py(net, code, args=args)
    finally:
        lst.close()
    mode = os.stat(os.path.join(ctx.dir, "r.sock")).st_mode & 0o777
    say("deny-all:", r1)
    say("allow-all:", r2)
    say("host listener on 0.0.0.0:%d accepted %d; runner socket mode %o" % (lst.port, lst.n, mode))
    opened = [k for r in (r1, r2) for k, v in r.items() if v == "OPEN"]
    return not opened and lst.n == 0 and mode == 0o600 and r2["gateway ip"], \
        "open: %s, accepted %d, mode %o" % (opened, lst.n, mode)


@probe(36, "cloud metadata addresses dropped even with allow-all")
def p36(ctx):
    net = allow(ctx)
    c0 = up_counts()
    code = r"""
R['169.254.169.254:80'] = tcp('169.254.169.254', 80)
R['169.254.170.2:80'] = tcp('169.254.170.2', 80)
R['100.100.100.200:80'] = tcp('100.100.100.200', 80)
R['[fd00:ec2::254]:80'] = tcp('fd00:ec2::254', 80)
R['udp 169.254.169.254'] = udp('169.254.169.254', 53)
R['control 203.0.113.1:80'] = tcp('203.0.113.1', 80)
R['metadata.google.internal in /etc/hosts'] = 'metadata' in open('/etc/hosts').read()
out()
"""
    res = ctx.a.py(net, code)
    time.sleep(0.5)
    c1 = up_counts()
    say(res)
    say("upstream counters", c0, "->", c1)
    meta_pk = sum(c1.get(m, 0) - c0.get(m, 0) for m in META)
    ok = (res["control 203.0.113.1:80"] == "OPEN" and meta_pk == 0 and
          all(res[k] not in ("OPEN",) for k in res if ":80" in k and "control" not in k) and
          not res["metadata.google.internal in /etc/hosts"])
    return ok, "%s; packets at the fake metadata hosts: %d" % (res, meta_pk)


@probe(37, "cross-sandbox: no L2/L3 path between two allow-all sandboxes")
def p37(ctx):
    a = allow(ctx)
    b = allow(ctx, "NET2")
    # B listens on every address and counts connections in a file
    ctx.a.exec(b, "python3", ["-c", "import socket\ns=socket.socket()\n"
                              "s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
                              "s.bind(('0.0.0.0',8000)); s.listen(64)\n"
                              "open('/tmp/listening','w').close()\n"
                              "while True:\n c,_=s.accept(); open('/tmp/hits','a').write('x'); c.close()"],
               detached=True)
    # the detached listener starts in its own time: B's control connect waits for it
    lib.wait_until(lambda: ctx.a.sh(b, "test -e /tmp/listening && echo yes").strip() == "yes", 60, 0.3)
    rb = ctx.a.py(b, "R['ip']=my_ip(); R['self']=tcp('127.0.0.1',8000); out()")
    code = r"""
import time, socket
ip = sys.argv[1]
R['me'] = my_ip()
R['B:8000'] = tcp(ip, 8000, 1.0)
import select
t0 = time.time(); opened = []; n = 0
# non-blocking connects in batches of 400, 1 s each: ports 1-1024 in ~3 s
for lo in range(1, 1025, 400):
    if time.time() - t0 > 20: break
    socks = {}
    for p in range(lo, min(lo + 400, 1025)):
        s = socket.socket(); s.setblocking(False); s.connect_ex((ip, p)); socks[s] = p
    n += len(socks)
    end = time.time() + 1.0
    while socks and time.time() < end:
        _, w, _ = select.select([], list(socks), [], max(0, end - time.time()))
        for s in w:
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0: opened.append(socks[s])
            s.close(); del socks[s]
    for s in socks: s.close()
R['scanned'] = n; R['open'] = opened
R['arp'] = [l.split()[0] for l in open('/proc/net/arp').read().splitlines()[1:]]
R['packet socket'] = tryf(__import__('socket').socket, 17, 3, 0)
out()
"""
    ra = ctx.a.py(a, code, args=[rb["ip"]], sudo=True, timeout=60)

    def counted():
        h = ctx.a.sh(b, "cat /tmp/hits 2>/dev/null | wc -c").strip()
        return h if h != "0" else None
    # B counts a connection after its accept(), which may come after the
    # connecting side saw it open: wait for B's own control connect to be
    # counted, then see that nothing else was
    hits = lib.wait_until(counted, 30, 0.3) or "0"
    say("B at %s (self-connect %s); from A %s: %s" % (rb["ip"], rb["self"], ra["me"], ra))
    say("connections B received: %s (1 is B's own control connect)" % hits)
    ok = (rb["self"] == "OPEN" and ra["B:8000"] != "OPEN" and not ra["open"] and
          ra["scanned"] == 1024 and hits == "1" and ra["packet socket"] != "ok" and
          all(x == ra["me"].rsplit(".", 1)[0] + "." + str(int(ra["me"].rsplit(".", 1)[1]) - 1)
              for x in ra["arp"]))
    return ok, "A %s, B %s, hits %s" % (ra, rb, hits)


@probe(38, "DNS tricks: names resolving to metadata or loopback are blocked at connect time")
def p38(ctx):
    net = allow(ctx)
    lst = Listener()
    try:
        c0 = up_counts()
        # two ways a sandbox points names at blocked addresses: its own
        # /etc/hosts (root inside can write it, a file of its root under
        # either driver) and a hostile DNS server (the fake internet host
        # answers for these names)
        ctx.a.sh(net, "printf '169.254.169.254 allowed.example\\n127.0.0.1 local.example\\n"
                      "203.0.113.1 up.example\\n' >> /etc/hosts", sudo=True)
        code = r"""
import socket, struct
def by_hosts(n):
    try:
        return socket.gethostbyname(n)      # /etc/hosts only: these names exist nowhere else
    except OSError as e:
        return None
def by_dns(n):
    q = b'\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00'
    q += b''.join(bytes([len(l)]) + l.encode() for l in n.split('.')) + b'\x00\x00\x01\x00\x01'
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3)
    try:
        s.sendto(q, ('203.0.113.1', 53))
        a = s.recv(512)
    except OSError:
        return None
    finally:
        s.close()
    return socket.inet_ntoa(a[-4:]) if a[:2] == q[:2] and a[7] == 1 else None
for how, fn in (('hosts', by_hosts), ('dns', by_dns)):
    for n, p in (('allowed.example', 80), ('local.example', int(sys.argv[1])), ('up.example', 80)):
        ip = fn(n)
        R['%s %s' % (how, n)] = ip + ' ' + tcp(ip, p) if ip else 'resolve-error'
out()
"""
        res = ctx.a.py(net, code, args=[str(lst.port)])
        time.sleep(0.3)
        c1 = up_counts()
    finally:
        lst.close()
    say(res, "host listener accepted", lst.n, "metadata packets",
        sum(c1.get(m, 0) - c0.get(m, 0) for m in META))
    say("(there is no DNS-based allow-list yet: the policy is the kernel firewall on the "
        "resolved address at connect time, so rebinding between check and connect has nothing to race)")

    def blocked(how):
        return (res[how + " up.example"] == "203.0.113.1 OPEN" and
                res[how + " allowed.example"].startswith("169.254.169.254 ") and
                not res[how + " allowed.example"].endswith("OPEN") and
                res[how + " local.example"].startswith("127.0.0.1 ") and
                not res[how + " local.example"].endswith("OPEN"))
    ok = (blocked("dns") and blocked("hosts") and lst.n == 0 and
          all(c1.get(m, 0) == c0.get(m, 0) for m in META))
    return ok, str(res)


@probe(39, "address encodings of loopback and metadata are blocked like the canonical form")
def p39(ctx):
    net = allow(ctx)
    lst = Listener()
    try:
        c0 = up_counts()
        code = r"""
port = int(sys.argv[1])
loop = ['0x7f.1', '2130706433', '127.1', '0177.0.0.1', '::ffff:127.0.0.1', '::', '0.0.0.0',
        '0x7f000001', '::1']
meta = ['0xa9.0xfe.0xa9.0xfe', '2852039166', '169.254.43518', '::ffff:169.254.169.254',
        '::ffff:a9fe:a9fe', '0251.0376.0251.0376']
res = tcp_many([(h, port) for h in loop] + [(h, 80) for h in meta], 2.0)
for h in loop: R[h + ':listener'] = res['%s:%d' % (h, port)]
for h in meta: R[h + ':80'] = res['%s:80' % h]
out()
"""
        res = ctx.a.py(net, code, args=[str(lst.port)], timeout=90)
        time.sleep(0.3)
        c1 = up_counts()
    finally:
        lst.close()
    say(res)
    meta_pk = sum(c1.get(m, 0) - c0.get(m, 0) for m in META)
    say("host listener accepted", lst.n, "packets at fake metadata", meta_pk)
    opened = [k for k, v in res.items() if v == "OPEN"]
    return not opened and lst.n == 0 and meta_pk == 0, "open %s" % opened


@probe(40, "source spoofing: no raw sockets, no foreign source address leaves")
def p40(ctx):
    net = allow(ctx)
    n0 = len(up_log(ctx))
    code = r"""
import socket
R['raw socket'] = tryf(socket.socket, socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP)
R['ip addr add'] = os.system('ip addr add 198.18.0.1/32 dev eth0 2>/dev/null') >> 8
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
R['IP_TRANSPARENT'] = tryf(s.setsockopt, socket.SOL_IP, 19, 1)
s.setsockopt(socket.SOL_IP, 15, 1)     # IP_FREEBIND: bind a foreign address
R['bind foreign'] = tryf(s.bind, ('198.18.0.1', 0))
R['sendto'] = tryf(s.sendto, b'spoofed', ('203.0.113.1', 9999))
R['control'] = udp('203.0.113.1', 9999)
out()
"""
    res = ctx.a.py(net, code, sudo=True)
    # the fake host logs a datagram when it gets to it: wait for the control
    # datagram (sent last) to be logged; a spoofed one let through would be
    # queued before it on the same socket
    lib.wait_until(lambda: [l for l in up_log(ctx)[n0:] if l[:2] == ["udp", "9999"]], 30)
    srcs = [l[3] for l in up_log(ctx)[n0:] if l[0] == "udp"]
    # the host end of the sandbox's veth filters source addresses (strict
    # reverse path): its slot is in the runner's state.json of the sandbox
    with open(os.path.join(ctx.dir, "state", "sandboxes", net, "state.json")) as f:
        slot = json.load(f)["slot"]
    try:
        rp = open("/proc/sys/net/ipv4/conf/sbxh%d/rp_filter" % slot).read().strip()
    except OSError as e:
        rp = "no veth sbxh%d: %s" % (slot, e)
    say(res, "upstream UDP sources:", srcs, "rp_filter on sbxh%d:" % slot, rp)
    # every datagram that arrives must carry the host's masquerade address.
    # gVisor's netstack lets root inside set IP_TRANSPARENT on its own
    # sockets (its kernel, not the host's); what counts is that a foreign
    # address cannot be bound and nothing foreign leaves.
    transparent_ok = res["IP_TRANSPARENT"] != "ok" or (
        lib.ISOLATION == "gvisor" and res["bind foreign"] != "ok")
    if res["IP_TRANSPARENT"] == "ok":
        say("IP_TRANSPARENT accepted inside gVisor's netstack; bind foreign:", res["bind foreign"])
    ok = (res["raw socket"] != "ok" and res["ip addr add"] != 0 and transparent_ok
          and srcs and all(s == "203.0.113.2" for s in srcs) and res["control"] == "sent"
          and rp == "1")
    return ok, "%s sources %s" % (res, srcs)
