"""The flood section (probes 70-72, 195-196): thousands of concurrent preview
connections to one sandbox whose guest server listens, against the suite's
gateway and against a second gateway started under a 1024 descriptor
limit (also with most connections holding heads they never finish, or
without a reserve); the runner's per-sandbox connection cap. Bounded in time (each
flood stops after at most 30 s). What is asserted is deterministic:
every connection gets an answer (200, or 503 with a JSON error), the caps
hold exactly, the processes live, their descriptors come back, the
"out of descriptors" log stays at one line a second. Latency is measured
and printed, and asserted only as "every /healthz was answered within
5 s" (a generous bound: a busy CI machine can be slow, never silent)."""
import json
import os
import socket
import struct
import subprocess
import time

import flood
import lib
from lib import Api, Skip, probe, say

HEALTH_TIMEOUT = 5.0


def nfds(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return -1


def settle_fds(pid, want, seconds=15):
    """Wait for pid's descriptor count to come back to want (+ slack)."""
    return lib.wait_until(lambda: 0 <= nfds(pid) <= want + 4, seconds, 0.2) and nfds(pid)


def guest_sandbox(ctx, api=None):
    """A sandbox serving guest_server.py on port 3000, with room for
    thousands of connections; its preview Host."""
    api = api or ctx.a
    sid = ctx.own(api=api, ports=[3000], nofile=16384, pids=256)
    with open(os.path.join(lib.HERE, "guest_server.py"), "rb") as f:
        st, d = api.put(sid, "/tmp/.sec/guest_server.py", f.read())
    if st != 200:
        raise RuntimeError("upload guest_server.py: %s %s" % (st, d))
    api.exec(sid, "python3", ["/tmp/.sec/guest_server.py", "3000"], detached=True)
    host = "3000-%s.localhost" % sid
    anon = Api(ctx.port, None)

    def up():
        try:
            st, body, _ = anon.req("GET", "/", headers={"Host": host}, raw=True, timeout=5)
            return st == 200 and body == b"ok\n"
        except OSError:
            return False
    # generous: a python start on a busy machine; the wait ends when it answers
    if not lib.wait_until(up, 60, 0.3):
        raise Skip("the guest server did not answer through the preview proxy")
    return sid, host


def json_503(body):
    """True when a 503 answer carries {"error":{"code","message"}}."""
    head, _, b = body.partition(b"\r\n\r\n")
    if b"application/json" not in head.lower():
        return False
    try:
        e = json.loads(b.decode())["error"]
        return isinstance(e["code"], str) and isinstance(e["message"], str)
    except (ValueError, KeyError, TypeError):
        return False


def run_flood(port, host, n, seconds=30):
    hs = flood.HealthSampler(port, every=0.1, timeout=HEALTH_TIMEOUT)
    hs.start()
    t = time.time()
    try:
        st = flood.flood(port, host, n, seconds=seconds)
    finally:
        hs.stop.set()
        hs.join(HEALTH_TIMEOUT + 1)
    st["elapsed"] = time.time() - t
    return st, hs


def report(st, hs):
    p99 = hs.p99()
    say("connections: %d opened, %d connected, statuses %s, closed without an answer %d, "
        "unanswered %d, connect failed %d (%.1fs)" %
        (st["opened"], st["connected"], st["statuses"], st["closed_no_answer"],
         st["pending"], st["connect_failed"], st["elapsed"]))
    say("/healthz during the flood: %d answered, %d missed, p99 %s, worst %s" %
        (len(hs.lat), hs.misses, "%.3fs" % p99 if p99 is not None else "-",
         "%.3fs" % hs.worst() if hs.worst() is not None else "-"))


def check_answers(st, bad):
    """Every connection got a status line; every 503 carried JSON."""
    if st["closed_no_answer"] or st["pending"] or st["connect_failed"]:
        bad.append("connections without an answer: closed %d, unanswered %d, connect "
                   "failed %d" % (st["closed_no_answer"], st["pending"], st["connect_failed"]))
    other = {k: v for k, v in st["statuses"].items() if k not in (200, 503)}
    if other:
        bad.append("statuses other than 200/503: %s %r" % (other, st.get("bodies")))
    if st["statuses"].get(503) and not json_503(st["bodies"][503]):
        bad.append("a 503 without a JSON error body: %r" % st["bodies"][503][:300])


def log_text(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode(errors="replace")
    except OSError:
        return ""


@probe(70, "flood: 10k concurrent preview connections to one sandbox: all answered, "
           "caps hold, gateway alive")
def p70(ctx):
    sid, host = guest_sandbox(ctx)
    gw_log = os.path.join(ctx.dir, "gw.log")
    fd0, rfd0 = nfds(ctx.gw_pid), nfds(ctx.runner_pid)
    st, hs = run_flood(ctx.port, host, 10000)
    report(st, hs)
    bad = []
    check_answers(st, bad)
    # one client address: exactly the per-client cap stays open (every
    # answered 200 is held open until the end)
    if st["statuses"].get(200) != 256:
        bad.append("%s previews answered 200 and held, not the per-address cap 256" %
                   st["statuses"].get(200))
    if hs.misses:
        bad.append("/healthz missed %d times (over %gs or failed): %s" %
                   (hs.misses, HEALTH_TIMEOUT, hs.errors))
    if not ctx.healthy():
        bad.append("gateway or runner not healthy after the flood")
    if "Assertion" in log_text(gw_log):
        bad.append("an assertion in the gateway's stderr")
    fd1 = settle_fds(ctx.gw_pid, fd0)
    rfd1 = settle_fds(ctx.runner_pid, rfd0)
    say("descriptors: gateway %d before, %s after; runner %d before, %s after" %
        (fd0, nfds(ctx.gw_pid), rfd0, nfds(ctx.runner_pid)))
    if not fd1:
        bad.append("gateway descriptors did not come back: %d before, %d after" %
                   (fd0, nfds(ctx.gw_pid)))
    if not rfd1:
        bad.append("runner descriptors did not come back: %d before, %d after" %
                   (rfd0, nfds(ctx.runner_pid)))
    ctx.drop(sid)
    return not bad, "; ".join(bad)


def second_gateway(ctx, extra):
    """A gateway on the suite's runner under `prlimit --nofile=1024:1024`
    (what `ulimit -n 1024` gives), stderr to a file; (proc, port, log)."""
    gw = os.environ.get("SEC_GW_BIN")
    if not gw or not os.access(gw, os.X_OK):
        raise Skip("SEC_GW_BIN (the gateway binary) not given")
    log = os.path.join(ctx.dir, "gw1024.log")
    keys = "%s,%s" % (ctx.ka, ctx.kb)
    env = dict(os.environ, SANDBOX_API_KEYS=keys,
               ASAN_OPTIONS="detect_leaks=0:quarantine_size_mb=16")
    logf = open(log, "wb")
    p = subprocess.Popen(["prlimit", "--nofile=1024:1024", gw, "--port", "0",
                          "--runner-socket", os.path.join(ctx.dir, "r.sock")] + extra,
                         stdout=logf, stderr=logf, env=env)
    logf.close()
    port = None
    end = time.time() + 20
    while time.time() < end and port is None:
        for line in log_text(log).splitlines():
            if line.startswith("sandbox-gateway: port "):
                port = int(line.split()[-1])
        if p.poll() is not None:
            raise RuntimeError("second gateway exited: %s" % log_text(log)[-800:])
        time.sleep(0.1)
    if port is None:
        p.kill()
        raise RuntimeError("second gateway did not start: %s" % log_text(log)[-800:])
    ctx.cleanups.append(lambda: (p.poll() is None and p.kill(), p.wait()))
    return p, port, log


@probe(71, "fd-safety: gateway under a 1024 descriptor limit, 3000 previews: every "
           "connection answered, /healthz answers, EMFILE logged once a second")
def p71(ctx):
    sid, host = guest_sandbox(ctx)
    # caps far above the limit: the descriptors, not the caps, run out
    p, port, log = second_gateway(ctx, ["--preview-max-per-sandbox", "100000",
                                        "--preview-max-per-client", "100000"])
    time.sleep(1)
    fd0 = nfds(p.pid)
    st, hs = run_flood(port, host, 3000)
    report(st, hs)
    bad = []
    check_answers(st, bad)
    if not st["statuses"].get(200):
        bad.append("no preview got through at all")
    if hs.misses:
        bad.append("/healthz missed %d times (over %gs or failed): %s" %
                   (hs.misses, HEALTH_TIMEOUT, hs.errors))
    if p.poll() is not None:
        bad.append("the gateway exited (status %s)" % p.returncode)
    fd1 = settle_fds(p.pid, fd0)
    say("descriptors: gateway %d before, %d after" % (fd0, nfds(p.pid)))
    if not fd1:
        bad.append("descriptors did not come back: %d before, %d after" % (fd0, nfds(p.pid)))
    text = log_text(log)
    lines = text.splitlines()
    ex = [l for l in lines if "out of file descriptors" in l or "Too many open files" in l]
    say("log: %d lines, %d about running out of descriptors (%d bytes) over %.1fs" %
        (len(lines), len(ex), len(text), st["elapsed"]))
    if not ex:
        bad.append("the gateway never reached its descriptor reserve: the probe tested nothing")
    # one line a second, plus one for a partial second at each end
    if len(ex) > st["elapsed"] + 3:
        bad.append("%d lines about descriptors in %.1fs: not rate-limited" %
                   (len(ex), st["elapsed"]))
    if "Assertion" in text:
        bad.append("an assertion in the gateway's stderr")
    p.terminate()
    p.wait(10)
    ctx.drop(sid)
    return not bad, "; ".join(bad)


def runner_connect(path, sid, port):
    """A runner `connect` (spliced) on its control socket: the socket and
    the reply object."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    body = json.dumps({"op": "connect", "id": sid, "port": port}).encode()
    s.sendall(struct.pack(">IB", len(body), 3) + body)
    buf = b""
    while len(buf) < 5 or len(buf) < 5 + struct.unpack(">I", buf[:4])[0]:
        d = s.recv(65536)
        if not d:
            break
        buf += d
    n = struct.unpack(">I", buf[:4])[0] if len(buf) >= 5 else 0
    try:
        return s, json.loads(buf[5:5 + n].decode())
    except ValueError:
        return s, {"raw": buf[:200].decode(errors="replace")}


@probe(72, "fd-safety: one sandbox (1024) or one owner (2048) cannot take every runner connection")
def p72(ctx):
    flood.raise_nofile(8192)
    a, _ = guest_sandbox(ctx)
    b, _ = guest_sandbox(ctx)
    c, _ = guest_sandbox(ctx)
    d, _ = guest_sandbox(ctx, api=ctx.b)   # another key: another owner tag
    path = os.path.join(ctx.dir, "r.sock")
    held, bad = [], []

    def fill(sid, n):
        codes = {}
        for _ in range(n):
            s, o = runner_connect(path, sid, 3000)
            held.append(s)
            if not o.get("ok"):
                k = json.dumps(o)[:120]
                codes[k] = codes.get(k, 0) + 1
        return codes

    def one(sid, what, want_ok):
        s, o = runner_connect(path, sid, 3000)
        held.append(s)
        say(what + ":", json.dumps(o)[:200])
        if want_ok and not o.get("ok"):
            bad.append("%s was refused: %s" % (what, json.dumps(o)[:200]))
        if not want_ok and (o.get("ok") or (o.get("error") or {}).get("code") != "too_many_connections"):
            bad.append("%s: %s" % (what, json.dumps(o)[:200]))
    try:
        codes = fill(a, 1024)
        if codes:
            bad.append("connections under the sandbox cap refused: %s" % codes)
        one(a, "sandbox A's connection 1025", False)
        one(b, "a second sandbox of the same owner", True)
        codes = fill(b, 1023)
        if codes:
            bad.append("connections under the owner cap refused: %s" % codes)
        one(c, "a third sandbox of the owner, at 2048", False)
        one(d, "another owner's sandbox meanwhile", True)
    finally:
        for s in held:
            s.close()
    if not ctx.healthy():
        bad.append("gateway or runner not healthy afterwards")
    for sid in (a, b, c, d):
        ctx.drop(sid)
    return not bad, "; ".join(bad)


def held_flood(ctx, flags, kinds, n, api_ok, log_wants, inflight=None):
    """A gateway under `prlimit --nofile=1024:1024` with flags, n preview
    connections held on it (flood.Held with kinds; kinds[0] is a whole
    request), and while they are held /healthz three times and an API
    call on fresh connections, each of which must answer with a status in
    api_ok within 10 s: a generous bound only a stalled gateway misses
    (the old one never accepted them at all). Then everything is let go:
    the descriptors come back and the gateway serves as before. log_wants:
    what its "out of descriptors" lines must name (else the probe tested
    nothing). Returns the list of what went wrong."""
    sid, host = guest_sandbox(ctx)
    # caps far above the limit, and a header timeout longer than the probe:
    # unfinished heads hold their descriptors until the probe lets go
    p, port, log = second_gateway(ctx, ["--preview-max-per-sandbox", "100000",
                                        "--preview-max-per-client", "100000",
                                        "--header-timeout", "300"] + flags)
    time.sleep(1)
    fd0 = nfds(p.pid)
    held = flood.Held(port, [k.replace(b"HOST", host.encode()) for k in kinds], n)
    bad = []
    try:
        t = time.time()
        held.open(seconds=60, inflight=inflight)
        sts = held.stats()
        unmade = sum(1 for e in held.all if e[2] == 0)
        say("held %d connections (%d connect failed, %d not connected) in %.1fs, gateway "
            "descriptors %d of 1024" % (len(held.all), held.connect_failed, unmade,
                                        time.time() - t, nfds(p.pid)))
        for k, st in zip(kinds, sts):
            say("%r: %s" % (k[:16], st))
        hz = [flood.get(port, "/healthz", timeout=10) for _ in range(3)]
        api = flood.get(port, "/v1/sandboxes", key=ctx.ka, timeout=10)
        say("while held: /healthz", [(c, "%.2fs" % s) for c, s, _ in hz],
            "API", api[0], "%.2fs" % api[1])
        for c, s, what in hz + [api]:
            if c not in api_ok:
                bad.append("while held: %s after %.1fs (%r), want %s" % (c, s, what, api_ok))
        if sts[0]["closed"] or sts[0]["silent"]:
            bad.append("whole requests without an answer: closed %d, silent %d" %
                       (sts[0]["closed"], sts[0]["silent"]))
        other = {k: v for st in sts for k, v in st["statuses"].items() if k not in (200, 503)}
        if other:
            bad.append("statuses other than 200/503: %s" % other)
        if not sts[0]["statuses"].get(200):
            bad.append("no preview got through at all")
        if held.connect_failed or unmade:
            bad.append("connections never made: %d failed, %d not connected" %
                       (held.connect_failed, unmade))
    finally:
        held.close()
    if p.poll() is not None:
        bad.append("the gateway exited (status %s)" % p.returncode)
    fd1 = settle_fds(p.pid, fd0)
    say("descriptors: gateway %d before, %d after" % (fd0, nfds(p.pid)))
    if not fd1:
        bad.append("descriptors did not come back: %d before, %d after" % (fd0, nfds(p.pid)))
    # afterwards: served as before, API and preview
    hz = flood.get(port, "/healthz", timeout=10)
    api = flood.get(port, "/v1/sandboxes", key=ctx.ka, timeout=10)
    try:
        st, body, _ = Api(port, None).req("GET", "/", headers={"Host": host}, raw=True,
                                          timeout=10)
    except OSError as e:
        st, body = 0, repr(e)
    say("after: /healthz %s, API %s, preview %s" % (hz[0], api[0], st))
    if (hz[0], api[0], st, body) != (200, 200, 200, b"ok\n"):
        bad.append("after the flood: /healthz %s, API %s, preview %s %r" % (hz[0], api[0], st, body))
    p.terminate()
    p.wait(10)
    text = log_text(log)
    if "Assertion" in text:
        bad.append("an assertion in the gateway's stderr")
    for w in ("ERROR: AddressSanitizer", "runtime error:"):
        if w in text:
            bad.append("a sanitizer report in the gateway's stderr: %s" %
                       text[text.index(w):][:600])
    ex = [l for l in text.splitlines() if "out of file descriptors" in l]
    say("log: %d lines about running out of descriptors: %s" %
        (len(ex), " | ".join(l.split(": ", 2)[-1][:200] for l in ex[:2] + ex[2:][-1:])))
    for w in log_wants:
        if not any(w in l for l in ex):
            bad.append("no \"%s\" in the gateway's log: the probe tested nothing" % w)
    ctx.drop(sid)
    return bad


WHOLE = b"GET / HTTP/1.1\r\nHost: HOST\r\n\r\n"


@probe(195, "fd-safety: gateway under a 1024 descriptor limit, 3000 preview connections "
            "held (a third answered, the rest with heads never finished): /healthz and the "
            "API answer, the listener never stops, descriptors come back")
def p195(ctx):
    # the unfinished heads give way to newer connections, oldest first
    bad = held_flood(ctx, [], [WHOLE, b"GET / HTTP/1.1\r\n", b"GET / HTTP/1.1\r\n"], 3000,
                     (200,), ["idle connections closed for new ones"])
    return not bad, "; ".join(bad)


@probe(196, "fd-safety: gateway under a 1024 descriptor limit without a reserve, previews "
            "holding every descriptor: a new connection is answered 503 at once, never "
            "left in the kernel's queue")
def p196(ctx):
    # --fd-reserve 0: previews may take the last descriptors (a few at a
    # time, so each is routed before the next comes), and nothing is left
    # to serve /healthz with; it must still get an answer
    bad = held_flood(ctx, ["--fd-reserve", "0"], [WHOLE], 1500, (200, 503),
                     ["connections refused at accept"], inflight=16)
    return not bad, "; ".join(bad)
