"""What a sandbox controls, the host side never follows (issue 10, finding
2), and what /proc inside shows of the host.

symlink-safe: root inside replaces its agent socket (/run/sbx/agent.sock,
  a directory shared with the host) with a symlink to a socket the test
  listens on outside any sandbox; the runner's idle probe, its connect op
  and the gateway's direct agent path then run; the host socket must
  receive nothing, runner and gateway answer, and the sandbox works again
  once the test puts the real socket back (from the host side). Under
  gvisor the agent's socket has left /run/sbx before the first command
  (probes 190-194): root plants the symlink at the free name, and the
  host side, which dials elsewhere, works on untouched.
agent-peer: the agent's socket is 0600 (run.sh starts the runner under
  umask 000), and a peer other than the host side or root inside is closed
  unserved even when root inside opens the socket's mode.
proc-mask: the host-wide files of /proc read empty or the sandbox's own
  text, not the host's."""
import json
import os
import select
import socket
import threading
import time

import lib
from lib import probe, say


class HostListener:
    """A UNIX socket on the host, outside every sandbox, that counts the
    connections it gets."""

    def __init__(self, path):
        self.path, self.hits = path, 0
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.bind(path)
        self.s.listen(64)
        self.stop = threading.Event()
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        while not self.stop.is_set():
            r, _, _ = select.select([self.s], [], [], 0.1)
            if r:
                try:
                    c, _ = self.s.accept()
                    self.hits += 1
                    c.close()
                except OSError:
                    pass

    def close(self):
        self.stop.set()
        self.t.join(2)
        self.s.close()
        os.unlink(self.path)


def preview(ctx, sid, port=3000):
    anon = lib.Api(ctx.port, None)
    st, body, _ = anon.req("GET", "/", headers={"Host": "%d-%s.localhost" % (port, sid)},
                           raw=True, timeout=30)
    return st, body


@probe(90, "symlink-safe: agent socket swapped for a symlink to a host socket: "
           "idle probe, connect op, gateway direct path and preview never reach it")
def p90(ctx):
    gvisor = lib.ISOLATION == "gvisor"
    hdir = os.path.join(ctx.dir, "hostsock")
    os.makedirs(hdir, exist_ok=True)
    lst = HostListener(os.path.join(hdir, "h.sock"))
    try:
        # idle_timeout_ms makes the runner probe the agent every second
        sid = ctx.own(idle_timeout_ms=600000, ports=[3000])
        sdir = lib.sockdir_on_host(ctx.state, sid)
        # /run/sbx on the host: the jail's sock/, gvisor's sock/guest/
        gdir = os.path.join(sdir, "guest") if gvisor else sdir
        if not os.path.lexists(os.path.join(sdir, "agent.sock")):
            return False, "no agent socket at %s" % sdir
        ctx.a.exec(sid, "python3", ["-m", "http.server", "3000", "--bind", "127.0.0.1"],
                   detached=True)
        up = lib.wait_until(lambda: preview(ctx, sid)[0] == 200, 30, 0.3)
        move = "" if gvisor else "mv /run/sbx/agent.sock /run/sbx/agent.real && "
        out = ctx.a.sh(sid, move + "ln -s %s /run/sbx/agent.sock && stat -c %%F "
                       "/run/sbx/agent.sock" % lst.path, sudo=True).strip()
        t0 = time.time()
        # the gateway's direct path, then the runner's connect op
        st_cmd, d_cmd = ctx.a.req("POST", "/v1/sandboxes/%s/commands" % sid,
                                  {"cmd": "true"}, timeout=30)
        st_files, _ = ctx.a.req("GET", "/v1/sandboxes/%s/files?path=/etc/hostname" % sid,
                                timeout=30)
        st_prev, _ = preview(ctx, sid)
        # the idle probe runs every second; several rounds (a probe that
        # follows the link hits the listener within one)
        time.sleep(max(0.0, 4 - (time.time() - t0)))
        swapped = os.path.islink(os.path.join(gdir, "agent.sock"))
        healthy = ctx.healthy()
        hits = lst.hits
        # the host side puts the real socket back: everything works again
        if not gvisor:
            os.unlink(os.path.join(sdir, "agent.sock"))
            os.rename(os.path.join(sdir, "agent.real"), os.path.join(sdir, "agent.sock"))
        again = ctx.a.sh(sid, "echo again").strip()
        st_get, d_get = ctx.a.req("GET", "/v1/sandboxes/" + sid)
        ctx.drop(sid)
    finally:
        lst.close()
    say("swap: %r; while swapped: exec %s %s, file read %s, preview %s (up before: %s); "
        "host socket hits %d; after restore: %r, status %s" %
        (out, st_cmd, json.dumps(d_cmd)[:160], st_files, st_prev, bool(up), hits, again,
         (d_get or {}).get("status") if isinstance(d_get, dict) else d_get))
    if gvisor:
        # the host never dials /run/sbx: all of it works through the swap
        served = st_cmd == 200 and st_files == 200 and st_prev == 200
    else:
        # refused closed; the jail's previews go over a TCP socket into the
        # sandbox's netns, untouched by the swap
        served = (st_cmd != 200 and isinstance(d_cmd, dict) and "error" in d_cmd and
                  st_files != 200 and st_prev == 200)
    ok = (out == "symbolic link" and swapped and hits == 0 and healthy and served and up and
          again == "again" and st_get == 200 and d_get.get("status") == "running")
    return ok, "hits %d swapped %s healthy %s exec %s files %s preview %s again %r" % (
        hits, swapped, healthy, st_cmd, st_files, st_prev, again)


PEER = r"""
import socket, struct
def ask(uid):
    def run():
        if uid:
            os.setgroups([]); os.setresgid(uid, uid, uid); os.setresuid(uid, uid, uid)
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(10)
        try:
            s.connect('/run/sbx/agent.sock')
        except OSError as e:
            return 'connect:' + errno.errorcode[e.errno]
        req = b'{"op":"idle"}'
        try:
            s.sendall(struct.pack('>IB', len(req), 3) + req)
            d = s.recv(512)
        except OSError as e:
            return 'recv:' + errno.errorcode.get(e.errno, str(e.errno))
        return 'served' if b'"ok":true' in d else ('closed' if not d else 'other')
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.write(w, run().encode()); os._exit(0)
    os.close(w)
    v = os.read(r, 200).decode(); os.waitpid(pid, 0)
    return v
R['mode'] = oct(os.stat('/run/sbx/agent.sock').st_mode & 0o7777)
R['uid1000'] = ask(1000)
os.chmod('/run/sbx/agent.sock', 0o666)
R['uid1000 opened'] = ask(1000)
R['nobody opened'] = ask(65534)
R['root'] = ask(0)
os.chmod('/run/sbx/agent.sock', 0o600)
out()
"""


# closed unserved: EOF, or a reset / broken pipe when the agent closed first
CLOSED = ("closed", "recv:ECONNRESET", "recv:EPIPE")


@probe(91, "agent-peer: socket 0600 under a umask-000 runner; only the host side "
           "(and root inside) is served")
def p91(ctx):
    sid = ctx.own()
    res = ctx.a.py(sid, PEER, sudo=True)
    after = ctx.a.sh(sid, "echo served").strip()
    ctx.drop(sid)
    want = {"mode": "0o600", "uid1000": "connect:EACCES",
            "uid1000 opened": CLOSED, "nobody opened": CLOSED, "root": "served"}
    if lib.ISOLATION == "gvisor":
        # gVisor checks the socket's mode on a connect through /proc/self/fd
        # too: refused before the agent even sees it
        want["uid1000 opened"] = want["nobody opened"] = CLOSED + ("connect:EACCES",)
    bad = {k: res.get(k) for k, v in want.items()
           if res.get(k) not in (v if isinstance(v, tuple) else (v,))}
    say("inside: %s; runner after: %r" % (res, after))
    return not bad and after == "served", "unexpected: %s (all %s)" % (bad, res)


MASK = r"""
def rdall(p):
    try:
        with open(p, 'rb') as f:
            return f.read(1 << 20)
    except OSError as e:
        return errno.errorcode[e.errno]
for p in ['/proc/cmdline', '/proc/config.gz', '/proc/loadavg', '/proc/meminfo',
          '/proc/diskstats', '/proc/schedstat', '/proc/modules', '/proc/zoneinfo']:
    v = rdall(p)
    R[p] = v.decode(errors='replace') if isinstance(v, bytes) else v
R['write meminfo'] = tryf(wr, '/proc/meminfo', b'x')
R['pressure'] = tryf(os.listdir, '/proc/pressure')
out()
"""


def host_text(p):
    try:
        with open(p, "rb") as f:
            return f.read(1 << 20).decode(errors="replace")
    except OSError:
        return None


@probe(92, "proc-mask: host cmdline, config.gz, loadavg, meminfo and statistics "
           "are not readable inside")
def p92(ctx):
    sid = ctx.own(memory_mb=256)
    res = ctx.a.py(sid, MASK, sudo=True)
    ctx.drop(sid)
    bad = []
    for p in ["/proc/cmdline", "/proc/config.gz", "/proc/diskstats", "/proc/schedstat",
              "/proc/modules", "/proc/zoneinfo"]:
        h = host_text(p)
        if h and res.get(p) not in ("", "ENOENT"):
            bad.append("%s: %r" % (p, res.get(p)[:80]))
    mem = res.get("/proc/meminfo", "")
    host_total = (host_text("/proc/meminfo") or "").split("\n")[0]
    if not mem.startswith("MemTotal:") or mem.split("\n")[0].split()[1] != str(256 * 1024):
        bad.append("meminfo: %r (host: %r)" % (mem[:60], host_total))
    if res.get("/proc/loadavg") != "0.00 0.00 0.00 1/1 1\n":
        bad.append("loadavg: %r" % res.get("/proc/loadavg"))
    if res.get("write meminfo") not in ("EROFS", "EACCES", "EPERM"):
        bad.append("write meminfo: %s" % res.get("write meminfo"))
    if os.path.exists("/proc/pressure") and res.get("pressure") not in ("ok:[]", "ENOENT"):
        bad.append("pressure: %s" % res.get("pressure"))
    say("inside: meminfo %r, loadavg %r, cmdline %r" %
        (mem.split("\n")[0], res.get("/proc/loadavg"), res.get("/proc/cmdline")))
    return not bad, "; ".join(bad)
