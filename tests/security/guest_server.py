"""Runs INSIDE a sandbox: an HTTP server for the flood probes on port
argv[1] that answers every request at once with a small 200 and keeps
each connection open (keep-alive), so thousands of connections cost it
one thread. Standard library only."""
import resource
import selectors
import socket
import sys

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
port = int(sys.argv[1])
ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", port))
ls.listen(4096)
ls.setblocking(False)
sel = selectors.DefaultSelector()
sel.register(ls, selectors.EVENT_READ)
ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Type: text/plain\r\n\r\nok\n"
print("listening", flush=True)
while True:
    for key, _ in sel.select():
        s = key.fileobj
        if s is ls:
            for _ in range(256):
                try:
                    c, _ = ls.accept()
                except (BlockingIOError, OSError):
                    break
                c.setblocking(False)
                sel.register(c, selectors.EVENT_READ)
            continue
        try:
            d = s.recv(65536)
        except BlockingIOError:
            continue
        except OSError:
            d = b""
        if not d:
            sel.unregister(s)
            s.close()
            continue
        if b"\r\n\r\n" in d:
            try:
                s.send(ANSWER)
            except OSError:
                pass
