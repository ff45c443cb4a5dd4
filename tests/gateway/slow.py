"""Slow and idle clients against a real gateway: 1000 idle connections and
300 slowloris clients (a header line every second) must not stall other
clients, and must be closed by the gateway's timeouts.
usage: slow.py PORT GATEWAY_PID   prints PASS/FAIL lines."""
import socket
import sys
import time

PORT, PID = int(sys.argv[1]), int(sys.argv[2])


def result(name, ok, detail=""):
    print("%s: %s %s" % ("PASS" if ok else "FAIL", name, "" if ok else detail), flush=True)


def healthz_ms():
    t = time.monotonic()
    s = socket.create_connection(("127.0.0.1", PORT), timeout=5)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    data = b""
    while True:
        d = s.recv(4096)
        if not d:
            break
        data += d
    s.close()
    return (time.monotonic() - t) * 1000, data.startswith(b"HTTP/1.1 200")


def rss_kb():
    with open("/proc/%d/status" % PID) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    rss0 = rss_kb()
    idle, slow = [], []
    for _ in range(1000):
        idle.append(socket.create_connection(("127.0.0.1", PORT), timeout=5))
    for _ in range(300):
        s = socket.create_connection(("127.0.0.1", PORT), timeout=5)
        s.sendall(b"GET /v1/sandboxes HTTP/1.1\r\n")
        slow.append(s)
    worst, ok = 0, True
    t_end = time.monotonic() + 4
    while time.monotonic() < t_end:
        for s in slow:
            try:
                s.sendall(b"X-a: b\r\n")
            except OSError:
                pass
        ms, good = healthz_ms()
        worst, ok = max(worst, ms), ok and good
        time.sleep(0.5)
    rss1 = rss_kb()
    result("1000 idle + 300 slowloris connections: other clients answered (worst %.0f ms)" % worst,
           ok and worst < 1000, "worst %.0f ms" % worst)
    result("... gateway RSS grew %d KiB for 1300 connections (bound 32768)" % (rss1 - rss0),
           rss1 - rss0 < 32768)
    # lws closes connections that send no complete header in time; a
    # slowloris client trickling header lines is cut by the same timer
    time.sleep(12)
    closed = 0
    for s in idle + slow:
        s.setblocking(False)
        try:
            d = s.recv(1)
            closed += d == b""
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
        s.close()
    result("idle and slowloris connections are closed by the gateway (%d of 1300)" % closed,
           closed >= 1290, "%d closed" % closed)
    ms, good = healthz_ms()
    result("gateway answers after the attack", good)


main()
