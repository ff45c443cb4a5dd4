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
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "runner"))
import rnclient  # noqa: E402  (the runner protocol's framing)


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
            op = json.loads(rnclient.recv_frame(conn)[1]).get("op")
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
            rnclient.send_frame(conn, reply)
            conn.close()
        except (OSError, ValueError, EOFError):
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
