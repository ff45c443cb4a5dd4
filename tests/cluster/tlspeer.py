#!/usr/bin/env python3
"""The cluster suite's TLS peers of a runner's control protocol
(docs/runner.md: one request frame, one reply frame, each a 4-byte
big-endian length, a type byte 3 and JSON).

  tlspeer.py probe HOST PORT SERVER_NAME CA [CERT KEY] [REQUEST_JSON]
      a client: TLS 1.3, the runner's certificate verified against CA and
      SERVER_NAME, our certificate CERT/KEY if given (else none). Sends
      REQUEST_JSON (default {"op":"status"}) and prints one line:
        reply <the reply's JSON>
        refused <why>       (handshake failed, or the connection ended with
                             no reply: what a runner does to a peer it refuses)
  tlspeer.py unix SOCKET REQUEST_JSON
      the same request on a runner's local control socket: "reply ..." as
      above (the suite asks a runner itself what it holds)
  tlspeer.py plain HOST PORT
      the same request frame in clear text on the TLS port: prints
      "refused <why>" unless the runner answered it (it must not).
  tlspeer.py fake PORT_FILE CERT KEY CLAIMED_NAME OPS_LOG
      a runner impostor on 127.0.0.1 (port chosen by the kernel, written to
      PORT_FILE): it presents CERT (a certificate of the cluster CA naming
      some runner) but answers `status` and `ping` as runner CLAIMED_NAME,
      `list` with nothing, anything else with an error. Each request's op is
      appended to OPS_LOG, so the suite can tell a gateway never sent it a
      create or a connect.
"""
import json
import os
import socket
import ssl
import struct
import sys
import threading


def frame(obj):
    body = json.dumps(obj).encode()
    return struct.pack("!IB", len(body), 3) + body


def read_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("connection closed after %d of %d bytes" % (len(data), n))
        data += chunk
    return data


def read_frame(sock):
    length, ftype = struct.unpack("!IB", read_exact(sock, 5))
    if ftype != 3 or length > 1 << 20:
        raise ValueError("unexpected frame type %d length %d" % (ftype, length))
    return json.loads(read_exact(sock, length))


def probe(host, port, name, ca, cert=None, key=None, request=None):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_verify_locations(ca)
    if cert:
        ctx.load_cert_chain(cert, key)
    req = json.loads(request) if request else {"op": "status"}
    try:
        raw = socket.create_connection((host, int(port)), timeout=10)
    except OSError as e:
        return "refused connect: %s" % e
    try:
        with ctx.wrap_socket(raw, server_hostname=name) as s:
            s.sendall(frame(req))
            return "reply " + json.dumps(read_frame(s), separators=(",", ":"))
    except (ssl.SSLError, ConnectionError, OSError, ValueError) as e:
        return "refused %s" % (getattr(e, "reason", None) or e)


def unix(path, request):
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(30)
            s.connect(path)
            s.sendall(frame(json.loads(request)))
            return "reply " + json.dumps(read_frame(s), separators=(",", ":"))
    except (ConnectionError, OSError, ValueError) as e:
        return "refused %s" % e


def plain(host, port):
    try:
        with socket.create_connection((host, int(port)), timeout=10) as s:
            s.sendall(frame({"op": "status"}))
            data = s.recv(65536)
    except OSError as e:
        return "refused %s" % e
    if data[:5] and len(data) >= 5 and data[4:5] == b"\x03":
        return "answered %r" % data[:80]
    return "refused %d bytes of something else back" % len(data)


def fake(port_file, cert, key, claimed, ops_log):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_cert_chain(cert, key)
    ctx.verify_mode = ssl.CERT_NONE  # the impostor takes any gateway
    lsock = socket.socket()
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(64)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(lsock.getsockname()[1]))
    os.rename(port_file + ".tmp", port_file)
    log = open(ops_log, "a", buffering=1)
    instance = os.urandom(16).hex()
    lock = threading.Lock()

    def serve(conn):
        try:
            with ctx.wrap_socket(conn, server_side=True) as s:
                s.settimeout(10)
                req = read_frame(s)
                op = req.get("op")
                with lock:
                    log.write("%s\n" % op)
                runner = {"name": claimed, "instance": instance, "draining": False,
                          "sandboxes": 0, "memory_mb_cap": 65536, "memory_mb_used": 0,
                          "memory_mb_free": 65536, "slots_free": 128, "load1": 0.0, "cpus": 64,
                          "isolation": [{"name": "jail", "available": True}],
                          "default_isolation": "jail", "driver": "jail"}
                if op in ("status", "ping"):
                    reply = {"ok": True, "runner": runner}
                elif op == "list":
                    reply = {"ok": True, "sandboxes": []}
                elif op == "capabilities":
                    reply = {"ok": True, "capabilities": {"isolation": runner["isolation"], "default": "jail"}}
                else:
                    reply = {"ok": False, "error": {"code": "internal", "message": "impostor"}}
                s.sendall(frame(reply))
        except (ssl.SSLError, ConnectionError, OSError, ValueError):
            pass

    while True:
        conn, _ = lsock.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "probe":
        host, port, name, ca = args[:4]
        rest = args[4:]
        cert = key = request = None
        if len(rest) >= 2:
            cert, key = rest[:2]
            rest = rest[2:]
        if rest:
            request = rest[0]
        print(probe(host, port, name, ca, cert, key, request))
    elif mode == "unix":
        print(unix(*args[:2]))
    elif mode == "plain":
        print(plain(*args[:2]))
    elif mode == "fake":
        fake(*args[:5])
    else:
        sys.exit("usage: see the head of %s" % sys.argv[0])


if __name__ == "__main__":
    main()
