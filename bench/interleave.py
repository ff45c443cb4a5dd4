"""Added latency of the preview proxy over the server itself, measured so
that both see the same machine: one connection straight to the server (in
the sandbox's network namespace) and one through the gateway, used in
turn, one request each, N times. A burst of other work on this shared
machine then lands on both alike, which rounds of a few seconds each
(wrk) could not promise. Prints p50 and p99 of each, the added p99 over
the whole run and its spread over BLOCKS consecutive blocks.

Usage: interleave.py SANDBOX_PID GATEWAY_PORT HOST [N]"""
import ctypes
import os
import socket
import statistics
import sys
import time

CLONE_NEWNET = 0x40000000
pid, port, host = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
N = int(sys.argv[4]) if len(sys.argv) > 4 else 3000
BLOCKS = 5
libc = ctypes.CDLL(None, use_errno=True)


def setns(fd):
    if libc.setns(fd, CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "setns")


def connect(p):
    s = socket.create_connection(("127.0.0.1", p), timeout=30)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def get(s, req):
    """One request on a kept-alive connection; its latency in ms."""
    t = time.perf_counter()
    s.sendall(req)
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(65536)
        if not d:
            raise EOFError("closed")
        buf += d
    head, _, body = buf.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(head[:80])
    n = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            n = int(line.split(b":")[1])
    while len(body) < n:
        d = s.recv(65536)
        if not d:
            raise EOFError("closed mid-body")
        body += d
    return (time.perf_counter() - t) * 1e3


def p(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * q))]


home = os.open("/proc/self/ns/net", os.O_RDONLY)   # ours, to come back to
sbx = os.open("/proc/%d/ns/net" % pid, os.O_RDONLY)
setns(sbx)
direct = connect(3000)
setns(home)
gw = connect(port)
req = ("GET / HTTP/1.1\r\nHost: %s\r\n\r\n" % host).encode()
lat = {"direct": [], "gateway": []}
for i in range(N):
    order = (("direct", direct), ("gateway", gw)) if i % 2 == 0 else (("gateway", gw), ("direct", direct))
    for k, s in order:
        lat[k].append(get(s, req))
d, g = lat["direct"], lat["gateway"]
k = N // BLOCKS
blocks = sorted(p(g[i * k:(i + 1) * k], 0.99) - p(d[i * k:(i + 1) * k], 0.99) for i in range(BLOCKS))
added = p(g, 0.99) - p(d, 0.99)
print("interleaved, %d requests each on one connection: direct p50 %.3f ms p99 %.3f ms; "
      "gateway p50 %.3f ms p99 %.3f ms; added p50 %+.3f ms, added p99 %+.3f ms "
      "(over %d blocks: median %+.3f, spread %+.3f .. %+.3f)" % (
          N, p(d, 0.5), p(d, 0.99), p(g, 0.5), p(g, 0.99), p(g, 0.5) - p(d, 0.5), added,
          BLOCKS, statistics.median(blocks), blocks[0], blocks[-1]))
print("figure: preview proxy added p50 over direct (1 conn, interleaved)|%.3f|ms|-" % (p(g, 0.5) - p(d, 0.5)))
print("figure: preview proxy added p99 over direct (1 conn, interleaved)|%.3f|ms|< 0.5" % added)
