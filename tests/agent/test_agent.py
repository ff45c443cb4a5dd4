"""Integration tests for sandbox-agent: real processes, real sockets.
Usage: test_agent.py AGENT_BINARY WORKDIR. Prints one line per test and a
closing "N passed, N failed, N skipped"."""
import hashlib
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agentc import Conn, call, collect, run, STDIN, STDOUT, STDERR, JSON, DATA, EOF  # noqa: E402

AGENT, WORK = sys.argv[1], sys.argv[2]
SOCK = os.path.join(WORK, "agent.sock")
RETENTION = 8 << 20
results = {"passed": 0, "failed": 0, "skipped": 0}
agent_proc = None


class Skip(Exception):
    pass


def check(cond, msg="check failed"):
    if not cond:
        raise AssertionError(msg)


def start_agent(sock, extra=(), prefix=()):
    log = open(os.path.join(WORK, "agent-%s.log" % os.path.basename(sock)), "ab")
    p = subprocess.Popen(list(prefix) + [AGENT, "--listen", "unix:" + sock,
                                         "--retention", str(RETENTION)] + list(extra),
                         stdout=log, stderr=log, cwd=WORK)
    for _ in range(200):
        try:
            if call(sock, {"op": "ping"}, timeout=2).get("ok"):
                return p
        except OSError:
            pass
        if p.poll() is not None:
            raise RuntimeError("agent exited with %s" % p.returncode)
        time.sleep(0.05)
    raise RuntimeError("agent did not become ready")


def alive():
    check(agent_proc.poll() is None, "agent died")
    check(call(SOCK, {"op": "ping"}) == {"ok": True, "version": 1}, "ping failed")


def exec_bg(**req):
    req["op"] = "exec"
    r = call(SOCK, req)
    check(r.get("ok"), "exec failed: %r" % r)
    return r["id"]


def wait(cid):
    r = call(SOCK, {"op": "wait", "id": cid}, timeout=60)
    check(r.get("ok"), "wait failed: %r" % r)
    return r["command"]


def attach(cid, offset=0):
    c = Conn(SOCK)
    c.req({"op": "attach", "id": cid, "offset": offset})
    r = c.json()
    check(r.get("ok"), "attach failed %r" % r)
    res = collect(c)
    c.close()
    return r, res


# ---------------------------------------------------------------- tests

def t_ping_and_handshake():
    check(call(SOCK, {"op": "ping"}) == {"ok": True, "version": 1})
    check(call(SOCK, {"op": "ping"}, handshake=1024) == {"ok": True, "version": 1})


def t_two_chunks_in_time():
    # Output is streamed as it comes, not held until the exit: the command
    # waits on stdin after its first chunk, and the test answers only once
    # that chunk has arrived (arrival times were measured before; a client
    # or agent stalled for 0.1 s on a busy machine got both chunks at once)
    c = Conn(SOCK)
    c.req({"op": "exec", "cmd": "sh", "args": ["-c", "printf a; read x; printf b >&2"],
           "attach": True, "stdin": True})
    check(c.json()["ok"])
    first = c.frame()
    check(first == (STDOUT, b"a"), "first chunk %r" % (first,))
    c.send(STDIN, b"go\n")
    c.send(EOF)
    got = [first]
    while True:
        f = c.frame()
        if f is None:
            break
        got.append(f)
    c.close()
    data = [(t, p) for t, p in got if t in (STDOUT, STDERR)]
    check(data == [(STDOUT, b"a"), (STDERR, b"b")], "chunks %r" % data)
    check(json.loads(got[-1][1]) == {"type": "exit", "exit_code": 0, "signal": None})


def t_replay_and_offset():
    script = "for i in 1 2 3 4 5; do printf 'out%d-' $i; printf 'err%d-' $i >&2; done; head -c 3000 /dev/urandom"
    c = Conn(SOCK)
    c.req({"op": "exec", "cmd": "sh", "args": ["-c", script], "attach": True})
    r = c.json()
    live = collect(c)
    c.close()
    cid = r["id"]
    r2, replay = attach(cid, 0)
    check(r2["offset"] == 0)
    check(replay[2] == live[2], "replay differs from live chunks")
    check(replay[3] == live[3] and live[3]["exit_code"] == 0)
    combined = b"".join(p for _, p in live[2])
    for n in (1, 7, len(combined) // 2, len(combined) - 1, len(combined)):
        r3, rest = attach(cid, n)
        check(r3["offset"] == n, "offset %r" % r3)
        check(b"".join(p for _, p in rest[2]) == combined[n:], "rest from %d" % n)
    st = call(SOCK, {"op": "status", "id": cid})["command"]
    check(st["output_bytes"] == len(combined) and st["status"] == "exited")


def t_retention_truncated_attach():
    total = 12 << 20   # over the suite agent's 8 MiB retention
    cid = exec_bg(cmd="sh", args=["-c", "yes abcdefghijklmno | head -c %d" % total])
    st = wait(cid)
    check(st["output_bytes"] == total)
    c = Conn(SOCK)
    c.req({"op": "attach", "id": cid, "offset": 0})
    r = c.json()
    t = c.json()
    check(t["type"] == "truncated" and t["bytes"] == r["offset"] > total - RETENTION, repr((r, t)))
    off = r["offset"]
    while True:
        f = c.frame()
        if f[0] == JSON:
            check(json.loads(f[1])["type"] == "exit")
            break
        check(verify(off, f[1]), "bytes at %d" % off)
        off += len(f[1])
    c.close()
    check(off == total)
    # attach beyond the end: clamped, no data, just the exit
    c = Conn(SOCK)
    c.req({"op": "attach", "id": cid, "offset": total + 100})
    check(c.json()["offset"] == total and json.loads(c.frame()[1])["type"] == "exit")
    c.close()


def t_exit_codes_signals():
    check(run(SOCK, "sh", ["-c", "exit 3"])[3]["exit_code"] == 3)
    ex = run(SOCK, "sh", ["-c", "kill -9 $$"])[3]
    check(ex == {"type": "exit", "exit_code": None, "signal": "SIGKILL"}, repr(ex))
    cid = exec_bg(cmd="sleep", args=["100"])
    check(call(SOCK, {"op": "signal", "id": cid, "signal": "SIGTERM"})["ok"])
    st = wait(cid)
    check(st["signal"] == "SIGTERM" and st["exit_code"] is None, repr(st))
    cid = exec_bg(cmd="sleep", args=["100"])
    check(call(SOCK, {"op": "signal", "id": cid, "signal": 9})["ok"])
    check(wait(cid)["signal"] == "SIGKILL")
    r = call(SOCK, {"op": "signal", "id": cid, "signal": "SIGNOPE"})
    check(not r["ok"] and r["error"]["code"] == "bad_request", repr(r))


def t_timeout():
    """exec timeout_ms: SIGKILL to the command's process group at expiry,
    even for a command that ignores SIGTERM, its background children too;
    reported as timed_out (security probe 46)."""
    pidfile = os.path.join(WORK, "timeout-child.pid")
    t0 = time.monotonic()
    cid = exec_bg(cmd="sh", args=["-c", "trap '' TERM; sleep 60 & echo $! > %s; exec sleep 61" % pidfile],
                  timeout_ms=500)
    st = wait(cid)
    took = time.monotonic() - t0
    check(st["signal"] == "SIGKILL" and st.get("timed_out") is True, repr(st))
    check(0.4 < took < 30, "took %.2fs" % took)   # not before the timeout; the upper bound only against a hang
    with open(pidfile) as f:
        child = int(f.read())

    def gone():
        try:
            with open("/proc/%d/stat" % child) as f:
                return f.read().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            return True
    end = time.monotonic() + 30   # SIGKILL is delivered when the child next runs
    while not gone() and time.monotonic() < end:
        time.sleep(0.05)
    check(gone(), "background child %d survived the timeout" % child)
    # (a timeout a starved sh cannot reach: this checks that a command
    # within its timeout is not killed, not how fast it runs)
    ex = run(SOCK, "sh", ["-c", "sleep 0.2; echo done"], timeout_ms=120000)[3]
    check(ex == {"type": "exit", "exit_code": 0, "signal": None}, repr(ex))
    r = call(SOCK, {"op": "exec", "cmd": "true", "timeout_ms": -1})
    check(not r["ok"] and r["error"]["code"] == "bad_request", repr(r))


def t_126_127():
    r, out, err, ex = run(SOCK, "no-such-command-xyz")
    check(r["ok"] and ex["exit_code"] == 127, repr(ex))
    check(b"No such file" in err, repr(err))
    r, out, err, ex = run(SOCK, "/nonexistent/x")
    check(ex["exit_code"] == 127)
    p = os.path.join(WORK, "noexec.sh")
    with open(p, "w") as f:
        f.write("#!/bin/sh\necho hi\n")
    os.chmod(p, 0o644)
    r, out, err, ex = run(SOCK, p)
    check(ex["exit_code"] == 126 and b"Permission denied" in err, repr((ex, err)))
    p2 = os.path.join(WORK, "garbage")
    with open(p2, "wb") as f:
        f.write(b"\x01\x02\x03 not a program")
    os.chmod(p2, 0o755)
    r, out, err, ex = run(SOCK, p2)
    check(ex["exit_code"] == 126 and b"Exec format error" in err, repr((ex, err)))


def t_env_cwd_uid():
    r, out, err, ex = run(SOCK, "sh", ["-c", "echo $FOO:$PATH"], env={"FOO": "bar baz"})
    check(out.startswith(b"bar baz:/"), repr(out))
    r, out, err, ex = run(SOCK, "sh", ["-c", "echo $FOO"])
    check(out == b"\n", "environment leaked: %r" % out)
    # no agent fd leaks into commands (everything is O_CLOEXEC)
    r, out, err, ex = run(SOCK, "sh", ["-c", "ls /proc/$$/fd"])
    check(sorted(out.split()) == [b"0", b"1", b"2"], "fds of a command: %r" % out)
    r, out, err, ex = run(SOCK, "pwd", cwd=WORK)
    check(out == WORK.encode() + b"\n", repr(out))
    if os.geteuid() != 0:
        raise Skip("not root: uid switch untested")
    r, out, err, ex = run(SOCK, "id", ["-u"], uid=65534, gid=65534, cwd="/")
    check(out == b"65534\n", repr((out, err)))
    r, out, err, ex = run(SOCK, "id", ["-g"], uid=65534, cwd="/")
    check(out == b"65534\n", repr((out, err)))
    r, out, err, ex = run(SOCK, "pwd", cwd="/nonexistent-dir")
    check(ex["exit_code"] == 127 and b"cwd" in err, repr((ex, err)))


def t_stdin():
    c = Conn(SOCK)
    c.req({"op": "exec", "cmd": "cat", "stdin": True, "attach": True})
    check(c.json()["ok"])
    c.send(STDIN, b"hello ")
    c.send(STDIN, b"world")
    c.send(EOF)
    out, err, _, ex, _ = collect(c)
    check(out == b"hello world" and ex["exit_code"] == 0, repr((out, ex)))
    # separate stdin connection, a large payload through a small pipe
    cid = exec_bg(cmd="sh", args=["-c", "wc -c"], stdin=True)
    s = Conn(SOCK)
    s.req({"op": "stdin", "id": cid})
    blob = os.urandom(1 << 20)
    for i in range(0, len(blob), 65536):
        s.send(STDIN, blob[i:i + 65536])
    s.send(EOF)
    check(s.json() == {"ok": True})
    s.close()
    wait(cid)
    _, res = attach(cid)
    check(res[0].strip() == str(len(blob)).encode(), repr(res[0]))
    cid = exec_bg(cmd="cat", stdin=True)
    check(call(SOCK, {"op": "stdin_eof", "id": cid})["ok"])
    check(wait(cid)["exit_code"] == 0)


def fd_count():
    return len(os.listdir("/proc/%d/fd" % agent_proc.pid))


def t_readers_independent():
    # two live readers and a late one see the same bytes; vanished waiters
    # and readers release their connections
    cid = exec_bg(cmd="sh", stdin=True, args=["-c", "read go; for i in $(seq 200); do echo line$i; done"])
    base = fd_count()
    a, b = Conn(SOCK), Conn(SOCK)
    for c in (a, b):
        c.req({"op": "attach", "id": cid})
        check(c.json()["ok"])
    gone = []
    for op in ("wait", "attach"):
        for _ in range(5):
            g = Conn(SOCK)
            g.req({"op": op, "id": cid})
            gone.append(g)
    if True:
        r = call(SOCK, {"op": "status", "id": cid})
        check(r["ok"])
    for g in gone:
        g.close()
    # the agent closes them when it gets to their hang-ups (2 s was the
    # bound before: short for a starved agent)
    end = time.monotonic() + 30
    while time.monotonic() < end:
        if fd_count() <= base + 2:
            break
        time.sleep(0.02)
    check(fd_count() <= base + 2, "connections of vanished clients still open: %d > %d + 2" %
          (fd_count(), base))
    s = Conn(SOCK)
    s.req({"op": "stdin", "id": cid})
    s.send(STDIN, b"go\n")
    s.send(EOF)
    check(s.json()["ok"])
    s.close()
    ra, rb = collect(a), collect(b)
    a.close()
    b.close()
    exp = b"".join(b"line%d\n" % i for i in range(1, 201))
    check(ra[0] == exp and rb[0] == exp and ra[3]["exit_code"] == 0)
    _, late = attach(cid)
    check(late[0] == exp)


def t_finished_eviction():
    ids = []
    for _ in range(70):
        ids.append(exec_bg(cmd="true"))
        wait(ids[-1])
    check(call(SOCK, {"op": "status", "id": ids[0]})["error"]["code"] == "not_found")
    check(call(SOCK, {"op": "status", "id": ids[-1]})["ok"])
    check(len(call(SOCK, {"op": "commands"})["commands"]) <= 64 + 1)


def t_status_commands():
    # running until the test ends its stdin (a `sleep 0.2` had exited
    # before the status call when the client was held up that long)
    cid = exec_bg(cmd="cat", stdin=True, id="my-cmd-1")
    st = call(SOCK, {"op": "status", "id": cid})["command"]
    check(st["status"] == "running" and st["exit_code"] is None and st["id"] == "my-cmd-1")
    r = call(SOCK, {"op": "exec", "cmd": "true", "id": "my-cmd-1"})
    check(r["error"]["code"] == "conflict", repr(r))
    check(call(SOCK, {"op": "stdin_eof", "id": cid})["ok"])
    st = wait(cid)
    check(st["status"] == "exited" and st["exit_code"] == 0 and st["ended_at"] >= st["started_at"])
    ids = [c["id"] for c in call(SOCK, {"op": "commands"})["commands"]]
    check(cid in ids)
    check(call(SOCK, {"op": "status", "id": "nope"})["error"]["code"] == "not_found")


def write_file(path, data, mode=None, chunk=65536):
    c = Conn(SOCK, timeout=60)
    req = {"op": "write_file", "path": path}
    if mode is not None:
        req["mode"] = mode
    c.req(req)
    mv = memoryview(data)
    for i in range(0, len(data), chunk):
        c.send(DATA, mv[i:i + chunk])
    c.send(EOF)
    r = c.json()
    c.close()
    return r


def read_file(path):
    c = Conn(SOCK, timeout=60)
    c.req({"op": "read_file", "path": path})
    r = c.json()
    if not r.get("ok"):
        return r, None
    out = bytearray()
    while True:
        t, p = c.frame()
        if t == EOF:
            break
        check(t == DATA and len(p) <= 65536)
        out += p
    c.close()
    return r, bytes(out)


def t_files():
    d = os.path.join(WORK, "files", "a", "b")
    data = os.urandom(300000) + b"\x00\xff" * 10
    r = write_file(os.path.join(d, "bin.dat"), data, mode=0o600)
    check(r == {"ok": True, "size": len(data)}, repr(r))
    check(os.stat(os.path.join(d, "bin.dat")).st_mode & 0o777 == 0o600)
    r, back = read_file(os.path.join(d, "bin.dat"))
    check(r["size"] == len(data) and back == data)
    big = os.urandom(100 * 1000 * 1000)
    r = write_file(os.path.join(d, "big"), big, chunk=1 << 20)
    check(r.get("size") == len(big), repr(r))
    r, back = read_file(os.path.join(d, "big"))
    check(hashlib.sha256(back).digest() == hashlib.sha256(big).digest(), "100 MB round trip")
    os.unlink(os.path.join(d, "big"))
    del big, back
    # a client that half-closes after its request still gets the whole file
    c = Conn(SOCK)
    c.req({"op": "read_file", "path": os.path.join(d, "bin.dat")})
    c.s.shutdown(socket.SHUT_WR)
    check(c.json()["size"] == len(data))
    got = bytearray()
    while True:
        t, p = c.frame()
        if t == EOF:
            break
        got += p
    c.close()
    check(bytes(got) == data, "read_file after half-close")
    r, _ = read_file(os.path.join(d, "missing"))
    check(r["error"]["code"] == "not_found", repr(r))
    r, _ = read_file(d)
    check(r["error"]["code"] == "invalid", repr(r))
    # empty file
    check(write_file(os.path.join(d, "empty"), b"") == {"ok": True, "size": 0})
    check(read_file(os.path.join(d, "empty"))[1] == b"")
    # mkdir, list, stat
    check(call(SOCK, {"op": "mkdir", "path": os.path.join(d, "x", "y"), "parents": True})["ok"])
    r = call(SOCK, {"op": "mkdir", "path": os.path.join(d, "x")})
    check(r["error"]["code"] == "conflict", repr(r))
    r = call(SOCK, {"op": "list", "path": d})
    ents = {e["name"]: e for e in r["entries"]}
    check(set(ents) == {"bin.dat", "empty", "x"}, repr(ents))
    check(ents["bin.dat"]["type"] == "file" and ents["bin.dat"]["size"] == len(data))
    check(ents["x"]["type"] == "dir" and ents["bin.dat"]["mode"] == 0o600)
    r = call(SOCK, {"op": "stat", "path": os.path.join(d, "bin.dat")})
    check(r["ok"] and r["type"] == "file" and r["size"] == len(data) and r["mtime"] > 0, repr(r))
    check(call(SOCK, {"op": "stat", "path": d + "/nope"})["error"]["code"] == "not_found")
    # a client vanishing mid-upload leaves nothing behind
    c = Conn(SOCK)
    c.req({"op": "write_file", "path": os.path.join(d, "partial")})
    c.send(DATA, b"x" * 100000)
    c.s.sendall(struct.pack(">IB", 50000, DATA) + b"y" * 100)  # truncated frame
    c.close()
    # wait for the agent to see the hang-up and remove its temp file (the
    # wait asked for a sorted directory listing as well, which depends on
    # the filesystem, and gave up after 2 s)
    end = time.monotonic() + 30
    while time.monotonic() < end:
        if not any(n.startswith(".partial") for n in os.listdir(d)):
            break
        time.sleep(0.02)
    alive()
    check(sorted(os.listdir(d)) == ["bin.dat", "empty", "x"], repr(os.listdir(d)))


class Echo:
    def __init__(self):
        self.ls = socket.socket()
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(8)
        self.port = self.ls.getsockname()[1]
        threading.Thread(target=self.loop, daemon=True).start()

    def loop(self):
        while True:
            try:
                s, _ = self.ls.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(s,), daemon=True).start()

    def serve(self, s):
        while True:
            d = s.recv(65536)
            if not d:
                break
            s.sendall(d)
        s.close()


def recv_exact(s, n):
    out = bytearray()
    while len(out) < n:
        d = s.recv(n - len(out))
        if not d:
            break
        out += d
    return bytes(out)


def t_forward():
    e = Echo()
    c = Conn(SOCK, handshake=e.port)
    blob = os.urandom(3 << 20)
    threading.Thread(target=lambda: c.s.sendall(blob), daemon=True).start()
    check(recv_exact(c.s, len(blob)) == blob, "echo via CONNECT")
    c.s.shutdown(socket.SHUT_WR)
    check(c.s.recv(10) == b"", "half-close propagated")
    c.close()
    c = Conn(SOCK)
    c.req({"op": "forward", "port": e.port})
    check(c.json() == {"ok": True})
    c.s.sendall(b"ping over forward")
    check(recv_exact(c.s, 17) == b"ping over forward")
    c.close()
    # nothing listening: CONNECT closes, forward answers an error
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(SOCK)
    s.sendall(b"CONNECT %d\n" % port)
    check(s.recv(100) == b"", "closed when nothing listens")
    s.close()
    r = call(SOCK, {"op": "forward", "port": port})
    check(not r["ok"] and r["error"]["code"] == "io", repr(r))
    e.ls.close()


def t_pty():
    c = Conn(SOCK)
    c.req({"op": "exec", "cmd": "sh", "args": ["-c", "read x; echo got:$x; stty size"],
           "pty": True, "rows": 24, "cols": 80, "attach": True})
    r = c.json()
    check(r["ok"])
    check(call(SOCK, {"op": "resize", "id": r["id"], "rows": 40, "cols": 100})["ok"])
    c.send(STDIN, b"hello\n")
    out, err, _, ex, _ = collect(c)
    c.close()
    check(b"hello\r\n" in out, "tty echo: %r" % out)
    check(b"got:hello" in out and b"40 100" in out, repr(out))
    check(ex["exit_code"] == 0)
    r = call(SOCK, {"op": "resize", "id": r["id"], "rows": 40, "cols": 100})
    check(not r["ok"], "resize after exit")
    cid = exec_bg(cmd="true")
    wait(cid)
    check(call(SOCK, {"op": "resize", "id": cid, "rows": 1, "cols": 1})["error"]["code"] == "invalid")


def t_attach_no_follow():
    cid = exec_bg(cmd="sh", args=["-c", "printf abc; printf de >&2; read x; exit 0"], stdin=True)
    # (2 s was once too short for sh to start on a loaded machine)
    end = time.monotonic() + 30
    while time.monotonic() < end:
        if call(SOCK, {"op": "status", "id": cid})["command"]["output_bytes"] == 5:
            break
        time.sleep(0.02)
    c = Conn(SOCK)
    c.req({"op": "attach", "id": cid, "offset": 1, "follow": False})
    r = c.json()
    frames = []
    while True:
        f = c.frame()
        if f is None:
            break
        frames.append(f)
    c.close()
    data = b"".join(p for t, p in frames if t in (STDOUT, STDERR))
    last = json.loads(frames[-1][1]) if frames and frames[-1][0] == JSON else {}
    check(r["ok"] and r["offset"] == 1 and data == b"bcde" and last == {"type": "end", "offset": 5},
          "attach without follow: %r %r" % (r, frames))
    call(SOCK, {"op": "stdin_eof", "id": cid})
    wait(cid)
    c = Conn(SOCK)
    c.req({"op": "attach", "id": cid, "follow": False})
    c.json()
    _, _, _, ex, _ = collect(c)
    c.close()
    check(ex and ex["exit_code"] == 0, "an exited command ends with exit: %r" % ex)


def t_pty_paced():
    """A PTY is not read while its only reader is behind: `yes` blocks
    instead of overwriting retention, and resumes when the reader reads."""
    c = Conn(SOCK)
    c.req({"op": "exec", "cmd": "yes", "pty": True, "attach": True})
    r = c.json()
    check(r["ok"])
    c.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    # wait for the output to stop growing (after a fixed 1 s, a starved
    # `yes` or agent had not yet filled the buffers: still growing); an
    # agent that keeps reading the PTY grows past the retention instead
    n1, n2, same, end = -1, 0, 0, time.monotonic() + 30
    while same < 2 and n2 < RETENTION and time.monotonic() < end:
        n1 = n2
        time.sleep(0.5)
        n2 = call(SOCK, {"op": "status", "id": r["id"]})["command"]["output_bytes"]
        same = same + 1 if n1 == n2 and n2 > 0 else 0
    check(same == 2 and n1 == n2 and n1 < RETENTION,
          "a stalled reader did not stop the PTY: %d -> %d" % (n1, n2))
    got = 0
    while got < 3 * n1:
        f = c.frame()
        check(f is not None and f[0] == STDOUT, "stream ended early")
        got += len(f[1])
    n3 = call(SOCK, {"op": "status", "id": r["id"]})["command"]["output_bytes"]
    check(n3 > n2, "the PTY was not read again once the reader caught up")
    call(SOCK, {"op": "signal", "id": r["id"], "signal": "SIGKILL"})
    c.close()
    wait(r["id"])


def t_pty_hangup_on_detach():
    # closed right after the reply, often before the command called
    # setsid(): 20 rounds (a loaded machine lost the hangup once)
    for _ in range(20):
        c = Conn(SOCK)
        c.req({"op": "exec", "cmd": "sleep", "args": ["60"], "pty": True, "attach": True,
               "hangup_on_detach": True})
        r = c.json()
        check(r["ok"])
        c.close()
        st = wait(r["id"])
        check(st["signal"] == "SIGHUP", "closing the terminal's connection: %r" % st)
        if st["signal"] != "SIGHUP":
            break


def t_idle():
    # (a command that runs until its stdin ends: a `sleep 1` had ended
    # before the probe on a client held up that long)
    cid = exec_bg(cmd="cat", stdin=True)
    r = call(SOCK, {"op": "idle"})
    check(r["ok"] and r["idle_ms"] == 0, "a running command is activity: %r" % r)
    call(SOCK, {"op": "stdin_eof", "id": cid})
    wait(cid)
    # the agent sees the close of wait's connection (activity) when it
    # gets to it: a stalled agent saw it in the same wake-up as the probe
    # below and answered 0. Wait for the idle time to grow, then check
    # that the probes themselves do not reset it.
    end = time.monotonic() + 30
    while True:
        a = call(SOCK, {"op": "idle"})
        if a["idle_ms"] >= 200 or time.monotonic() > end:
            break
        time.sleep(0.05)
    time.sleep(0.3)
    b = call(SOCK, {"op": "idle"})
    # the probes themselves are no activity: idle time keeps growing
    check(a["idle_ms"] >= 200 and b["idle_ms"] >= a["idle_ms"] + 250, "idle: %r %r" % (a, b))
    c = Conn(SOCK)
    c.req({"op": "attach", "id": cid})   # an open connection is activity
    time.sleep(0.1)
    r = call(SOCK, {"op": "idle"})
    c.close()
    check(r["idle_ms"] == 0 and r["connections"] >= 1, "a connected client is activity: %r" % r)


def t_quiesce_not_vsock():
    # quiesce is the vm driver's request to a VM's agent (on vsock); on a
    # UNIX listener the runner signals instead: refused, nothing ended
    cid = exec_bg(cmd="cat", stdin=True)
    c = Conn(SOCK)
    c.req({"op": "attach", "id": cid})
    check(c.json().get("ok"))
    r = call(SOCK, {"op": "quiesce"})
    check(r.get("ok") is False and r["error"]["code"] == "bad_request", "quiesce: %r" % r)
    n = call(SOCK, {"op": "idle"})["connections"]
    check(n >= 1, "the attached stream lives on: %d other connections" % n)
    c.close()
    call(SOCK, {"op": "stdin_eof", "id": cid})
    wait(cid)


def t_ready_fd():
    # --ready-fd: once the agent listens it writes one byte "l" (the
    # jail's runner takes it for the handshake's answer) and closes the
    # pipe; a connect right after the byte is answered, and no command
    # inherits the pipe
    sock = os.path.join(WORK, "ready.sock")
    r, w = os.pipe()
    os.set_inheritable(w, True)
    log = open(os.path.join(WORK, "agent-ready.log"), "ab")
    p = subprocess.Popen([AGENT, "--listen", "unix:" + sock, "--ready-fd", str(w)],
                         stdout=log, stderr=log, cwd=WORK, pass_fds=(w,))
    os.close(w)
    try:
        got = os.read(r, 1)   # blocks until the agent wrote or closed
        check(got == b"l", "the ready pipe carried %r, not the byte l" % got)
        check(call(sock, {"op": "ping"}, timeout=2).get("ok"), "no answer right after the byte")
        got = os.read(r, 16)  # then its end, nothing more
        check(got == b"", "after the byte the ready pipe carried %r" % got)
        _, out, _, ex = run(sock, "ls", ["/proc/self/fd"])
        fds = sorted(int(x) for x in out.split())
        check(ex and ex.get("exit_code") == 0 and 0 in fds, "ls /proc/self/fd: %r %r" % (out, ex))
        # stdio and ls's own directory: the pipe (fd %d in the agent) is not there
        check(set(fds) <= {0, 1, 2, 3}, "a command holds more (the pipe was %d): %r" % (w, fds))
    finally:
        os.close(r)
        p.kill()
        p.wait()
    # a value outside 3-1023 is a usage error, before anything listens
    bad = subprocess.run([AGENT, "--listen", "unix:" + sock + "2", "--ready-fd", "2"],
                         capture_output=True, timeout=10)
    check(bad.returncode == 2 and b"--ready-fd" in bad.stderr, "ready-fd 2: %r" % (bad,))


def agent_rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


PAT = b"abcdefghijklmno\n"
BIGPAT = PAT * (1 << 17)


def verify(off, p):
    o = off % 16
    return p == BIGPAT[o:o + len(p)]


def t_flood():
    total = int(os.environ.get("AGENT_FLOOD_BYTES", str(1 << 30)))
    reader = os.environ.get("FLOOD_READER")
    if not reader:
        raise Skip("no flood_reader helper")
    global RETENTION
    saved_ret, RETENTION = RETENTION, FLOOD_RETENTION
    sock = os.path.join(WORK, "flood.sock")
    p = start_agent(sock)
    RETENTION = saved_ret
    try:
        r = call(sock, {"op": "exec", "cmd": "sh", "stdin": True, "args": [
            "-c", "read go; yes abcdefghijklmno | head -c %d" % total]})
        cid = r["id"]
        fast = subprocess.Popen([reader, sock, cid, "check"], stdout=subprocess.PIPE)
        slow = Conn(sock, timeout=30)
        slow.req({"op": "attach", "id": cid})
        check(slow.json()["ok"])
        slow.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        # the fast reader prints "attached" once its attach was answered
        check(fast.stdout.readline().strip() == b"attached", "fast reader did not attach")
        g = Conn(sock)
        g.req({"op": "stdin", "id": cid})
        g.send(STDIN, b"go\n")
        g.send(EOF)
        check(g.json() == {"ok": True})
        g.close()
        f = slow.frame()       # the slow reader takes one chunk, then stalls
        check(f[0] == STDOUT and verify(0, f[1]))
        slow_off, truncated = len(f[1]), 0
        peak = 0
        t0 = time.monotonic()
        while fast.poll() is None and time.monotonic() - t0 < 120:
            peak = max(peak, agent_rss_kb(p.pid))
            time.sleep(0.05)
        dt = time.monotonic() - t0
        res = json.loads(fast.stdout.read())
        # Every byte the fast reader got is right and gaps are accounted
        # for exactly. The agent never waits for readers, so even a fast
        # reader that falls more than the retention behind (a scheduling
        # hiccup) is told about a gap rather than stalling the command.
        check(res["bytes"] == total and res["bad"] == 0, "fast reader: %r" % res)
        check(res["exit"] == {"type": "exit", "exit_code": 0, "signal": None}, repr(res))
        while True:
            f = slow.frame()
            if f is None:
                break
            t, pl = f
            if t == JSON:
                m = json.loads(pl)
                if m.get("type") == "truncated":
                    truncated += m["bytes"]
                    slow_off += m["bytes"]
            else:
                check(verify(slow_off, pl), "slow reader bytes wrong at %d" % slow_off)
                slow_off += len(pl)
        slow.close()
        check(truncated > 0 and slow_off == total,
              "slow: truncated %d, end %d" % (truncated, slow_off))
        check(res["truncated"] < truncated, "fast reader lost more than the slow one")
        limit_kb = (FLOOD_RETENTION >> 10) + 64 * 1024
        check(peak < limit_kb, "agent RSS %d KiB over %d KiB" % (peak, limit_kb))
        print("    flood: %d MiB in %.1fs (%.0f MiB/s), agent peak RSS %d MiB (%s build, "
              "retention %d MiB), slow reader skipped %d MiB, fast reader %d KiB" % (
                  total >> 20, dt, (total >> 20) / dt, peak >> 10,
                  "ASan" if "asan" in AGENT else "release", FLOOD_RETENTION >> 20,
                  truncated >> 20, res["truncated"] >> 10))
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


FLOOD_RETENTION = 32 << 20


def raw(data, shut=False, timeout=5):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(timeout)
    s.connect(SOCK)
    s.sendall(data)
    if shut:
        s.shutdown(socket.SHUT_WR)
    out = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
    except socket.timeout:
        out += b"<timeout>"
    s.close()
    return out


def err_code(out):
    n, t = struct.unpack(">IB", out[:5])
    check(t == JSON and len(out) == 5 + n, "one error frame: %r" % out[:80])
    m = json.loads(out[5:])
    check(m["ok"] is False and m["error"]["message"], repr(m))
    return m["error"]["code"]


def jf(obj):
    b = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return struct.pack(">IB", len(b), JSON) + b


def t_bad_input():
    # a long-running command must be unaffected by everything below
    cid = exec_bg(cmd="sh", args=["-c", "read x; echo survived:$x"], stdin=True)
    check(err_code(raw(jf(b'{"op":"ping"'), shut=True)) == "bad_request")    # bad JSON
    check(err_code(raw(jf({"op": "frobnicate"}))) == "bad_request")
    check(err_code(raw(jf({"nop": 1}))) == "bad_request")
    check(err_code(raw(jf(b'[1,2]'))) == "bad_request")
    check(err_code(raw(jf(b'{"op":"ping","op":"exec"}'))) == "bad_request")
    check(err_code(raw(struct.pack(">IB", 1 << 24, JSON) + b"{}")) == "bad_request")  # too long
    check(err_code(raw(struct.pack(">IB", 2, 9) + b"{}")) == "bad_request")         # bad type
    check(err_code(raw(struct.pack(">IB", 2, DATA) + b"{}")) == "bad_request")      # not JSON first
    check(err_code(raw(struct.pack(">IB", 100, JSON) + b"{", shut=True)) == "bad_request")  # truncated
    check(err_code(raw(jf({"op": "stat", "path": "a\u0000b"}))) == "bad_request")     # NUL path
    check(err_code(raw(jf(b'{"op":"stat","path":"a\\u0000b"}'))) == "bad_request")
    check(err_code(raw(jf({"op": "stat", "path": "x" * 5000}))) == "bad_request")
    check(err_code(raw(jf({"op": "exec", "cmd": 5}))) == "bad_request")
    check(err_code(raw(jf({"op": "exec", "cmd": "true", "args": [1]}))) == "bad_request")
    check(err_code(raw(jf({"op": "exec", "cmd": "true", "env": {"A=B": "x"}}))) == "bad_request")
    out = raw(jf({"op": "attach", "id": cid}) + struct.pack(">IB", 1, STDIN) + b"x")
    n = struct.unpack(">I", out[:4])[0]
    check(json.loads(out[5:5 + n]) == {"ok": True, "offset": 0})
    check(err_code(out[5 + n:]) == "bad_request")   # stdin not asked for
    check(raw(b"CONNECT 1024 and a lot more junk than allowed\n") == b"", "long handshake")
    check(raw(b"CONNECTX\n") == b"", "bad handshake")
    check(raw(b"CONNECT 99999\n") == b"", "bad port")
    check(raw(b"CONN", timeout=10) == b"", "handshake time-out closes")
    # vanishing clients at every stage
    for data in (b"", b"\x00\x00", jf({"op": "exec", "cmd": "sh", "args": ["-c", "head -c 5000000 /dev/zero"],
                                       "attach": True})):
        s = socket.socket(socket.AF_UNIX)
        s.connect(SOCK)
        s.sendall(data)
        s.close()
    # half-closed: request then SHUT_WR still gets the whole stream
    out = raw(jf({"op": "attach", "id": cid, "offset": 0}) , shut=True, timeout=0.5)
    check(out.endswith(b"<timeout>"), "attach of a running command stays open after half-close")
    # garbage on many concurrent connections
    socks = []
    for i in range(50):
        s = socket.socket(socket.AF_UNIX)
        s.connect(SOCK)
        s.sendall(os.urandom(64) if i % 2 else b"\x00\x00\x00")
        socks.append(s)
    alive()
    for s in socks:
        s.close()
    s = Conn(SOCK)
    s.req({"op": "stdin", "id": cid})
    s.send(STDIN, b"yes\n")
    s.send(EOF)
    check(s.json() == {"ok": True})
    s.close()
    check(wait(cid)["exit_code"] == 0)
    _, res = attach(cid)
    check(res[0] == b"survived:yes\n", repr(res[0]))
    alive()


def t_socket_fuzz():
    """Mutated requests and frame sequences on real connections; the agent
    must survive all of them (ASan build aborts on any memory error)."""
    import random
    rnd = random.Random(int(os.environ.get("AGENT_FUZZ_SEED", "1234")))
    n = int(os.environ.get("AGENT_FUZZ_CONNS", "300"))
    cid = exec_bg(cmd="sh", args=["-c", "cat; echo done"], stdin=True)
    reqs = [
        {"op": "ping"}, {"op": "attach", "id": cid}, {"op": "attach", "id": cid, "stdin": True},
        {"op": "stdin", "id": cid}, {"op": "status", "id": cid}, {"op": "commands"},
        {"op": "exec", "cmd": "true", "attach": True},
        {"op": "exec", "cmd": "cat", "stdin": True, "attach": True},
        {"op": "exec", "cmd": "sh", "pty": True, "attach": True, "args": ["-c", "exit 0"]},
        {"op": "write_file", "path": os.path.join(WORK, "fz", "f")},
        {"op": "read_file", "path": "/etc/passwd"}, {"op": "list", "path": "/"},
        {"op": "stat", "path": "/"}, {"op": "mkdir", "path": os.path.join(WORK, "fz"), "parents": True},
        {"op": "forward", "port": 1}, {"op": "resize", "id": cid, "cols": 5, "rows": 5},
        {"op": "wait", "id": "nope"},
    ]
    for i in range(n):
        req = rnd.choice(reqs)
        data = bytearray(jf(req))
        for _ in range(rnd.randint(0, 4)):
            t = rnd.choice([STDIN, DATA, EOF, JSON, 7])
            pl = os.urandom(rnd.randint(0, 300)) if t != EOF else b""
            data += struct.pack(">IB", len(pl), t) + pl
        m = rnd.random()
        if m < 0.2:
            data = data[:rnd.randint(0, len(data))]
        elif m < 0.4 and req["op"] not in ("write_file", "mkdir"):
            # (no flips in paths we create: they could land outside WORK)
            for _ in range(rnd.randint(1, 5)):
                data[rnd.randrange(len(data))] = rnd.randrange(256)
        elif m < 0.5:
            data = bytearray(b"CONNECT 1024\n") + data
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(0.2)
        s.connect(SOCK)
        try:
            s.sendall(bytes(data))
            if rnd.random() < 0.5:
                s.shutdown(socket.SHUT_WR)
            if rnd.random() < 0.7:
                s.recv(65536)
        except OSError:
            pass
        s.close()
    alive()
    # (cid may be finished and even dropped from the list by now)
    call(SOCK, {"op": "stdin_eof", "id": cid})


def t_pid1():
    try:
        subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "true"], check=True,
                       timeout=10, capture_output=True)
    except Exception:
        raise Skip("unshare --pid unavailable")
    global SOCK
    sock = os.path.join(WORK, "pid1.sock")
    p = start_agent(sock, prefix=["unshare", "--pid", "--fork", "--kill-child", "--mount-proc"])
    saved, SOCK = SOCK, sock
    try:
        r, out, err, ex = run(sock, "cat", ["/proc/1/comm"])
        check(out.strip() == b"sandbox-agent", repr(out))
        # orphans: backgrounded grandchildren outlive their parent
        r, out, err, ex = run(sock, "sh", ["-c", "for i in 1 2 3 4 5; do (sleep 0.2 &) ; done; exit 0"])
        check(ex["exit_code"] == 0)
        zombies = None
        for _ in range(100):
            time.sleep(0.05)
            r, out, err, ex = run(sock, "sh", ["-c",
                                               "cat /proc/[0-9]*/stat 2>/dev/null | awk '{print $2, $3}'"])
            zombies = out.count(b" Z")
            if b"(sleep)" not in out:
                break
        check(b"(sleep)" not in out, "orphans still there: %r" % out)
        check(zombies == 0, "zombies left: %r" % out)
        # SIGTERM: commands terminated (SIGKILL for one that ignores
        # SIGTERM), agent exits 0
        cid = exec_bg(cmd="sleep", args=["100"])
        c = Conn(sock)
        c.req({"op": "exec", "cmd": "sh", "attach": True,
               "args": ["-c", "trap '' TERM; echo ready; while :; do sleep 0.1; done"]})
        check(c.json()["ok"] and c.frame() == (STDOUT, b"ready\n"))
        c.close()
        kids = open("/proc/%d/task/%d/children" % (p.pid, p.pid)).read().split()
        check(len(kids) == 1)
        t0 = time.monotonic()
        os.kill(int(kids[0]), signal.SIGTERM)
        rc = p.wait(timeout=15)
        check(rc == 0, "agent exit status %r" % rc)
        check(time.monotonic() - t0 >= 2.5, "SIGTERM grace not honoured: %.2fs" % (time.monotonic() - t0))
        del cid
    finally:
        SOCK = saved
        if p.poll() is None:
            p.kill()
            p.wait()


def ctx_switches(pid):
    n = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                n += int(line.split()[1])
    return n


def t_no_tick_when_idle():
    """An idle agent sleeps until something happens: its deadlines' tick
    runs only while a deadline is set (a 100 ms tick in every idle sandbox
    cost the host CPU by the number of sandboxes). A deadline set while it
    sleeps still fires: a silent client is closed, a timeout_ms kills."""
    sock = os.path.join(WORK, "tick.sock")
    p = start_agent(sock)
    try:
        # the readiness pings' connections are gone once their close is
        # seen; a tick still running ends at its next turn
        end = time.monotonic() + 30
        while True:
            time.sleep(0.5)
            a = ctx_switches(p.pid)
            time.sleep(1.5)
            b = ctx_switches(p.pid)
            if b == a or time.monotonic() > end:
                break
        check(b == a, "the idle agent woke %d times in 1.5 s" % (b - a))
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(30)
        s.connect(sock)
        s.sendall(b"CONN")   # then nothing: the handshake's deadline
        t0 = time.monotonic()
        check(s.recv(100) == b"", "a silent client was not closed")
        s.close()
        check(time.monotonic() - t0 >= 1, "closed before its deadline")
        r = run(sock, "sleep", ["30"], timeout_ms=300)[3]
        check(r["signal"] == "SIGKILL", "timeout_ms while idle: %r" % r)
    finally:
        p.kill()
        p.wait()


TESTS = [t_ping_and_handshake, t_two_chunks_in_time, t_replay_and_offset,
         t_retention_truncated_attach, t_exit_codes_signals, t_timeout,
         t_126_127, t_env_cwd_uid, t_stdin, t_readers_independent, t_finished_eviction,
         t_status_commands, t_files, t_forward, t_pty, t_attach_no_follow, t_pty_paced, t_pty_hangup_on_detach, t_idle, t_no_tick_when_idle,
         t_quiesce_not_vsock, t_ready_fd,
         t_bad_input, t_socket_fuzz, t_flood, t_pid1]


def main():
    global agent_proc
    only = os.environ.get("AGENT_TESTS")
    agent_proc = start_agent(SOCK)
    try:
        for t in TESTS:
            if only and t.__name__ not in only.split(","):
                continue
            t0 = time.monotonic()
            try:
                t()
                if agent_proc.poll() is not None:
                    raise AssertionError("agent died during the test")
                results["passed"] += 1
                print("  ok   %s (%.2fs)" % (t.__name__[2:], time.monotonic() - t0), flush=True)
            except Skip as e:
                results["skipped"] += 1
                print("  skip %s: %s" % (t.__name__[2:], e), flush=True)
            except Exception as e:
                results["failed"] += 1
                print("  FAIL %s: %s" % (t.__name__[2:], e), flush=True)
                traceback.print_exc(limit=3)
    finally:
        agent_proc.send_signal(signal.SIGTERM)
        try:
            rc = agent_proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            agent_proc.kill()
            rc = "killed"
        if rc != 0:
            results["failed"] += 1
            print("  FAIL agent exit status on SIGTERM: %r" % rc)
    print("%d passed, %d failed, %d skipped" % (results["passed"], results["failed"],
                                                results["skipped"]))
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
