"""Group D: multi-tenant and authorization (SECURITY.md 3.D), all through
the public API with two keys (A and B). Previews (62-64) need the preview
proxy; they skip while it is not in the build."""
import json
import re
import time

import lib
from lib import Api, Skip, WS, probe, say
from probes_c import preview_present


def b_sandbox(ctx):
    return ctx.sandbox("B", api=ctx.b)


@probe(56, "sandbox ids: 120 random lowercase bits; unknown and foreign ids look the same")
def p56(ctx):
    a = ctx.sandbox()
    b = b_sandbox(ctx)
    tail = a[len("sbx_%s_" % ctx.name):]
    fmt = bool(re.fullmatch(r"[a-z2-7]{24}", tail))       # 24 base32 chars = 120 bits
    guesses = ["sbx_%s_%s" % (ctx.name, "a" * 24), "sbx_%s_%s" % (ctx.name, "a" * 23 + "b"),
               "sbx_%s_a" % ctx.name, "sbx_1", "1", a.upper(), "sbx_%s_%s" % (ctx.name, tail.upper()),
               "123e4567-e89b-12d3-a456-426614174000", "sbx_%s_%s" % (ctx.name, tail[:-1])]
    bodies = {}
    for g in guesses + [b]:
        st, body, _ = ctx.a.req("GET", "/v1/sandboxes/" + g, raw=True)
        bodies[g] = (st, body.replace(g.encode(), b"ID"))
    shapes = {v for v in bodies.values()}
    # timing: unknown id vs another tenant's id, interleaved; the medians of
    # 41 each, so that a loaded machine's noise (milliseconds a request) evens
    # out between the two and only a difference of the gateway's shows
    t_unknown, t_foreign = [], []
    for i in range(41):
        for lst, g in ((t_unknown, guesses[0]), (t_foreign, b)):
            t = time.perf_counter()
            ctx.a.req("GET", "/v1/sandboxes/" + g)
            lst.append(time.perf_counter() - t)
    mu, mf = sorted(t_unknown)[20], sorted(t_foreign)[20]
    # a flood of 404s: is it limited? (documented residual risk if not)
    codes = {}
    t0 = time.time()
    for i in range(200):
        st, _ = ctx.a.req("GET", "/v1/sandboxes/sbx_%s_%024d" % (ctx.name, i))
        codes[st] = codes.get(st, 0) + 1
    say("id %s: 24 chars of [a-z2-7] = %s; 404 answers (id replaced by ID): %s" % (a, fmt, shapes))
    say("median latency unknown %.1f ms, another tenant's %.1f ms" % (mu * 1e3, mf * 1e3))
    say("200 guesses in %.1fs: %s (no rate limit: 120-bit ids make guessing hopeless; "
        "docs/security.md)" % (time.time() - t0, codes))
    ok = (fmt and len(shapes) == 1 and list(shapes)[0][0] == 404 and
          abs(mu - mf) < max(0.010, 0.5 * min(mu, mf)))
    return ok, "fmt %s shapes %s timing %.4f/%.4f" % (fmt, shapes, mu, mf)


@probe(57, "key B on sandbox A: 404 on every endpoint, no side effects")
def p57(ctx):
    a = ctx.own()
    ctx.a.put(a, "/home/sandbox/keep.txt", b"original")
    cmd = ctx.a.exec(a, "sleep", ["120"], detached=True)["id"]
    before = ctx.a.req("GET", "/v1/sandboxes/" + a)[1]
    base = "/v1/sandboxes/" + a
    B = ctx.b
    calls = [("GET", base, None), ("POST", base + "/commands", {"cmd": "id"}),
             ("GET", base + "/commands", None), ("GET", base + "/commands/" + cmd, None),
             ("GET", base + "/commands/%s?wait=1" % cmd, None),
             ("POST", base + "/commands/%s/kill" % cmd, {"signal": "SIGKILL"}),
             ("POST", base + "/commands/%s/stdin?eof=1" % cmd, b"x"),
             ("GET", base + "/commands/%s/logs" % cmd, None),
             ("GET", base + "/files?path=/home/sandbox/keep.txt", None),
             ("PUT", base + "/files?path=/home/sandbox/keep.txt", b"overwritten"),
             ("GET", base + "/files/list?path=/home/sandbox", None),
             ("POST", base + "/files/mkdir", {"path": "/home/sandbox/bdir"}),
             ("POST", base + "/extend", {"duration_ms": 3600000}),
             ("DELETE", base, None)]
    res = {}
    for m, p, body in calls:
        st, _, _ = B.req(m, p, body, raw=True, timeout=30)
        res["%s %s" % (m, p[len(base):] or "/")] = st
    for path in ("/commands/%s/stream" % cmd, "/pty?cmd=bash"):
        ws = WS(ctx.port, base + path + ("&" if "?" in path else "?") + "access_token=" + ctx.kb)
        res["WS " + path] = ws.status
        ws.close()
    after = ctx.a.req("GET", "/v1/sandboxes/" + a)[1]
    status = ctx.a.req("GET", base + "/commands/" + cmd)[1]
    content = ctx.a.req("GET", base + "/files?path=/home/sandbox/keep.txt", raw=True)[1]
    listed = a in json.dumps(B.req("GET", "/v1/sandboxes")[1])
    mk = ctx.a.sh(a, "test -e /home/sandbox/bdir && echo made || echo none").strip()
    say(res)
    say("after: sandbox %s, expires_at unchanged %s, command %s, file %r, B lists it %s, mkdir %s"
        % (after["status"], after["expires_at"] == before["expires_at"], status.get("status"),
           content, listed, mk))
    ok = (all(v == 404 for v in res.values()) and after["status"] == "running" and
          after["expires_at"] == before["expires_at"] and status.get("status") == "running" and
          content == b"original" and not listed and mk == "none")
    ctx.drop(a)
    return ok, str(res)


@probe(58, "WebSocket messages cannot act on another tenant's command")
def p58(ctx):
    a = ctx.sandbox()
    b = b_sandbox(ctx)
    acmd = ctx.a.exec(a, "sleep", ["60"], detached=True)["id"]
    bcmd = ctx.b.exec(b, "cat", [], detached=True)["id"]
    ws = WS(ctx.port, "/v1/sandboxes/%s/commands/%s/stream?access_token=%s" % (b, bcmd, ctx.kb))
    sent = []
    if ws.ok:
        for m in ({"type": "kill", "signal": "SIGKILL", "id": acmd, "sandbox": a, "command": acmd},
                  {"type": "kill", "signal": "SIGKILL", "sandbox_id": a, "command_id": acmd},
                  {"type": "stdin_eof", "id": acmd, "sandbox": a}):
            ws.send(json.dumps(m))
            sent.append(m)
        ws.send(b"\x00to-a?", opcode=2)
        time.sleep(1.0)
    ws.close()
    st = ctx.a.req("GET", "/v1/sandboxes/%s/commands/%s" % (a, acmd))[1]
    say("B's stream upgraded: %s; sent %d messages naming A's command; A's command: %s"
        % (ws.ok, len(sent), st.get("status")))
    ctx.a.req("POST", "/v1/sandboxes/%s/commands/%s/kill" % (a, acmd), {"signal": "SIGKILL"})
    return ws.ok and st.get("status") == "running", str(st)


@probe(59, "key lifecycle: missing, wrong scheme, whitespace, same-length wrong key, revocation")
def p59(ctx):
    anon = Api(ctx.port, None)
    wrong = "k" + ("x" * (len(ctx.ka) - 1))
    cases = {"no key": {}, "Basic": {"Authorization": "Basic " + ctx.ka},
             "trailing space": {"Authorization": "Bearer " + ctx.ka + " "},
             "leading space": {"Authorization": "Bearer  " + ctx.ka},
             "same length wrong": {"Authorization": "Bearer " + wrong},
             "prefix": {"Authorization": "Bearer " + ctx.ka[:-1]},
             "key only": {"Authorization": ctx.ka},
             "token in query on REST": None}
    res = {}
    for k, h in cases.items():
        if h is None:
            st, _ = anon.req("GET", "/v1/sandboxes?access_token=" + ctx.ka)
        else:
            st, _ = anon.req("GET", "/v1/sandboxes", headers=h)
        res[k] = st
    st, _ = anon.req("GET", "/v1/sandboxes", headers={"Authorization": "bearer " + ctx.ka})
    say(res, "| lower-case scheme (RFC 7235: case-insensitive):", st)
    ok = all(v == 401 for v in res.values())
    # revocation: remove a key from the keys file while one of its streams is
    # open and ask the gateway to reload (SIGHUP). Only tried when the
    # gateway handles SIGHUP: unhandled, SIGHUP would end it.
    src = open(ctx.root + "/gateway/gw_main.c").read()
    if "SIGHUP" not in src:
        say("key revocation without a restart: absent (no SIGHUP handler, keys read once)")
        if ok:
            return False, ("GATEWAY: keys cannot be revoked while the gateway runs (keys file read "
                           "once, no reload); a leaked key works, and its open streams stay open, "
                           "until a restart. Statuses %s" % res)
        return ok, str(res)
    return revoke(ctx, res, ok)


def revoke(ctx, res, ok):
    """The keys file's key (the canary, see run.sh) is revoked by rewriting
    the file and SIGHUP; its REST calls must get 401 and its stream close."""
    import os
    import signal
    kc = Api(ctx.port, ctx.canary)
    sid = lib.sid_of(kc.create(timeout_ms=60000))
    try:
        cmd = kc.exec(sid, "sleep", ["60"], detached=True)["id"]
        ws = WS(ctx.port, "/v1/sandboxes/%s/commands/%s/stream?access_token=%s" % (sid, cmd, ctx.canary))
        keys = os.path.join(ctx.dir, "keys")
        with open(keys) as f:
            old = f.read()
        with open(keys, "w") as f:
            f.write("# revoked\n")
        os.kill(ctx.gw_pid, signal.SIGHUP)
        t0 = time.time()
        st = lib.wait_until(lambda: kc.req("GET", "/v1/sandboxes")[0] == 401, 30, 0.2)
        rest_s = time.time() - t0
        closed = False
        ws.s.settimeout(1)
        while time.time() - t0 < 30 and not closed:   # waits end on success: generous
            try:
                op, _ = ws.recv()
                closed = op == 8
            except EOFError:
                closed = True
            except OSError:
                pass
        ws.close()
        with open(keys, "w") as f:
            f.write(old)
        os.kill(ctx.gw_pid, signal.SIGHUP)
        time.sleep(0.5)
        say("revoked by SIGHUP: REST 401 after %.1fs: %s; its stream closed within 30 s: %s"
            % (rest_s, bool(st), closed))
        return ok and bool(st) and closed and ctx.healthy(), "rest %s closed %s %s" % (st, closed, res)
    finally:
        Api(ctx.port, ctx.canary).delete(sid)


@probe(60, "key leakage: no keys in logs or error bodies; browsers get a scoped token")
def p60(ctx):
    a = ctx.sandbox()
    cmd = ctx.a.exec(a, "echo", ["x"], detached=True)["id"]
    ws = WS(ctx.port, "/v1/sandboxes/%s/commands/%s/stream?access_token=%s" % (a, cmd, ctx.ka))
    ws.close()
    bodies = []
    for h in ({"Authorization": "Bearer " + ctx.ka + "x"}, {"Authorization": "Bearer " + ctx.ka}):
        st, body, r = Api(ctx.port, None).req("GET", "/v1/sandboxes/nope", headers=h,
                                              raw=True)
        bodies.append(body)
    time.sleep(0.3)
    log = open(ctx.dir + "/gw.log", "rb").read()
    in_log = ctx.ka.encode() in log
    in_body = any(ctx.ka.encode() in b for b in bodies)
    # what the API offers a browser for WebSockets (API.md: ?access_token=<key>)
    st, _ = ctx.a.req("POST", "/v1/sandboxes/%s/token" % a, {})
    say("key in the gateway log: %s; echoed in an error body: %s; token endpoint: %s"
        % (in_log, in_body, st))
    if in_log or in_body:
        return False, "key leaked: log %s body %s" % (in_log, in_body)
    if st in (404, 405):
        return False, ("GATEWAY: browsers must put the long-lived API key in the WebSocket URL "
                       "(?access_token=<key>, API.md); there is no short-lived, sandbox-scoped "
                       "stream token, so the key ends up in browser history, proxies' URL logs "
                       "and page memory")
    return True, ""


@probe(61, "cross-site WebSocket hijacking: no ambient credentials")
def p61(ctx):
    a = ctx.sandbox()
    cmd = ctx.a.exec(a, "echo", ["x"], detached=True)["id"]
    path = "/v1/sandboxes/%s/commands/%s/stream" % (a, cmd)
    evil = {"Origin": "https://evil.example", "Cookie": "session=%s; key=%s" % (ctx.ka, ctx.ka)}
    w1 = WS(ctx.port, path, headers=evil)
    w1.close()
    w2 = WS(ctx.port, path + "?access_token=" + ctx.ka, headers={"Origin": "https://evil.example"})
    w2.close()
    cookies = []
    for p in ("/healthz", "/v1/sandboxes", "/"):
        _, _, r = ctx.a.req("GET", p, raw=True)
        cookies += r.headers.get_all("Set-Cookie") or []
    say("evil Origin with cookies only: %d; with an explicit token: %d; Set-Cookie seen: %s"
        % (w1.status, w2.status, cookies))
    return w1.status == 401 and not cookies, "cookie-only %d cookies %s" % (w1.status, cookies)


def need_preview(ctx):
    sid = ctx.sandbox()
    if not preview_present(ctx, sid):
        raise Skip("preview proxy not in this build (a preview Host gets the API's own answer)")
    return sid


@probe(62, "stopped or recycled sandbox's preview URL never reaches another sandbox")
def p62(ctx):
    need_preview(ctx)
    a = ctx.own(ports=[3000])
    ctx.a.exec(a, "python3", ["-m", "http.server", "3000"], detached=True)
    ctx.drop(a)
    b = ctx.own(ports=[3000])
    ctx.a.exec(b, "bash", ["-c", "mkdir -p /tmp/w && echo sandbox-B > /tmp/w/index.html && "
                           "cd /tmp/w && exec python3 -m http.server 3000"], detached=True)
    anon = Api(ctx.port, None)

    def b_answers():
        return anon.req("GET", "/", headers={"Host": "3000-%s.localhost" % b}, raw=True)[0] == 200
    # B's server starts in its own time (a loaded machine may take more than
    # a second): A's URL is asked once B's answers, so a mix-up would show
    up = lib.wait_until(b_answers, 30, 0.3)
    t = time.time()
    st, body, _ = anon.req("GET", "/", headers={"Host": "3000-%s.localhost" % a}, raw=True)
    took = time.time() - t
    stb, bodyb, _ = anon.req("GET", "/", headers={"Host": "3000-%s.localhost" % b}, raw=True)
    say("B's URL answered before A's was asked: %s" % bool(up))
    say("stopped A's URL: %d in %.2fs; B's URL: %d %r" % (st, took, stb, bodyb[:40]))
    ctx.drop(b)
    # took: an answer, not a wait on the dead upstream (that would be the 10 s header
    # timeout); generous, a loaded machine slows any request
    return st in (404, 410) and b"sandbox-B" not in body and took < 5 and b"sandbox-B" in bodyb, \
        "A %d %r" % (st, body[:100])


@probe(63, "preview host edge cases: control port never proxied, strict Host grammar")
def p63(ctx):
    sid = need_preview(ctx)
    anon = Api(ctx.port, None)
    hosts = ["1024-%s.localhost" % sid, "0-%s.localhost" % sid, "65536-%s.localhost" % sid,
             "03000-%s.localhost" % sid, "-1-%s.localhost" % sid, "3000-%s.localhost" % sid.upper(),
             "3000-%s.evil.localhost" % sid, "3000-%s.localhost.evil.com" % sid,
             "3000-%s.localhost." % sid, "3000-%s.localhost:443" % sid, "3000-%s%s.localhost" % (sid, "a" * 64)]
    res = {}
    for h in hosts:
        st, body, _ = anon.req("GET", "/", headers={"Host": h}, raw=True)
        res[h.replace(sid, "ID")] = st
    say(res)
    bad = {h: s for h, s in res.items() if h.startswith("1024-") and s not in (400, 404)}
    bad.update({h: s for h, s in res.items() if s not in (400, 404, 421) and not h.endswith((".localhost.", ":443"))})
    return not bad, str(bad)


@probe(64, "preview access model: public by default, token checks when required")
def p64(ctx):
    need_preview(ctx)
    a = ctx.own(ports=[3000], preview_auth=True)
    ctx.a.exec(a, "python3", ["-m", "http.server", "3000"], detached=True)
    time.sleep(1.5)
    st, _, _ = Api(ctx.port, None).req("GET", "/", headers={"Host": "3000-%s.localhost" % a}, raw=True)
    say("preview_auth sandbox without a token:", st)
    ctx.drop(a)
    return st in (401, 403), "status %d" % st


@probe(65, "sandbox to control plane: no reachable API, no injected credentials")
def p65(ctx):
    from probes_b import allow
    net = allow(ctx)
    deny = ctx.sandbox()
    code = r"""
keys = [sys.argv[1] + sys.argv[2], sys.argv[3] + sys.argv[4]]
R['api on own loopback'] = tcp('127.0.0.1', int(sys.argv[5]))
gw = gateway_ip()
R['api via host address'] = tcp(gw, int(sys.argv[5])) if gw else 'no route'
R['env'] = [k for k in os.environ if any(x in os.environ[k] for x in keys) or 'API_KEY' in k]
hits = []
for top in ('/etc', '/home', '/root', '/tmp', '/run', '/.sandbox', '/var', '/opt'):
    for d, dirs, files in os.walk(top):
        for f in files:
            p = os.path.join(d, f)
            try:
                if os.path.isfile(p) and not os.path.islink(p):
                    b = rd(p, 1 << 20)
                    if any(k.encode() in b for k in keys): hits.append(p)
            except OSError: pass
R['files'] = hits
out()
"""
    h = lambda k: [k[:len(k) // 2], k[len(k) // 2:]]       # never whole in a command line
    args = h(ctx.ka) + h(ctx.kb) + [str(ctx.port)]
    r1 = ctx.a.py(net, code, sudo=True, args=args, timeout=90)
    r2 = ctx.a.py(deny, code, sudo=True, args=args, timeout=90)
    say("allow-all:", r1)
    say("deny-all:", r2)
    ok = all(r[k] != "OPEN" for r in (r1, r2) for k in ("api on own loopback", "api via host address")) \
        and not r1["env"] and not r2["env"] and not r1["files"] and not r2["files"]
    return ok, "%s %s" % (r1, r2)
