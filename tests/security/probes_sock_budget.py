"""Probe 185: what a sandbox sees at its socket budget (issue 24, item 5):
its sends held, its new connections refused while it stays there, allowed
again once it is back under, and no stop while it stays under its bound.
Probe 180 is the other half: a sandbox that stays over its bound ends as
out_of_memory.

Under gvisor the sandbox's sockets are gVisor's netstack, whose buffers
are the sentry's memory: the same fill ends the sandbox as out_of_memory
at memory_mb, and no host socket of the sandbox holds a byte."""
import json
import os
import time

import lib
from lib import probe, say
from probes_kernel_surface import read_int

MIB = 1 << 20

# Run inside: N loopback TCP pairs that never read; every socket sends
# 64 KiB writes until none takes a byte for 40 rounds (the kernel holds the
# sends: EAGAIN). Then a new loopback connection every 0.2 s for at most
# 60 s, until one is refused; then every filler closes and a new
# connection every 0.2 s for at most 60 s, until one is made again.
PROG = r"""
import errno, json, socket, sys, time
n = int(sys.argv[1])
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(n + 8)
addr = ls.getsockname()
socks = []
for i in range(n):
    c = socket.create_connection(addr)
    a, _ = ls.accept()
    for s in (c, a):
        s.setblocking(False)
        socks.append(s)
buf = b"x" * 65536
queued = held = idle = 0
while idle < 40:
    moved = 0
    for s in socks:
        try:
            k = s.send(buf)
        except BlockingIOError:
            held += 1
            continue
        queued += k
        moved += k
    if moved:
        idle = 0
    else:
        idle += 1
        time.sleep(0.05)

def connect_once():
    try:
        c = socket.create_connection(addr, timeout=10)
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    a, _ = ls.accept()
    c.close()
    a.close()
    return "connected"

def until(want, limit):
    tries, got, end = 0, None, time.time() + limit
    while time.time() < end:
        tries += 1
        got = connect_once()
        if want(got):
            break
        time.sleep(0.2)
    return got, tries

refused, tries = until(lambda g: g != "connected", 60)
for s in socks:
    s.close()
again, tries_again = until(lambda g: g == "connected", 60)
print("R " + json.dumps({"queued": queued, "sends_held": held, "refused": refused,
                         "tries": tries, "after_close": again, "tries_after": tries_again}))
"""


def netstack_fill(ctx):
    """gvisor: 32 pairs that never read (gVisor's netstack queues about
    1.5 MiB a socket, 96 MiB in all, over the sentry's 30 MiB of its own)
    take the sandbox's memory cgroup to memory_mb: the sandbox ends as
    out_of_memory (it would run on were they outside its cgroup). The
    cgroup's usage is read while it lives, for the report: the kernel's
    limit bounds it."""
    sid = ctx.own(memory_mb=64)
    cg = "/sys/fs/cgroup/memory/%s/" % lib.cg_dir(sid)
    v1 = os.path.exists("/sys/fs/cgroup/memory/sandbox")
    ctx.a.exec(sid, "python3", ["-c", PROG, "32"], detached=True)
    final, peak, t_end = None, None, time.time() + 120
    while time.time() < t_end:
        if v1:
            peak = max(peak or 0, read_int(cg + "memory.max_usage_in_bytes") or 0)
        g = ctx.a.req("GET", "/v1/sandboxes/" + sid)
        if g[0] == 200 and g[1].get("status") in ("failed", "stopped"):
            final = g[1]
            break
        time.sleep(0.3)
    r = dict(memory_seen=peak, status=(final or {}).get("status"),
             stop_reason=(final or {}).get("stop_reason"), oom_kills=(final or {}).get("oom_kills"))
    say(json.dumps(r))
    ctx.drop(sid)
    ok = (final is not None and final.get("status") == "failed" and
          final.get("stop_reason") == "out_of_memory" and ctx.healthy())
    return ok, json.dumps(r)


@probe(185, "socket memory: at its budget a sandbox's sends are held and its new "
            "connections refused, allowed again once under; under its bound it runs on "
            "(gvisor: its netstack's buffers fill memory_mb: out_of_memory)")
def p185(ctx):
    """memory_mb 64: the budget is 16 MiB (v1 memory.kmem.tcp.limit_in_bytes),
    the bound 20 MiB. 16 pairs that never read fill it (unbounded they
    queue about 8 MiB a pair) and force only 32 segments of 8 KiB past
    it, so the sandbox sits at its budget but under its bound. Was (before
    the runner refused connections): every new connection made, however
    long the sandbox sat at its budget."""
    if lib.ISOLATION != "jail":
        return netstack_fill(ctx)
    sid = ctx.own(memory_mb=64)
    v1 = os.path.exists("/sys/fs/cgroup/memory/sandbox")
    cg = ("/sys/fs/cgroup/memory/%s/" if v1 else "/sys/fs/cgroup/%s/") % lib.cg_dir(sid)
    d = ctx.a.exec(sid, "python3", ["-c", PROG, "16"], timeout=240)
    res = None
    for line in d["stdout"].splitlines():
        if line.startswith("R "):
            res = json.loads(line[2:])
    peak = read_int(cg + "memory.kmem.tcp.max_usage_in_bytes") if v1 else None
    limit = read_int(cg + "memory.kmem.tcp.limit_in_bytes") if v1 else None
    g = ctx.a.req("GET", "/v1/sandboxes/" + sid)
    r = dict(program=res, tcp_limit=limit, tcp_peak=peak,
             status=g[1].get("status") if g[0] == 200 else g,
             stderr=d["stderr"][-300:])
    say(json.dumps(r))
    ctx.drop(sid)
    if not res:
        return False, "no result: %s" % json.dumps(r)
    # bound: the budget and a quarter (the runner's, rn_sockwatch.h), on
    # v1 read as the cgroup's TCP peak; the queued bytes bound it on v2
    bound = 20 * MIB
    ok = (res["sends_held"] > 0 and res["queued"] >= 12 * MIB and
          res["refused"] == "ECONNREFUSED" and res["after_close"] == "connected" and
          res["queued"] < bound and g[0] == 200 and g[1].get("status") == "running" and
          ctx.healthy())
    if v1:
        ok = ok and limit == 16 * MIB and peak is not None and 15 * MIB <= peak < bound
    return ok, json.dumps(r)
