"""Runner suite, whole strings (test_runner.py calls run): every string of a
control request that holds U+0000 ("\\u0000") is refused with code invalid
naming the field, and changes nothing. cJSON ends a string at such a NUL:
before, {"isolation":"jail\\u0000gvisor"} made a jail sandbox and
{"isolation":"gvisor\\u0000"} a gvisor one. No field of the control API is
data (an environment variable cannot hold a NUL), so none takes one.
json.dumps writes a NUL as \\u0000."""
import json
import socket
import struct

import rnclient as rc


def nul_message(field):
    return 'field "%s" must not contain NUL (\\u0000)' % field


def run(r, result):
    st = r.create(timeout_ms=120000)
    if not st.get("ok"):
        result("nul: a sandbox to work on", False, str(st))
        return
    sid = st["sandbox"]["id"]
    before = sorted(s["id"] for s in r.req({"op": "list"})["sandboxes"])
    cases = [
        ({"op": "create", "isolation": "jail\x00gvisor"}, "isolation"),
        ({"op": "create", "isolation": "gvisor\x00"}, "isolation"),
        ({"op": "create", "image": "default\x00x"}, "image"),
        ({"op": "create", "network": "allow-all\x00"}, "network"),
        ({"op": "create", "owner": "tag\x00other"}, "owner"),
        ({"op": "create", "env": {"A": "x\x00y"}}, "env.A"),
        ({"op": "create", "colour": "\x00"}, "colour"),
        ({"op": "ping\x00x"}, "op"),
        ({"op": "stop", "id": sid + "\x00x"}, "id"),
        ({"op": "get", "id": sid + "\x00"}, "id"),
        ({"op": "extend", "id": sid + "\x00", "duration_ms": 1000}, "id"),
        ({"op": "connect", "id": sid + "\x00", "port": 1024}, "id"),
    ]
    bad = []
    for req, field in cases:
        rep = r.req(req)
        if rep.get("ok") is not False or rep["error"] != {"code": "invalid", "message": nul_message(field)}:
            bad.append((req, rep))
    result("nul: a string holding NUL in any field (isolation, image, network, owner, env, op, "
           "id, one it does not know) is invalid naming the field", not bad, str(bad))
    # a key names a field: one holding NUL is bad JSON
    s = socket.socket(socket.AF_UNIX)
    s.connect(r.sock)
    body = b'{"op":"create","isolation\\u0000":"gvisor"}'
    s.sendall(struct.pack(">IB", len(body), 3) + body)
    t, p = rc.recv_frame(s)
    s.close()
    err = json.loads(p).get("error", {})
    result("nul: a key holding NUL is bad_request saying so",
           err.get("code") == "bad_request" and "a key holds NUL" in err.get("message", ""), str(p))
    # cJSON reads "\uZZZZ" as U+0000 too: not JSON
    s = socket.socket(socket.AF_UNIX)
    s.connect(r.sock)
    body = b'{"op":"create","isolation":"gvisor\\uZZZZ"}'
    s.sendall(struct.pack(">IB", len(body), 3) + body)
    t, p = rc.recv_frame(s)
    s.close()
    err = json.loads(p).get("error", {})
    result("nul: a \\u escape without four hex digits is bad_request saying where",
           err == {"code": "bad_request", "message": "invalid JSON at byte 34: \\u needs four hex digits"}, str(p))
    now = r.req({"op": "list"})["sandboxes"]
    after = sorted(x["id"] for x in now)
    mine = [x for x in now if x["id"] == sid]
    result("nul: nothing created, and the sandbox a NUL id named is still running, not extended",
           after == before and mine and mine[0]["status"] == "running" and
           mine[0]["expires_at"] == st["sandbox"]["expires_at"], "%s %s %s" % (before, after, mine))
    r.req({"op": "stop", "id": sid})
