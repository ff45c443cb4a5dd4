"""Shared pieces of the security probes: the public-API client, a minimal
WebSocket client, host-side helpers and the PASS/FAIL/SKIP bookkeeping.

Only the standard library: the host python3 is a bare pyenv 3.11."""
import base64
import hashlib
import http.client
import json
import os
import socket
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
counts = {"passed": 0, "failed": 0, "skipped": 0}
# the isolation of every sandbox of this run (tests/run.sh: one run per driver)
ISOLATION = os.environ.get("SANDBOX_TEST_ISOLATION", "jail")


PROBES = []


def probe(n, name):
    """Registers a probe: fn(ctx) -> (ok, detail); ok None = skipped."""
    def deco(fn):
        PROBES.append((n, name, fn))
        return fn
    return deco


class Skip(Exception):
    """Raised by a probe that cannot run here; the message says why."""


def say(*a):
    print("  " + " ".join(str(x) for x in a))
    sys.stdout.flush()


def result(n, name, ok, detail=""):
    if ok is None:
        counts["skipped"] += 1
        print("SKIP: %d %s: %s" % (n, name, detail))
    elif ok:
        counts["passed"] += 1
        print("PASS: %d %s" % (n, name))
    else:
        counts["failed"] += 1
        print("FAIL: %d %s: %s" % (n, name, detail))
    sys.stdout.flush()


class Api:
    """The gateway's REST API with one key. Every call has a timeout."""

    def __init__(self, port, key):
        self.port, self.key = port, key

    def req(self, method, path, body=None, headers=None, timeout=60, raw=False):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        h = {"Authorization": "Bearer " + self.key} if self.key else {}
        h.update(headers or {})
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        try:
            c.request(method, path, body=body, headers=h)
            r = c.getresponse()
            data = r.read()
        finally:
            c.close()
        if raw:
            return r.status, data, r
        try:
            return r.status, json.loads(data) if data else None
        except ValueError:
            return r.status, data

    def create(self, **kw):
        return self.req("POST", "/v1/sandboxes", kw)

    def delete(self, sid):
        return self.req("DELETE", "/v1/sandboxes/" + sid)

    def exec(self, sid, cmd, args=(), sudo=False, timeout=60, **kw):
        body = dict(cmd=cmd, args=list(args), sudo=sudo, **kw)
        st, d = self.req("POST", "/v1/sandboxes/%s/commands" % sid, body, timeout=timeout)
        if st != 200 and not kw.get("detached"):
            raise RuntimeError("exec %s -> %s %s" % (cmd, st, d))
        return d

    def sh(self, sid, line, sudo=False, timeout=60):
        """stdout+stderr of a shell line."""
        d = self.exec(sid, "bash", ["-c", line], sudo=sudo, timeout=timeout)
        return d["stdout"] + d["stderr"]

    def py(self, sid, code, sudo=False, timeout=60, args=()):
        """Runs python3 in the sandbox with the helper module sx importable
        (see put_helper); returns the parsed 'R {...}' line, or raises with
        the whole output."""
        pre = "import sys; sys.path.insert(0, '/tmp/.sec')\nfrom sx import *\n"
        d = self.exec(sid, "python3", ["-c", pre + code] + list(args), sudo=sudo,
                      timeout=timeout)
        for l in d["stdout"].splitlines():
            if l.startswith("R "):
                return json.loads(l[2:])
        raise RuntimeError("no result line: exit %s stdout %r stderr %r" %
                           (d.get("exit_code"), d["stdout"][-800:], d["stderr"][-800:]))

    def put(self, sid, path, data, mode=None):
        q = "/v1/sandboxes/%s/files?path=%s" % (sid, path) + ("&mode=%s" % mode if mode else "")
        return self.req("PUT", q, data)

    def put_helper(self, sid):
        with open(os.path.join(HERE, "sx.py"), "rb") as f:
            st, d = self.put(sid, "/tmp/.sec/sx.py", f.read())
        if st != 200:
            raise RuntimeError("upload sx.py: %s %s" % (st, d))


def sid_of(rep):
    st, d = rep
    if st != 201:
        raise RuntimeError("create -> %s %s" % (st, d))
    return d["id"]


class WS:
    """A minimal RFC 6455 client: enough to open a stream, send text and
    read frames, and to stop reading on purpose (slow-consumer probe)."""

    def __init__(self, port, path, headers=None, timeout=10):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        h = {"Host": "127.0.0.1:%d" % port, "Upgrade": "websocket", "Connection": "Upgrade",
             "Sec-WebSocket-Key": key, "Sec-WebSocket-Version": "13"}
        h.update(headers or {})
        req = "GET %s HTTP/1.1\r\n" % path + "".join("%s: %s\r\n" % kv for kv in h.items()) + "\r\n"
        self.s.sendall(req.encode())
        buf = b""
        while b"\r\n\r\n" not in buf:
            d = self.s.recv(4096)
            if not d:
                break
            buf += d
            if len(buf) > 65536:
                break
        head, _, self.rest = buf.partition(b"\r\n\r\n")
        lines = head.decode(errors="replace").split("\r\n")
        self.status = int(lines[0].split()[1]) if len(lines[0].split()) > 1 else 0
        self.headers = {}
        for l in lines[1:]:
            k, _, v = l.partition(":")
            self.headers[k.strip().lower()] = v.strip()
        self.head = head
        want = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")
                                             .encode()).digest()).decode()
        self.ok = self.status == 101 and self.headers.get("sec-websocket-accept") == want

    def send(self, data, opcode=1):
        if isinstance(data, str):
            data = data.encode()
        mask = os.urandom(4)
        n = len(data)
        hdr = bytes([0x80 | opcode])
        if n < 126:
            hdr += bytes([0x80 | n])
        elif n < 65536:
            hdr += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            hdr += bytes([0x80 | 127]) + struct.pack(">Q", n)
        self.s.sendall(hdr + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _read(self, n):
        while len(self.rest) < n:
            d = self.s.recv(65536)
            if not d:
                raise EOFError("connection closed")
            self.rest += d
        out, self.rest = self.rest[:n], self.rest[n:]
        return out

    def recv(self):
        """(opcode, payload); a close frame's payload keeps its code."""
        b0, b1 = self._read(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack(">H", self._read(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", self._read(8))[0]
        return b0 & 0x0F, self._read(n)

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass


def rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def sockdir_on_host(state, sid):
    """The host side of a sandbox's agent socket dir: rw/sock under jail (a
    dir on the writable layer's tmpfs), sock under gvisor."""
    d = os.path.join(state, "sandboxes", sid)
    jail = os.path.join(d, "rw", "sock")
    return jail if os.path.isdir(jail) else os.path.join(d, "sock")


def cg_dir(sid):
    """A sandbox's cgroup path below a hierarchy: sandbox/<id> for the jail,
    sandbox/gvisor_<runner>/<id> for gvisor (the runner's name is in the id)."""
    if ISOLATION == "gvisor":
        return "sandbox/gvisor_%s/%s" % (sid.split("_")[1], sid)
    return "sandbox/" + sid


def host_pids_of(sid):
    """Host pids whose cgroup names the sandbox."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/cgroup" % p) as f:
                if "/" + sid in f.read():
                    out.append(int(p))
        except OSError:
            pass
    return out


def proc_uid(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("Uid:"):
                    return int(line.split()[2])
    except OSError:
        return None


def run(cmd, **kw):
    return subprocess.run(cmd, shell=isinstance(cmd, str), capture_output=True, text=True,
                          timeout=kw.pop("timeout", 30), **kw)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def wait_until(fn, seconds, step=0.1):
    end = time.time() + seconds
    while time.time() < end:
        v = fn()
        if v:
            return v
        time.sleep(step)
    return fn()
