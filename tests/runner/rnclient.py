"""Minimal client of the runner control API (docs/runner.md) for tests and
benchmarks: one JSON frame (4-byte BE length, type 3) each way."""
import json
import socket
import struct


def send_frame(s, obj, ftype=3):
    data = json.dumps(obj).encode() if not isinstance(obj, bytes) else obj
    s.sendall(struct.pack(">IB", len(data), ftype) + data)


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError("connection closed after %d of %d bytes" % (len(buf), n))
        buf += chunk
    return buf


def recv_frame(s):
    hdr = recv_exact(s, 5)
    (n, t) = struct.unpack(">IB", hdr)
    return t, recv_exact(s, n)


def request(path, obj, timeout=30):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(path)
    try:
        send_frame(s, obj)
        t, payload = recv_frame(s)
        return json.loads(payload)
    finally:
        s.close()


def connect(path, sid, port, timeout=30):
    """Returns (socket, reply); the socket is the raw stream when ok."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(path)
    send_frame(s, {"op": "connect", "id": sid, "port": port})
    t, payload = recv_frame(s)
    return s, json.loads(payload)


def shell(path, sid, line, timeout=30, port=1024):
    """Run one shell line in the sandbox through the real agent (exec of
    /bin/sh -c LINE as uid 1000, or as root when LINE starts with "root:")
    over the runner's connect; returns stdout and stderr in arrival order."""
    uid = 1000
    if line.startswith("root:"):
        uid, line = 0, line[5:]
    s, rep = connect(path, sid, port, timeout)
    if not rep.get("ok"):
        s.close()
        raise RuntimeError(rep)
    try:
        send_frame(s, {"op": "exec", "cmd": "/bin/sh", "args": ["-c", line],
                       "uid": uid, "gid": uid, "attach": True})
        out = b""
        while True:
            try:
                t, payload = recv_frame(s)
            except EOFError:
                break
            if t in (1, 2):
                out += payload
            elif t == 3:
                msg = json.loads(payload)
                if msg.get("ok") is False:
                    raise RuntimeError(msg)
                if msg.get("type") == "exit":
                    break
        return out.decode(errors="replace")
    finally:
        s.close()
