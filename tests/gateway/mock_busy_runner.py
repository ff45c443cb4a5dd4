#!/usr/bin/env python3
"""A stand-in runner (a mock: a real runner busy enough to answer its
status late, yet answering other requests, cannot be made on demand) for
the gateway's status probe. On a UNIX socket, the runner protocol of
docs/runner.md (one request frame, one reply frame: a 4-byte big-endian
length, type byte 3, JSON):

  mock_busy_runner.py SOCKET NAME OPS_LOG

`status` is answered the first time only; every later `status` is read
and never answered (its connection stays open until the gateway gives
up). `list` answers no sandboxes at once; `capabilities` and `ping` are
answered. Each request's op is appended to OPS_LOG ("status held" for an
unanswered status), so the suite can tell the probe went unanswered while
other requests were served. Prints "listening" once it accepts."""
import json
import os
import socket
import struct
import sys
import threading


def frame(obj):
    body = json.dumps(obj).encode()
    return struct.pack("!IB", len(body), 3) + body


def read_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def main():
    path, name, ops_log = sys.argv[1:4]
    iso = [{"name": "jail", "available": True}]
    runner = {"name": name, "instance": os.urandom(16).hex(), "draining": False,
              "sandboxes": 0, "memory_mb_cap": 4096, "memory_mb_used": 0,
              "memory_mb_free": 4096, "slots_free": 16, "load1": 0.0, "cpus": 2,
              "isolation": iso, "default_isolation": "jail"}
    lock = threading.Lock()
    state = {"statuses": 0}
    log = open(ops_log, "a", buffering=1)
    held = []

    def serve(conn):
        try:
            n, t = struct.unpack("!IB", read_exact(conn, 5))
            op = json.loads(read_exact(conn, n)).get("op")
            with lock:
                if op == "status":
                    state["statuses"] += 1
                    hold = state["statuses"] > 1
                else:
                    hold = False
                log.write("%s%s\n" % (op, " held" if hold else ""))
            if hold:
                held.append(conn)   # never answered, never closed by us
                return
            if op in ("status", "ping"):
                reply = {"ok": True, "runner": runner}
            elif op == "list":
                reply = {"ok": True, "sandboxes": []}
            elif op == "capabilities":
                reply = {"ok": True, "capabilities": {"isolation": iso, "default": "jail"}}
            else:
                reply = {"ok": False, "error": {"code": "bad_request", "message": "mock"}}
            conn.sendall(frame(reply))
            conn.close()
        except (OSError, ValueError, ConnectionError):
            conn.close()

    ls = socket.socket(socket.AF_UNIX)
    ls.bind(path)
    ls.listen(128)
    print("listening", flush=True)
    while True:
        conn, _ = ls.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
