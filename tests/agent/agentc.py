"""Minimal client for the sandbox-agent protocol (docs/protocol.md), used by
the integration tests and the benchmark."""
import json
import socket
import struct

STDIN, STDOUT, STDERR, JSON, DATA, EOF = range(6)


class Conn:
    def __init__(self, path, handshake=None, timeout=20):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(timeout)
        self.s.connect(path)
        self.buf = bytearray()
        self.pos = 0
        if handshake is not None:
            self.s.sendall(b"CONNECT %d\n" % handshake)
            line = self.readline()
            if line != b"OK %d\n" % handshake:
                raise IOError("handshake answered %r" % line)

    def readline(self):
        while b"\n" not in self.buf:
            d = self.s.recv(1)
            if not d:
                raise EOFError("closed during handshake")
            self.buf += d
        line = bytes(self.buf)
        self.buf = bytearray()
        return line

    def send(self, typ, payload=b""):
        self.s.sendall(struct.pack(">IB", len(payload), typ) + payload)

    def req(self, obj):
        self.send(JSON, json.dumps(obj).encode())

    def _fill(self, n):
        while len(self.buf) - self.pos < n:
            if self.pos > (1 << 20):
                del self.buf[:self.pos]
                self.pos = 0
            d = self.s.recv(1 << 20)
            if not d:
                return False
            self.buf += d
        return True

    def frame(self):
        """(type, payload) or None at EOF."""
        if not self._fill(5):
            if len(self.buf) > self.pos:
                raise IOError("partial header")
            return None
        n, t = struct.unpack_from(">IB", self.buf, self.pos)
        if not self._fill(5 + n):
            raise IOError("partial frame")
        p = bytes(self.buf[self.pos + 5:self.pos + 5 + n])
        self.pos += 5 + n
        return t, p

    def json(self):
        f = self.frame()
        if f is None:
            raise EOFError("closed before reply")
        if f[0] != JSON:
            raise IOError("expected JSON frame, got type %d" % f[0])
        return json.loads(f[1])

    def close(self):
        self.s.close()


def call(path, obj, **kw):
    c = Conn(path, **kw)
    c.req(obj)
    r = c.json()
    c.close()
    return r


def collect(c):
    """Read an attach stream to its end: (out, err, combined list of
    (type, bytes), exit message, truncated messages)."""
    out, err, chunks, trunc = bytearray(), bytearray(), [], []
    ex = None
    while True:
        f = c.frame()
        if f is None:
            break
        t, p = f
        if t == STDOUT:
            out += p
            chunks.append((t, p))
        elif t == STDERR:
            err += p
            chunks.append((t, p))
        elif t == JSON:
            m = json.loads(p)
            if m.get("type") == "exit":
                ex = m
            elif m.get("type") == "truncated":
                trunc.append(m)
    return bytes(out), bytes(err), chunks, ex, trunc


def run(path, cmd, args=(), **extra):
    """exec with attach; returns (reply, out, err, exit)."""
    c = Conn(path)
    req = {"op": "exec", "cmd": cmd, "args": list(args), "attach": True}
    req.update(extra)
    c.req(req)
    r = c.json()
    if not r.get("ok"):
        c.close()
        return r, b"", b"", None
    out, err, _, ex, _ = collect(c)
    c.close()
    return r, out, err, ex
