"""Many concurrent connections from one process without a thread per
socket (epoll), for the flood probes (probes_flood.py), and a /healthz
sampler that runs beside a flood. Only the standard library.

flood() opens n non-blocking connections to the gateway, sends one request
with the given Host on each as soon as it is connected, and keeps every
connection open (keep-alive) until the end, so they are all concurrent.
It reports what each connection got: a status line, a close without an
answer, a refused or failed connect, or nothing before the deadline."""
import errno
import resource
import select
import socket
import threading
import time


def raise_nofile(want):
    """Raise this process's soft RLIMIT_NOFILE toward want (up to the hard
    limit); returns the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    new = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if new > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def flood(port, host, n, seconds=20.0, settle=1.0, batch=500, path="/"):
    """Returns a dict of counts: statuses {code: count}, connected,
    connect_failed, closed_no_answer, pending (no answer by the deadline),
    opened (sockets made; fewer than n if this process ran out of fds)."""
    raise_nofile(n + 256)
    req = ("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (path, host)).encode()
    ep = select.epoll()
    socks = {}                # fd -> [sock, state, buf]; state 0 connecting, 1 sent, 2 answered
    st = dict(statuses={}, connected=0, connect_failed=0, closed_no_answer=0, pending=0,
              opened=0, closed_after_answer=0)
    deadline = time.time() + seconds
    made = 0
    last_event = time.time()

    def finish(fd):
        s = socks.pop(fd)[0]
        try:
            ep.unregister(fd)
        except OSError:
            pass
        s.close()

    while time.time() < deadline:
        # connect in batches, so the listen backlog is not the test: at most
        # `batch` connections not answered yet, connected or not (a connected
        # one may still wait in the gateway's accept queue of 1024; counting
        # only those still connecting let a slowed gateway's queue overflow,
        # and the kernel then dropped SYNs, /healthz's too: 1 s, 3 s, 7 s
        # retransmits)
        while made < n and sum(1 for v in socks.values() if v[1] < 2) < batch:
            try:
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            except OSError as e:
                if e.errno in (errno.EMFILE, errno.ENFILE):
                    n = made
                    break
                raise
            s.setblocking(False)
            rc = s.connect_ex(("127.0.0.1", port))
            made += 1
            st["opened"] += 1
            if rc not in (0, errno.EINPROGRESS):
                st["connect_failed"] += 1
                s.close()
                continue
            socks[s.fileno()] = [s, 0, b""]
            ep.register(s.fileno(), select.EPOLLOUT | select.EPOLLIN)
        waiting = [v for v in socks.values() if v[1] < 2]
        if made >= n and not waiting and time.time() - last_event > settle:
            break
        for fd, ev in ep.poll(0.05):
            last_event = time.time()
            ent = socks.get(fd)
            if not ent:
                continue
            s = ent[0]
            if ent[1] == 0:
                err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err:
                    st["connect_failed"] += 1
                    finish(fd)
                    continue
                if not ev & select.EPOLLOUT:
                    continue
                st["connected"] += 1
                try:
                    s.send(req)
                except OSError:
                    st["closed_no_answer"] += 1
                    finish(fd)
                    continue
                ent[1] = 1
                ep.modify(fd, select.EPOLLIN)
                continue
            try:
                d = s.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                d = b""
            if not d:
                st["closed_no_answer" if ent[1] == 1 else "closed_after_answer"] += 1
                finish(fd)
                continue
            if ent[1] == 1:
                ent[2] += d
                if b"\r\n" in ent[2]:
                    line = ent[2].split(b"\r\n", 1)[0].split()
                    code = int(line[1]) if len(line) > 1 and line[1].isdigit() else 0
                    st["statuses"][code] = st["statuses"].get(code, 0) + 1
                    ent[1] = 2
                    st.setdefault("bodies", {}).setdefault(code, ent[2][:600])
    st["pending"] = sum(1 for v in socks.values() if v[1] < 2)
    st["held_open"] = sum(1 for v in socks.values() if v[1] == 2)
    for fd in list(socks):
        finish(fd)
    ep.close()
    return st


class HealthSampler(threading.Thread):
    """GET /healthz on a fresh connection every `every` seconds, each with
    a timeout; records the latency of each answer and counts the misses."""

    def __init__(self, port, every=0.1, timeout=5.0):
        super().__init__(daemon=True)
        self.port, self.every, self.timeout = port, every, timeout
        self.lat, self.misses, self.errors = [], 0, []
        self.stop = threading.Event()

    def one(self):
        t = time.time()
        s = socket.create_connection(("127.0.0.1", self.port), timeout=self.timeout)
        try:
            s.settimeout(max(0.1, self.timeout - (time.time() - t)))
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            d = s.recv(4096)
        finally:
            s.close()
        if not d.startswith(b"HTTP/1.1 200"):
            raise RuntimeError("answer %r" % d[:80])
        return time.time() - t

    def run(self):
        while not self.stop.is_set():
            try:
                self.lat.append(self.one())
            except Exception as e:  # noqa: any failure is a miss
                self.misses += 1
                if len(self.errors) < 5:
                    self.errors.append(repr(e))
            self.stop.wait(self.every)

    def p99(self):
        if not self.lat:
            return None
        v = sorted(self.lat)
        return v[min(len(v) - 1, int(len(v) * 0.99))]

    def worst(self):
        return max(self.lat) if self.lat else None


class Held:
    """n connections to the gateway, all held open until close(): when
    connection i is connected it sends kinds[i % len(kinds)], a whole
    request or the start of one it never finishes. At most `batch`
    connects are in progress at a time (the listen backlog is not the
    test). open() returns once every connection is made and every whole
    request has its answer (or the deadline passed); stats() says, by
    kind, what each connection got so far: a status line, a close without
    one, or nothing yet."""

    def __init__(self, port, kinds, n):
        raise_nofile(n + 256)
        self.port, self.kinds, self.n = port, kinds, n
        self.ep = select.epoll()
        # fd -> [sock, kind, state, bytes received]; state 0 connecting, 1 sent,
        # 2 answered, 3 closed without an answer, 4 connect failed
        self.conns = {}
        self.all = []
        self.connect_failed = 0

    def _sent_whole(self, kind):
        return self.kinds[kind].endswith(b"\r\n\r\n")

    def _drop(self, fd):
        try:
            self.ep.unregister(fd)
        except OSError:
            pass

    def _read(self, fd, ent):
        try:
            d = ent[0].recv(65536)
        except BlockingIOError:
            return
        except OSError:
            d = b""
        if not d:
            if ent[2] < 2:
                ent[2] = 3
            self._drop(fd)
            return
        ent[3] += d
        if ent[2] < 2 and b"\r\n" in ent[3]:
            ent[2] = 2

    def _in_flight(self):
        return sum(1 for e in self.conns.values()
                   if e[2] == 0 or (e[2] == 1 and self._sent_whole(e[1])))

    def open(self, seconds=60, batch=500, settle=1.0, inflight=None):
        """batch: connects in progress at a time; inflight (if given): at
        most this many connections connecting or waiting for the answer
        to a whole request (so a gateway fills up one request at a time)."""
        made, last = 0, time.time()
        deadline = time.time() + seconds
        while time.time() < deadline:
            while made < self.n and sum(1 for e in self.conns.values() if e[2] == 0) < batch \
                    and (inflight is None or self._in_flight() < inflight):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.setblocking(False)
                rc = s.connect_ex(("127.0.0.1", self.port))
                kind = made % len(self.kinds)
                made += 1
                if rc not in (0, errno.EINPROGRESS):
                    self.connect_failed += 1
                    s.close()
                    continue
                ent = [s, kind, 0, b""]
                self.conns[s.fileno()] = ent
                self.all.append(ent)
                self.ep.register(s.fileno(), select.EPOLLOUT | select.EPOLLIN)
            waiting = [e for e in self.conns.values()
                       if e[2] == 0 or (e[2] == 1 and self._sent_whole(e[1]))]
            if made >= self.n and not waiting and time.time() - last > settle:
                break
            for fd, ev in self.ep.poll(0.05):
                last = time.time()
                ent = self.conns.get(fd)
                if not ent:
                    continue
                if ent[2] == 0:
                    if ent[0].getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                        self.connect_failed += 1
                        ent[2] = 4
                        self._drop(fd)
                        continue
                    if not ev & select.EPOLLOUT:
                        continue
                    ent[2] = 1
                    try:
                        ent[0].send(self.kinds[ent[1]])
                    except OSError:
                        pass   # refused at once: its answer (or close) is read below
                    self.ep.modify(fd, select.EPOLLIN)
                    continue
                self._read(fd, ent)

    def stats(self):
        """Per kind: {"connected", "statuses": {code: n}, "closed", "silent"}
        ("silent": connected, no answer and still open)."""
        for fd, ent in list(self.conns.items()):
            if ent[2] in (1, 2):
                self._read(fd, ent)
        out = []
        for k in range(len(self.kinds)):
            st = dict(connected=0, statuses={}, closed=0, silent=0)
            for e in self.all:
                if e[1] != k or e[2] in (0, 4):
                    continue
                st["connected"] += 1
                if e[3]:
                    line = e[3].split(b"\r\n", 1)[0].split()
                    code = int(line[1]) if len(line) > 1 and line[1].isdigit() else 0
                    st["statuses"][code] = st["statuses"].get(code, 0) + 1
                elif e[2] == 3:
                    st["closed"] += 1
                else:
                    st["silent"] += 1
            out.append(st)
        return out

    def close(self):
        for e in self.all:
            e[0].close()
        self.ep.close()
        self.conns.clear()


def get(port, path, key=None, timeout=10.0):
    """One GET on a fresh connection: (status, seconds, what came: the
    first bytes, or the error's repr with status 0 when nothing came
    within timeout)."""
    t = time.time()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        try:
            s.settimeout(max(0.1, timeout - (time.time() - t)))
            auth = "Authorization: Bearer %s\r\n" % key if key else ""
            s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sConnection: close\r\n\r\n" %
                       (path, auth)).encode())
            d = s.recv(4096)
        finally:
            s.close()
    except OSError as e:
        return 0, time.time() - t, repr(e)
    line = d.split(b"\r\n", 1)[0].split()
    code = int(line[1]) if len(line) > 1 and line[1].isdigit() else 0
    return code, time.time() - t, d[:80]
