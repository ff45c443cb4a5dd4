"""Requests that follow one another on one API connection (pipelining).

Usage: pipeline.py [--tls] PORT KEY SID CID GW_PID   every route, pipelines of 2, 3, 50
       pipeline.py [--tls] --random SEED N PORT KEY SID CID GW_PID   N random connections

Every route of the gateway's route table (read from gateway/gw_routes.c,
so a new route is covered without an edit here) gets pipelines whose
requests mix methods, bodies, early refusals (no key, 405, 411, 413), a
body cut short, and requests behind a WebSocket upgrade. What the gateway
must do with a pipeline: answer its requests in order, each with a status
that request can get, or refuse one and close the connection; never a
response out of order, never silence on an open connection. Throughout, a
sampler asks /healthz on other connections: every one must answer. The
random mode draws connections of random requests, cut at random places
and sent in random pieces, with a fixed seed (make fuzz runs it longer).
Prints PASS/FAIL lines and "N passed, N failed"."""
import os
import random
import re
import socket
import ssl
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROUTES_C = os.path.join(HERE, "..", "..", "gateway", "gw_routes.c")
# An answer the gateway gives within this long; a gateway stalled by one
# connection answers never (the bug this guards against froze it for good)
ANSWER_S = 5.0

passed = failed = 0
TLS = None   # --tls: the gateway's port speaks TLS (its own certificate)


def connect(port, timeout):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    return TLS.wrap_socket(s, server_hostname="localhost") if TLS else s


def result(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("PASS: %s" % name, flush=True)
    else:
        failed += 1
        print("FAIL: %s%s" % (name, (": " + detail) if detail else ""), flush=True)


def routes():
    """(method or None, path pattern, ws) of every row of the route table."""
    src = open(ROUTES_C).read()
    # the path macros (#define SBX "/v1/sandboxes/{sid}", #define CMD SBX "...")
    macros = dict(re.findall(r'#define ([A-Z0-9]+) ((?:[A-Z0-9]+\s*)?"[^"]*")\s*$', src, re.M))

    def expand(text):
        return "".join(expand(macros[t]) if t in macros else t.strip('"')
                       for t in re.findall(r'[A-Z0-9]+|"[^"]*"', text))
    table = src[src.index("const struct gw_route gw_routes[]"):]
    table = table[:table.index("\n};")]
    out = []
    names = "|".join(macros) or "NONE"
    for m in re.finditer(r'\{\s*(NULL|"[A-Z]+")\s*,\s*((?:%s|"[^"]*")(?:\s*(?:%s|"[^"]*"))*)\s*,([^\n]*)'
                         % (names, names), table):
        method = None if m.group(1) == "NULL" else m.group(1).strip('"')
        out.append((method, expand(m.group(2)), ".ws" in m.group(3)))
    return out


class Req:
    """One request of a pipeline and the statuses it may get."""

    def __init__(self, raw, ok, name, closes=False):
        self.raw, self.ok, self.name, self.closes = raw, set(ok), name, closes
        h = raw.split(b"\r\n\r\n", 1)[0].lower()
        # what lws reads as a body: a Content-Length above 0, or for a
        # POST, PUT or PATCH none that reads as a number
        m = re.search(rb"\r\ncontent-length: *(\d+)", h)
        self.body = (int(m.group(1)) > 0) if m else h.split(b" ", 1)[0] in (b"post", b"put", b"patch")


def head(method, path, key, extra=()):
    lines = ["%s %s HTTP/1.1" % (method, path), "Host: 127.0.0.1"]
    if key:
        lines.append("Authorization: Bearer " + key)
    lines += list(extra)
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


# Statuses any request may get from the gateway in some state: the route's
# own answers (410: a /v2 route of a sandbox a pipelined pause or stop
# ended; 507: a full store), refusals, and 400 for a pipelined request
# with a body.
ANY = {200, 201, 202, 204, 400, 401, 403, 404, 405, 409, 410, 411, 413, 422, 426, 429, 500, 502, 503, 507}


def reqs_for(method, path, ws, key, sid, cid):
    """The requests made of one route row."""
    if (method == "DELETE" and "{cid}" not in path) or path.endswith("/stop"):
        sid = "sbx_local_" + "a" * 24   # the shared sandbox stays
    p = path.replace("{sid}", sid).replace("{cid}", cid)
    if p.endswith("/files") or p.endswith("/files/list"):
        p += "?path=/tmp/pipe.txt"
    out = []
    if ws:
        up = head("GET", p, key, ("Upgrade: websocket", "Connection: Upgrade",
                                  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
                                  "Sec-WebSocket-Version: 13"))
        out.append(Req(up, {101} | ANY, "upgrade %s" % path))
        out.append(Req(head("GET", p, key), ANY, "GET %s (not an upgrade)" % path))
        return out
    m = method or "GET"
    if m in ("POST", "PUT", "PATCH"):
        body = b"hello" if m == "PUT" or "stdin" in p else b"{}"
        out.append(Req(head(m, p, key, ("Content-Length: %d" % len(body),)) + body, ANY,
                       "%s %s with a body" % (m, path)))
        out.append(Req(head(m, p, key, ("Content-Length: 0",)), ANY, "%s %s empty" % (m, path)))
    else:
        out.append(Req(head(m, p, key), ANY, "%s %s" % (m, path)))
    out.append(Req(head(m, p, None, ("Content-Length: 2",)) + b"{}", ANY,
                   "%s %s without a key, with a body" % (m, path)))
    out.append(Req(head("PATCH", p, key, ("Content-Length: 2",)) + b"{}", ANY, "PATCH %s" % path))
    return out


def refusals(key):
    """Early answers: each may close the connection."""
    return [
        Req(head("GET", "/healthz", None), {200}, "GET /healthz"),
        Req(head("POST", "/v1/sandboxes", None, ("Content-Length: 2",)) + b"{}", {401, 400},
            "POST without a key"),
        Req(head("POST", "/v1/sandboxes", key, ("Transfer-Encoding: chunked",)) +
            b"2\r\n{}\r\n0\r\n\r\n", {411, 400}, "chunked body"),
        Req(head("POST", "/v1/sandboxes", key, ("Content-Length: 999999999",)) + b"{}",
            {413, 400}, "body over the cap"),
        # lws reads "x" as 0: no bytes follow, or they would start the next request
        Req(head("POST", "/v1/sandboxes", key, ("Content-Length: x",)), ANY,
            "bad Content-Length"),
        Req(head("DELETE", "/v1/capabilities", key), {405}, "method not allowed"),
        # lws answers this one itself, and ends its transaction unseen by us
        # (lws closes after it, without saying so)
        Req(head("GET", "/healthz", None, ("Upgrade: foo", "Connection: Upgrade")), {403},
            "an unknown Upgrade", closes=True),
        # lws would make the connection a raw one that nobody closes
        Req(b"CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", set(), "CONNECT", closes=True),
        Req(head("GET", "/v1/nothing", key), {404}, "unknown path"),
    ]


def read_responses(sock, deadline, expect):
    """(list of (status, headers), how it ended): 'closed', 'silent',
    'upgraded', or 'done' once expect responses came."""
    buf = b""
    out = []
    sock.settimeout(0.2)
    ended = "silent"

    def more():
        nonlocal buf, ended
        while time.time() < deadline:
            try:
                d = sock.recv(65536)
            except socket.timeout:
                return None
            except OSError:
                ended = "closed"
                return False
            if not d:
                ended = "closed"
                return False
            buf += d
            return True
        return None

    while True:
        if len(out) == expect:
            return out, "done"
        while b"\r\n\r\n" not in buf:
            r = more()
            if r is False:
                return out, ended
            if r is None:
                if time.time() >= deadline:
                    return out, "silent"
        h, _, rest = buf.partition(b"\r\n\r\n")
        lines = h.split(b"\r\n")
        m = re.match(rb"HTTP/1\.[01] (\d{3})", lines[0])
        if not m:
            return out + [(-1, h[:80])], "garbage"
        status = int(m.group(1))
        hdrs = {b":version": lines[0][:8]}   # an HTTP/1.0 answer ends its connection
        for ln in lines[1:]:
            k, _, v = ln.partition(b":")
            hdrs[k.strip().lower()] = v.strip().lower()
        out.append((status, hdrs))
        buf = rest
        if status == 101:
            return out, "upgraded"
        n = int(hdrs.get(b"content-length", b"-1"))
        if n < 0:   # a stream until close
            while more() is not False and time.time() < deadline:
                pass
            return out, ended
        while len(buf) < n:
            r = more()
            if r is False:
                return out, ended
            if r is None and time.time() >= deadline:
                return out, "silent"
        buf = buf[n:]
        if hdrs.get(b"connection") == b"close":
            more()
            return out, "closed"


def until_closed(sock, deadline):
    """'closed' once the peer closes (frames it sends meanwhile are
    skipped), else 'open'."""
    sock.settimeout(0.2)
    while time.time() < deadline:
        try:
            if not sock.recv(65536):
                return "closed"
        except socket.timeout:
            continue
        except OSError:
            return "closed"
    return "open"


def check_pipeline(port, reqs, cut=None, pieces=None, rnd=None, whole=False):
    """Send reqs on one connection; '' when the answers are right, else why.
    whole: every request must be answered (none refused), unless an answer
    ends the connection itself (Connection: close, an upgrade)."""
    data = b"".join(r.raw for r in reqs)
    if cut is not None:
        data = data[:cut]
    s = connect(port, ANSWER_S)
    try:
        try:   # the gateway may refuse and close before all is sent
            if pieces:
                pos = 0
                for n in pieces:
                    s.sendall(data[pos:pos + n])
                    pos += n
                    time.sleep(rnd.random() * 0.002 if rnd else 0)
                s.sendall(data[pos:])
            else:
                s.sendall(data)
            if cut is not None:
                s.shutdown(socket.SHUT_WR)
        except OSError:   # EPIPE, ECONNRESET, ENOTCONN
            pass
        got, ended = read_responses(s, time.time() + ANSWER_S + 0.2 * len(reqs), len(reqs))
        if ended == "upgraded" and len(got) < len(reqs) and cut is None:
            # what follows an upgrade is read as WebSocket frames: a request
            # there (its method's capital sets RSV1) is a bad frame
            ended = "upgraded, then " + until_closed(s, time.time() + ANSWER_S)
    finally:
        s.close()
    for i, (st, hdrs) in enumerate(got):
        if st == -1:
            return "garbage after %d responses: %r" % (i, hdrs)
        if i >= len(reqs):
            return "more responses (%d) than requests (%d)" % (len(got), len(reqs))
        if st not in reqs[i].ok:
            return "response %d (%s) is %d" % (i, reqs[i].name, st)
    if ended == "upgraded, then open":
        return "the WebSocket session stayed open with a request behind its upgrade"
    if whole and not ended.startswith("upgraded") and ended != "done" and not (
            got and got[-1][0] != 400 and (got[-1][1].get(b"connection") == b"close" or
                                           got[-1][1][b":version"] == b"HTTP/1.0" or
                                           reqs[len(got) - 1].closes)):
        return "%d of %d answered, then %s" % (len(got), len(reqs), ended)
    complete = cut is None
    if ended == "silent" and complete:
        return "the connection fell silent after %d of %d responses" % (len(got), len(reqs))
    if ended == "silent" and not complete and got == []:
        # a request cut short may wait for the rest of its body: the
        # gateway's own timeouts end it; what matters is the rest goes on
        return ""
    return ""


class Sampler(threading.Thread):
    """Asks /healthz on its own connections every 100 ms."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port, self.stop, self.worst, self.misses, self.n = port, False, 0.0, [], 0

    def run(self):
        while not self.stop:
            t0 = time.time()
            try:
                s = connect(self.port, ANSWER_S)
                s.settimeout(ANSWER_S)
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                d = b""
                while b"\r\n\r\n" not in d:
                    c = s.recv(4096)
                    if not c:
                        break
                    d += c
                s.close()
                if not d.startswith(b"HTTP/1.1 200"):
                    self.misses.append("answer %r" % d[:40])
            except OSError as e:
                self.misses.append("%s after %.1f s" % (e, time.time() - t0))
            self.worst = max(self.worst, time.time() - t0)
            self.n += 1
            time.sleep(0.1)


def gateway_cpu(pid):
    """CPU seconds the gateway has used."""
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def held_peer_gone(port, key, sid):
    """A response waiting for its command holds its connection (the gateway
    reads nothing from it meanwhile): a client that goes away must still
    be noticed, and its connection closed, long before the command ends."""
    import json
    import subprocess
    body = json.dumps({"cmd": "sleep", "args": ["120"], "detached": True}).encode()
    s = connect(port, 30)
    s.sendall(head("POST", "/v1/sandboxes/%s/commands" % sid, key,
                   ("Content-Length: %d" % len(body), "Connection: close")) + body)
    got = b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        got += d
    s.close()
    m = re.search(rb'"id":"(cmd_[a-z0-9]+)"', got)
    if not m:
        result("a waiting response's client that went away is let go", False, "no command: %r" % got[-200:])
        return
    cid = m.group(1).decode()
    s = connect(port, 30)
    s.sendall(head("GET", "/v1/sandboxes/%s/commands/%s?wait=1" % (sid, cid), key))
    mine = s.getsockname()[1]
    time.sleep(0.5)   # the request is in and waiting
    s.close()

    def gateway_side():
        out = subprocess.run(["ss", "-tnH", "dst", "127.0.0.1:%d" % mine, "src", "127.0.0.1:%d" % port],
                             capture_output=True, text=True).stdout
        return out.strip()
    t0 = time.time()
    while gateway_side() and time.time() - t0 < 30:
        time.sleep(0.2)
    left = gateway_side()
    result("a waiting response's client that went away is let go (after %.1f s; the command runs 120 s)"
           % (time.time() - t0), not left, left)


class Stalled(Exception):
    """The gateway stopped answering /healthz: nothing more can be checked."""


def alive(sampler, what):
    if sampler.misses:
        raise Stalled("/healthz went unanswered (%s) after %s" % (sampler.misses[0], what))


def fixed(port, key, sid, cid, sampler):
    rows = routes()
    result("the route table was read (%d rows)" % len(rows), len(rows) >= 20, str(rows[:3]))
    early = refusals(key)
    for method, path, ws in rows:
        mine = reqs_for(method, path, ws, key, sid, cid)
        for depth in (2, 3, 50):
            why = ""
            # the route's requests first, then early answers and the
            # route's again, in a fixed rotation
            pool = mine + early
            for start in range(len(mine)):
                reqs = [pool[(start + i * 3) % len(pool)] for i in range(depth)]
                why = check_pipeline(port, reqs)
                alive(sampler, "a pipeline of %d on %s" % (depth, path))
                if why:
                    why = "%s: %s" % ([r.name for r in reqs[:4]], why)
                    break
            result("pipeline of %d on %s %s: answered in order or refused with a close"
                   % (depth, method or "*", path), not why, why)
            # without bodies every request is served, in order
            plain = [r for r in pool if not r.body and not r.closes]
            reqs = [plain[i % len(plain)] for i in range(depth)]
            why = check_pipeline(port, reqs, whole=True)
            alive(sampler, "a pipeline without bodies of %d on %s" % (depth, path))
            result("pipeline of %d requests without bodies on %s %s: all served in order"
                   % (depth, method or "*", path), not why, "%s: %s" % ([r.name for r in reqs[:4]], why))
        # a body cut short behind a whole request
        reqs = mine[:1] + [Req(head("POST", "/v1/sandboxes", key, ("Content-Length: 50",)) + b"{", ANY,
                               "cut short")]
        why = check_pipeline(port, reqs, cut=len(reqs[0].raw) + len(reqs[1].raw))
        result("a body cut short behind %s %s" % (method or "*", path), not why, why)


def randomized(port, key, sid, cid, seed, n, sampler):
    rnd = random.Random(seed)
    rows = routes()
    pool = refusals(key)
    for method, path, ws in rows:
        pool += reqs_for(method, path, ws, key, sid, cid)
    bad = []
    for i in range(n):
        reqs = [rnd.choice(pool) for _ in range(rnd.choice((1, 2, 3, 5, 8, 20)))]
        total = sum(len(r.raw) for r in reqs)
        cut = rnd.randrange(total) if rnd.random() < 0.25 else None
        pieces = None
        if rnd.random() < 0.5:
            pieces = [rnd.randint(1, 64) for _ in range(rnd.randint(1, 30))]
        why = check_pipeline(port, reqs, cut=cut, pieces=pieces, rnd=rnd)
        alive(sampler, "random connection %d (seed %d): %s" % (i, seed, [r.name for r in reqs[:5]]))
        if why:
            bad.append("connection %d (seed %d): %s: %s" % (i, seed, [r.name for r in reqs[:5]], why))
    result("%d random connections (seed %d): each answered in order or refused with a close"
           % (n, seed), not bad, "; ".join(bad[:3]))


def main():
    global TLS
    args = sys.argv[1:]
    if args[0] == "--tls":
        TLS = ssl.create_default_context()
        TLS.check_hostname, TLS.verify_mode = False, ssl.CERT_NONE
        args = args[1:]
    rand = args[0] == "--random"
    if rand:
        seed, n, args = int(args[1]), int(args[2]), args[3:]
    port, key, sid, cid, gw_pid = int(args[0]), args[1], args[2], args[3], int(args[4])
    sampler = Sampler(port)
    sampler.start()
    try:
        if rand:
            randomized(port, key, sid, cid, seed, n, sampler)
        else:
            fixed(port, key, sid, cid, sampler)
            held_peer_gone(port, key, sid)
    except Stalled as e:
        result("the gateway keeps answering", False, str(e))
    finally:
        sampler.stop = True
        sampler.join()
    result("/healthz answered all %d times on other connections meanwhile (worst %.2f s, bound %.0f s)"
           % (sampler.n, sampler.worst, ANSWER_S), not sampler.misses, "; ".join(sampler.misses[:3]))
    # a gateway left spinning on a connection burns a core: over two idle
    # seconds an idle one uses next to nothing
    c0 = gateway_cpu(gw_pid)
    time.sleep(2)
    used = gateway_cpu(gw_pid) - c0
    result("the gateway is idle afterwards (%.2f s of CPU in 2 s)" % used, used < 1.0)
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
