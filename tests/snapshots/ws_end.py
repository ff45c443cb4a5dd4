"""A WebSocket stream or terminal held open until the gateway ends it
(tests/snapshots): ws_end.py PORT PATH KEY READY_FILE. Touches READY_FILE
once the first binary message came (the stream is live), then prints the
last text message's error code (or "-") and the close code, e.g.
"paused 4409". A plain client of RFC 6455, enough for reading."""
import base64
import json
import os
import socket
import struct
import sys


def read_exact(s, n):
    b = b""
    while len(b) < n:
        d = s.recv(n - len(b))
        if not d:
            raise EOFError
        b += d
    return b


def frame(s):
    h = read_exact(s, 2)
    op, n = h[0] & 0x0F, h[1] & 0x7F
    if n == 126:
        n = struct.unpack("!H", read_exact(s, 2))[0]
    elif n == 127:
        n = struct.unpack("!Q", read_exact(s, 8))[0]
    return op, read_exact(s, n)


def main():
    port, path, key, ready = sys.argv[1:5]
    s = socket.create_connection(("127.0.0.1", int(port)), timeout=120)
    nonce = base64.b64encode(os.urandom(16)).decode()
    s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
               "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"
               "Authorization: Bearer %s\r\n\r\n" % (path, nonce, key)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += read_exact(s, 1)
    if b" 101 " not in head.split(b"\r\n")[0]:
        print("refused", head.split(b"\r\n")[0].decode())
        return
    last, live = "-", False
    try:
        while True:
            op, p = frame(s)
            if op == 2 and not live:
                live = True
                open(ready, "w").close()
            elif op == 1:
                o = json.loads(p)
                last = o.get("error", {}).get("code", o.get("type", "?"))
            elif op == 8:
                print(last, struct.unpack("!H", p[:2])[0] if len(p) >= 2 else "none")
                return
    except (EOFError, OSError):
        print(last, "eof")


main()
