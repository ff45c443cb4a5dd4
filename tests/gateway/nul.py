"""Gateway suite, whole strings: every string field of a JSON body the
gateway reads (REST /v1, WebSocket stream messages, the @vercel/sandbox
routes) is refused with 422 invalid naming the field when it holds U+0000
("\\u0000"), and the request changes nothing. cJSON ends a string at such a
NUL, so before this a create with "jail\\u0000gvisor" made a jail sandbox
and a mkdir of "/tmp/nul-a\\u0000.b" made /tmp/nul-a.

Usage: nul.py PORT KEY (a gateway on a runner with the image; the key owns
nothing yet). Prints PASS:/FAIL: lines and "N passed, N failed, N skipped".
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "security"))
from lib import Api, WS  # noqa: E402

PORT, KEY = int(sys.argv[1]), sys.argv[2]
counts = {"passed": 0, "failed": 0, "skipped": 0}


def result(name, ok, detail=""):
    counts["passed" if ok else "failed"] += 1
    print("%s: nul: %s%s" % ("PASS" if ok else "FAIL", name, "" if ok else " " + detail))
    sys.stdout.flush()


def nul_message(field):
    return 'field "%s" must not contain NUL (\\u0000)' % field


def refused(api, name, method, path, body, field):
    """body is a dict: json.dumps writes the NUL as \\u0000."""
    st, d = api.req(method, path, json.dumps(body).encode(),
                    headers={"Content-Type": "application/json"})
    err = d.get("error", {}) if isinstance(d, dict) else {}
    result("%s: 422 invalid naming %s" % (name, field),
           (st, err.get("code"), err.get("message")) == (422, "invalid", nul_message(field)),
           "got %s %s" % (st, d))


def main():
    api = Api(PORT, KEY)
    st, sb = api.create(timeout_ms=180000)
    if st != 201:
        result("a sandbox to work on", False, "%s %s" % (st, sb))
        return
    sid = sb["id"]
    S = "/v1/sandboxes/" + sid
    st, c = api.req("POST", S + "/commands", {"cmd": "sleep", "args": ["120"], "detached": True})
    cid = c.get("id") if st == 201 else None
    result("a running command to work on", bool(cid), "%s %s" % (st, c))
    if not cid:
        return
    C = S + "/commands/" + cid

    rest = [
        ("create isolation jail\\0gvisor", "POST", "/v1/sandboxes", {"isolation": "jail\x00gvisor"}, "isolation"),
        ("create isolation gvisor\\0", "POST", "/v1/sandboxes", {"isolation": "gvisor\x00"}, "isolation"),
        ("create image", "POST", "/v1/sandboxes", {"image": "default\x00x"}, "image"),
        ("create network", "POST", "/v1/sandboxes", {"network": "allow-all\x00"}, "network"),
        ("create network allow list", "POST", "/v1/sandboxes",
         {"network": {"allow": ["example.com\x00.evil"]}}, "network.allow[0]"),
        ("create env value (no environment variable holds a NUL)", "POST", "/v1/sandboxes",
         {"env": {"A": "x\x00y"}}, "env.A"),
        ("create a field it ignores", "POST", "/v1/sandboxes", {"colour": "x\x00"}, "colour"),
        ("exec cmd", "POST", S + "/commands", {"cmd": "sh\x00x"}, "cmd"),
        ("exec args", "POST", S + "/commands",
         {"cmd": "sh", "args": ["-c", "echo one\x00; echo two"]}, "args[1]"),
        ("exec cwd", "POST", S + "/commands", {"cmd": "true", "cwd": "/tmp\x00/x"}, "cwd"),
        ("exec env value", "POST", S + "/commands", {"cmd": "true", "env": {"A": "\x00"}}, "env.A"),
        ("exec encoding", "POST", S + "/commands", {"cmd": "true", "encoding": "base64\x00"}, "encoding"),
        ("kill signal", "POST", C + "/kill", {"signal": "SIGKILL\x00"}, "signal"),
        ("mkdir path", "POST", S + "/files/mkdir", {"path": "/tmp/nul-a\x00.b", "parents": True}, "path"),
        ("extend, a field it ignores", "POST", S + "/extend", {"duration_ms": 1000, "note": "\x00"}, "note"),
        ("token scopes", "POST", S + "/token", {"scopes": ["read\x00write"]}, "scopes[0]"),
    ]
    for name, method, path, body, field in rest:
        refused(api, "rest: " + name, method, path, body, field)
    st, d = api.req("POST", "/v1/sandboxes", b'{"isolation\\u0000":"gvisor"}')
    result("rest: a key holding NUL is bad JSON (400) saying so",
           st == 400 and d["error"]["code"] == "bad_request" and "a key holds NUL" in d["error"]["message"],
           "%s %s" % (st, d))
    # cJSON reads "\uZZZZ" as U+0000 too: not JSON, refused where it is
    st, d = api.req("POST", "/v1/sandboxes", b'{"isolation":"jail\\uZZZZgvisor"}')
    result("rest: a \\u escape without four hex digits is bad JSON (400) saying where",
           st == 400 and d["error"]["message"] == "invalid JSON at byte 18: \\u needs four hex digits",
           "%s %s" % (st, d))

    # WebSocket stream messages: an error message, the session goes on
    ws = WS(PORT, "%s/stream?access_token=%s" % (C, KEY))
    got = []
    if ws.ok:
        for msg in ({"type": "kill", "signal": "SIGKILL\x00"}, {"type": "kill\x00x"}):
            ws.send(json.dumps(msg))
            while True:
                op, payload = ws.recv()
                if op == 1:
                    got.append(json.loads(payload).get("error", {}))
                    break
                if op == 8:
                    got.append("closed %r" % payload)
                    break
    ws.close()
    result("stream: a kill whose signal or type holds NUL is an error naming the field",
           got == [{"code": "invalid", "message": nul_message("signal")},
                   {"code": "invalid", "message": nul_message("type")}], str(got))

    # @vercel/sandbox: the session is the sandbox
    V = "/v2/sandboxes/sessions/" + sid
    vercel = [
        ("create env value", "/v3/sandboxes", {"env": {"A": "\x00"}}, "env.A"),
        ("create runtime", "/v3/sandboxes", {"runtime": "node22\x00"}, "runtime"),
        ("create networkPolicy", "/v3/sandboxes", {"networkPolicy": {"mode": "allow-all\x00"}},
         "networkPolicy.mode"),
        ("run command", V + "/cmd", {"command": "echo\x00x"}, "command"),
        ("run args", V + "/cmd", {"command": "sh", "args": ["-c", "echo one\x00; echo two"]}, "args[1]"),
        ("run cwd", V + "/cmd", {"command": "true", "cwd": "/tmp\x00"}, "cwd"),
        ("run env value", V + "/cmd", {"command": "true", "env": {"A": "\x00"}}, "env.A"),
        ("kill signal", V + "/cmd/" + cid + "/kill", {"signal": "SIGKILL\x00"}, "signal"),
        ("mkdir path", V + "/fs/mkdir", {"path": "/tmp/nul-v\x00.b"}, "path"),
        ("read path", V + "/fs/read", {"path": "/etc/hostname\x00x"}, "path"),
        ("read cwd", V + "/fs/read", {"path": "hostname", "cwd": "/etc\x00"}, "cwd"),
        ("extend-timeout, a field it ignores", V + "/extend-timeout", {"duration": 1000, "x": "\x00"}, "x"),
        ("network-policy mode", V + "/network-policy", {"mode": "deny-all\x00"}, "mode"),
    ]
    for name, path, body, field in vercel:
        refused(api, "vercel: " + name, "POST", path, body, field)

    # nothing changed: no sandbox, command, directory, signal or extension
    st, lst = api.req("GET", "/v1/sandboxes")
    result("nothing created: the key has its one sandbox",
           st == 200 and [s["id"] for s in lst["sandboxes"]] == [sid], str(lst))
    st, cl = api.req("GET", S + "/commands")
    result("nothing run: the sandbox has its one command, still running",
           st == 200 and [(x["id"], x["status"]) for x in cl["commands"]] == [(cid, "running")],
           str(cl))
    st, ls = api.req("GET", S + "/files/list?path=/tmp")
    names = [e["name"] for e in ls.get("entries", [])] if st == 200 else None
    result("nothing made: no /tmp/nul-a, no /tmp/nul-v",
           names is not None and not any(n.startswith("nul-") for n in names), str(ls))
    st, now = api.req("GET", S)
    result("not extended", st == 200 and now["expires_at"] == sb["expires_at"],
           "%s -> %s" % (sb["expires_at"], now.get("expires_at")))
    api.delete(sid)


try:
    main()
except Exception as e:  # noqa
    import traceback
    traceback.print_exc()
    result("ran to its end", False, repr(e))
print("%d passed, %d failed, %d skipped" % (counts["passed"], counts["failed"], counts["skipped"]))
sys.exit(1 if counts["failed"] else 0)
