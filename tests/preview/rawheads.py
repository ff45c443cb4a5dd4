#!/usr/bin/env python3
"""A guest server for tests/preview/run.sh, run inside a sandbox: it answers
every request, an Upgrade request included, with `200 ok` on the same
connection and appends each request head it receives, exactly as it came,
to LOG (one line each, JSON-quoted; `Connection: close` closes), so the
suite can see whether a request reached the guest parsed by the proxy or
spliced raw.

usage: rawheads.py PORT LOG"""
import json, socket, sys, threading

def serve(c, log):
    buf = b''
    try:
        while True:
            d = c.recv(65536)
            if not d:
                break
            buf += d
            while b'\r\n\r\n' in buf:
                head, buf = buf.split(b'\r\n\r\n', 1)
                with open(log, 'a') as f:
                    f.write(json.dumps(head.decode('latin-1')) + '\n')
                for line in head.split(b'\r\n')[1:]:   # skip a plain body
                    k, _, v = line.partition(b':')
                    if k.strip().lower() == b'content-length' and v.strip().isdigit():
                        buf = buf[int(v):]
                c.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nok\r\n')
                if b'\r\nconnection: close' in head.lower():
                    c.close()
                    return
    except OSError:
        pass
    c.close()

def main():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('127.0.0.1', int(sys.argv[1])))
    s.listen(16)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c, sys.argv[2]), daemon=True).start()

if __name__ == '__main__':
    main()
