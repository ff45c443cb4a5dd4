"""The egress suite's fake internet, run by the host's python3 in the
network namespace run.sh makes (never the real one). On 198.51.100.1 a DNS
server answers A queries from NAMES (NXDOMAIN else) and logs every query
it receives ("dns <type> <name>"), so the suite can prove a query never
reached it. On every address: HTTP on 80 and HTTPS on 443 (a certificate
of the suite's test CA for every name in NAMES), answering
"server=<local address> host=<Host> sni=<SNI>" and logging the same line,
and UDP on 443 (QUIC's port) logging "udp <port>". A request whose path
starts with /echo is answered on a kept-alive connection with what the
server saw, as JSON (its Authorization only as a SHA-256, so an injected
secret never travels back to the sandbox), and logged as "echo <json>"
with the Authorization in full. A request for /ws with Upgrade: websocket
gets a 101 and, in the same write, a text frame "hello auth=<SHA-256 of
its Authorization>"; then every frame comes back as it came (a close
frame: a close back, then the end), logged as "ws <Authorization>". On
198.51.100.4 the HTTPS certificate is a self-signed one (SELFCERT,
SELFKEY). /pipe answers a 200 head, then sends back every byte it gets
until the client's half-close, then "sha=<SHA-256 of them> n=<count>",
and closes. A POST to /big?n=N reads its body and answers N bytes
(0..255 over and over) with "X-Got: <SHA-256 of the body> <length>".
Usage: internet.py LOGFILE CERT KEY SELFCERT SELFKEY"""
import base64
import hashlib
import json
import select
import socket
import ssl
import sys
import threading

NAMES = {
    "allowed.test": "198.51.100.1",
    "wrong.test": "198.51.100.1",
    "selfsigned.test": "198.51.100.4",
    "api.pkg.test": "198.51.100.1",
    "deep.api.pkg.test": "198.51.100.1",
    "pkg.test": "198.51.100.1",
    "denied.test": "198.51.100.2",
    "other.test": "198.51.100.3",
    "rebind.test": "169.254.169.254",
}
TYPES = {1: "A", 28: "AAAA", 16: "TXT", 10: "NULL", 15: "MX"}

log = open(sys.argv[1], "a", buffering=1)
lock = threading.Lock()


def say(line):
    with lock:
        log.write(line + "\n")


def dns_answer(q):
    if len(q) < 17:
        return None
    i, labels = 12, []
    while i < len(q) and q[i]:
        labels.append(q[i + 1:i + 1 + q[i]].decode("ascii", "replace"))
        i += 1 + q[i]
    end = i + 5
    if end > len(q):
        return None
    name = ".".join(labels).lower()
    qtype = q[i + 1] << 8 | q[i + 2]
    say("dns %s %s" % (TYPES.get(qtype, str(qtype)), name))
    ip = NAMES.get(name)
    if not ip:
        return q[:2] + b"\x81\x83" + b"\0\1\0\0\0\0\0\0" + q[12:end]
    if qtype != 1:
        return q[:2] + b"\x81\x80" + b"\0\1\0\0\0\0\0\0" + q[12:end]
    return (q[:2] + b"\x81\x80" + b"\0\1\0\1\0\0\0\0" + q[12:end] +
            b"\xc0\x0c\0\1\0\1\0\0\0\x3c\0\4" + socket.inet_aton(ip))


def read_head(conn, data):
    while b"\r\n\r\n" not in data and len(data) < 65536:
        chunk = conn.recv(4096)
        if not chunk:
            return None, data
        data += chunk
    head, sep, rest = data.partition(b"\r\n\r\n")
    return (head if sep else None), rest


def read_body(conn, headers, rest):
    """The body after the head (Content-Length or chunked), and what follows."""
    def more():
        c = conn.recv(65536)
        if not c:
            raise EOFError
        return c
    if "content-length" in headers:
        n = int(headers["content-length"])
        while len(rest) < n:
            rest += more()
        return rest[:n], rest[n:]
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        while True:
            while b"\r\n" not in rest:
                rest += more()
            line, _, rest = rest.partition(b"\r\n")
            size = int(line.split(b";")[0], 16)
            while len(rest) < size + 2:
                rest += more()
            if size == 0:           # no trailers here: the empty line follows
                return body, rest[2:]
            body += rest[:size]
            rest = rest[size + 2:]
    return b"", rest


def ws_frame(opcode, payload):
    n = len(payload)
    head = bytes([0x80 | opcode])
    if n < 126:
        head += bytes([n])
    elif n < 65536:
        head += bytes([126]) + n.to_bytes(2, "big")
    else:
        head += bytes([127]) + n.to_bytes(8, "big")
    return head + payload


def ws_serve(conn, headers, rest):
    """A WebSocket echo after the 101 (the client's frames are masked)."""
    key = headers.get("sec-websocket-key", "")
    accept = base64.b64encode(hashlib.sha1(
        (key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest())
    auth = headers.get("authorization")
    say("ws %s" % auth)
    hello = "hello auth=%s" % (hashlib.sha256(auth.encode()).hexdigest() if auth else None)
    conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                 b"Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n" % accept +
                 ws_frame(1, hello.encode()))
    conn.settimeout(60)

    def need(n):
        nonlocal rest
        while len(rest) < n:
            c = conn.recv(1 << 20)
            if not c:
                raise EOFError
            rest += c
        out, rest = rest[:n], rest[n:]
        return out
    while True:
        b0, b1 = need(2)
        n = b1 & 127
        if n == 126:
            n = int.from_bytes(need(2), "big")
        elif n == 127:
            n = int.from_bytes(need(8), "big")
        mask = need(4) if b1 & 128 else b"\0\0\0\0"
        data = need(n)
        data = bytes(x ^ mask[i % 4] for i, x in enumerate(data)) if b1 & 128 else data
        conn.sendall(ws_frame(b0 & 15, data))
        if b0 & 15 == 8:
            return


def pipe_serve(conn, data):
    """Every byte back as it comes, until the client's half-close."""
    h, n = hashlib.sha256(), 0
    conn.settimeout(60)
    conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
    while True:
        if not data:
            data = conn.recv(1 << 20)   # the head may have come alone
            if not data:
                break
        h.update(data)
        n += len(data)
        conn.sendall(data)
        data = b""
    conn.sendall(b"sha=%s n=%d" % (h.hexdigest().encode(), n))


def http_reply(conn, local, sni):
    conn.settimeout(5)
    rest = b""
    while True:
        try:
            head, rest = read_head(conn, rest)
        except (OSError, ssl.SSLError):
            head = None
        if head is None:
            break
        lines = head.split(b"\r\n")
        parts = lines[0].decode("latin-1").split(" ")
        headers = {}
        for line in lines[1:]:
            k, _, v = line.decode("latin-1").partition(":")
            headers[k.strip().lower()] = v.strip()
        host = headers.get("host", "-")
        if len(parts) == 3 and parts[1].startswith("/big?n="):
            try:
                body, rest = read_body(conn, headers, rest)
                n = int(parts[1].split("=", 1)[1])
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nX-Got: %s %d\r\n\r\n" %
                             (n, hashlib.sha256(body).hexdigest().encode(), len(body)))
                block = bytes(range(256)) * 4096
                for i in range(0, n, len(block)):
                    conn.sendall(block[:n - i])
            except (OSError, ssl.SSLError, EOFError, ValueError):
                break
            continue
        if len(parts) == 3 and parts[1].startswith("/pipe"):
            try:
                pipe_serve(conn, rest)
            except (OSError, ssl.SSLError):
                pass
            break
        if len(parts) == 3 and parts[1].startswith("/ws") and \
                headers.get("upgrade", "").lower() == "websocket":
            try:
                ws_serve(conn, headers, rest)
            except (OSError, ssl.SSLError, EOFError, ValueError):
                pass
            break
        if len(parts) == 3 and parts[1].startswith(("/echo", "/proxy")):
            try:
                body, rest = read_body(conn, headers, rest)
            except (OSError, ssl.SSLError, EOFError, ValueError):
                break
            auth = headers.get("authorization")
            seen = {"server": local, "sni": sni or "-", "method": parts[0], "path": parts[1],
                    "host": host, "names": sorted(headers),
                    "auth": hashlib.sha256(auth.encode()).hexdigest() if auth else None,
                    "fwd": headers.get("x-forwarded-host"), "body": body.decode("latin-1")}
            say("echo " + json.dumps(dict(seen, auth=auth)))
            out = json.dumps(seen).encode()
            close = headers.get("connection", "").lower() == "close"
            try:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: %d\r\n%s\r\n" %
                             (len(out), b"Connection: close\r\n" if close else b"") + out)
            except (OSError, ssl.SSLError):
                break
            if close:
                break
            continue
        line = "server=%s host=%s sni=%s" % (local, host, sni or "-")
        say(line)
        body = (line + "\n").encode()
        try:
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                         % len(body) + body)
        except (OSError, ssl.SSLError):
            pass
        break
    conn.close()


ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
ctx.load_cert_chain(sys.argv[2], sys.argv[3])
snis = {}


def on_sni(sock, name, _ctx):
    snis[id(sock)] = name


ctx.sni_callback = on_sni
ctx.set_alpn_protocols(["h2", "http/1.1"])
self_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
self_ctx.load_cert_chain(sys.argv[4], sys.argv[5])
self_ctx.sni_callback = on_sni


def tls_conn(raw, local):
    try:
        raw.settimeout(5)
        c = (self_ctx if local == "198.51.100.4" else ctx).wrap_socket(raw, server_side=True)
    except (OSError, ssl.SSLError) as e:
        say("tls-fail server=%s %s" % (local, type(e).__name__))
        raw.close()
        return
    http_reply(c, local, snis.pop(id(c), None))


socks = []
for port in (80, 443):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(128)
    socks.append(("tcp", port, s))
for port in (53, 443):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("0.0.0.0", port))
    socks.append(("udp", port, u))
say("ready")
while True:
    r, _, _ = select.select([x[2] for x in socks], [], [], 1)
    for kind, port, s in socks:
        if s not in r:
            continue
        if kind == "tcp":
            c, _ = s.accept()
            local = c.getsockname()[0]
            fn = http_reply if port == 80 else tls_conn
            args = (c, local, None) if port == 80 else (c, local)
            threading.Thread(target=fn, args=args, daemon=True).start()
        else:
            d, a = s.recvfrom(4096)
            if port == 53:
                reply = dns_answer(d)
                if reply:
                    s.sendto(reply, a)
            else:
                say("udp %d from %s" % (port, a[0]))
