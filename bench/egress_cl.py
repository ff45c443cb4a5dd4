"""Runs INSIDE a sandbox for bench/egress.sh (uploaded to /tmp/ecl.py).
  lat SCHEME HOST N   N new connections one after another, each a GET of
                      /small; prints the milliseconds of each (connect, TLS,
                      request, answer) as a JSON list
  tput SCHEME HOST    one GET of /big; prints MB/s (10^6 bytes)
HTTPS verifies with /tmp/ca.pem (the bench's server CA) and the sandbox's
own trust store (where the runner's egress CA is)."""
import json
import socket
import ssl
import sys
import time

ctx = ssl.create_default_context()
ctx.load_verify_locations("/tmp/ca.pem")


def connect(scheme, host):
    s = socket.create_connection((host, 443 if scheme == "https" else 80), timeout=60)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return ctx.wrap_socket(s, server_hostname=host) if scheme == "https" else s


def get(s, host, path):
    s.sendall(b"GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (path.encode(), host.encode()))
    n = 0
    buf = bytearray(1 << 20)
    while True:
        k = s.recv_into(buf)
        if not k:
            return n
        n += k


def lat(scheme, host, n):
    out = []
    for _ in range(int(n)):
        t = time.perf_counter()
        s = connect(scheme, host)
        get(s, host, "/small")
        s.close()
        out.append(round((time.perf_counter() - t) * 1000, 3))
    return out


def tput(scheme, host):
    s = connect(scheme, host)
    t = time.perf_counter()
    n = get(s, host, "/big")
    return round(n / (time.perf_counter() - t) / 1e6, 2)


if __name__ == "__main__":
    print(json.dumps(globals()[sys.argv[1]](*sys.argv[2:]), separators=(",", ":")))
