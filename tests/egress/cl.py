"""Runs INSIDE a sandbox (uploaded to /tmp/cl.py): the egress suite's
client. Each probe returns what the sandbox saw, as a short string:
"200 <body>" / "403 <body>" for HTTP, "reset", "refused", "eof",
"timeout", "nxdomain", ... Usage: python3 cl.py PROBE ARGS... prints one
JSON value."""
import json
import random
import socket
import ssl
import struct
import sys

CA = "/tmp/ca.pem"


def err(e):
    if isinstance(e, ConnectionResetError):
        return "reset"
    if isinstance(e, ConnectionRefusedError):
        return "refused"
    if isinstance(e, socket.timeout):
        return "timeout"
    if isinstance(e, socket.gaierror):
        return "nxdomain" if e.errno in (socket.EAI_NONAME, -5) else "gai:%d" % e.errno
    if isinstance(e, ssl.SSLError):
        return "tls:" + (e.reason or type(e).__name__)
    return type(e).__name__


def read_all(s):
    data = b""
    while True:
        try:
            c = s.recv(65536)
        except ConnectionResetError:
            return data if data else None
        if not c:
            return data
        data += c


def http_result(data):
    if data is None:
        return "reset"
    if not data:
        return "eof"
    head, _, body = data.partition(b"\r\n\r\n")
    return "%s %s" % (head.split(b" ")[1].decode(), body.decode("utf-8", "replace").strip())


def http(addr, host, target="/"):
    """A GET of target with Host: host, to addr (a name: resolved here)."""
    try:
        s = socket.create_connection((addr, 80), timeout=10)
        s.sendall(b"GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" %
                  (target.encode(), host.encode()))
        return http_result(read_all(s))
    except OSError as e:
        return err(e)


def https(addr, sni, host=None):
    """A GET over TLS to addr:443 with SNI sni (None: none) and Host."""
    ctx = ssl.create_default_context(cafile=CA)
    ctx.check_hostname = False
    try:
        raw = socket.create_connection((addr, 443), timeout=10)
        s = ctx.wrap_socket(raw, server_hostname=sni)
        s.sendall(b"GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" %
                  (host or sni or addr).encode())
        return http_result(read_all(s))
    except (OSError, ssl.SSLError) as e:
        return err(e)


def client_hello(sni, extra_ext=None):
    """A real ClientHello for sni from this Python's TLS, with extra_ext
    (type, body) appended to its extensions."""
    ctx = ssl.create_default_context(cafile=CA)
    i, o = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(i, o, server_hostname=sni)
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    rec = o.read()
    if extra_ext is None:
        return rec
    t, body = extra_ext
    ext = struct.pack(">HH", t, len(body)) + body
    hs = bytearray(rec[5:])
    p = 4 + 34
    p += 1 + hs[p]
    p += 2 + struct.unpack(">H", hs[p:p + 2])[0]
    p += 1 + hs[p]
    elen = struct.unpack(">H", hs[p:p + 2])[0]
    hs[p:p + 2] = struct.pack(">H", elen + len(ext))
    hs += ext
    n = len(hs) - 4
    hs[1:4] = bytes([n >> 16 & 255, n >> 8 & 255, n & 255])
    return rec[:3] + struct.pack(">H", len(hs)) + bytes(hs)


def raw_tls(addr, hello):
    """Send a ClientHello; what comes back: "server-hello", "reset", "eof"."""
    try:
        s = socket.create_connection((addr, 443), timeout=10)
        s.sendall(hello)
        d = s.recv(5)
        return "server-hello" if d[:1] == b"\x16" else ("eof" if not d else "other")
    except OSError as e:
        return err(e)


def dns(name, qtype, server=None):
    """A raw query; the answer's rcode name and A records."""
    if server is None:
        for line in open("/etc/resolv.conf"):
            if line.startswith("nameserver"):
                server = line.split()[1]
    qid = random.randrange(65536)
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    q += b"\0" + struct.pack(">HH", qtype, 1)
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.settimeout(3)
    try:
        u.sendto(q, (server, 53))
        r, _ = u.recvfrom(4096)
    except OSError as e:
        return err(e)
    rcode = {0: "noerror", 2: "servfail", 3: "nxdomain", 5: "refused"}.get(r[3] & 15, str(r[3] & 15))
    an = struct.unpack(">H", r[6:8])[0]
    addrs, i = [], len(q)
    for _ in range(an):
        i += 2 if r[i] & 0xc0 == 0xc0 else len(name) + 2
        t, _, _, rdlen = struct.unpack(">HHIH", r[i:i + 10])
        i += 10
        if t == 1:
            addrs.append(socket.inet_ntoa(r[i:i + 4]))
        i += rdlen
    return "%s %s" % (rcode, ",".join(addrs))


def udp(addr, port):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        u.sendto(b"hello", (addr, port))
        return "sent"
    except OSError as e:
        return err(e)


def tcp(addr, port):
    try:
        socket.create_connection((addr, port), timeout=10).close()
        return "open"
    except OSError as e:
        return err(e)


def loop(path, n, *args):
    """n HTTP requests one after another, one result a line in path."""
    with open(path, "w", buffering=1) as f:
        for _ in range(int(n)):
            f.write(http(*args).split(" ")[0] + "\n")


def hold(path, addr, sni):
    """A TLS connection kept open: "open" in path, then after "go" appears
    in path + ".go", a request on it; its result appended."""
    import os
    import time
    ctx = ssl.create_default_context(cafile=CA)
    ctx.check_hostname = False
    s = ctx.wrap_socket(socket.create_connection((addr, 443), timeout=30), server_hostname=sni)
    with open(path, "w", buffering=1) as f:
        f.write("open\n")
        while not os.path.exists(path + ".go"):
            time.sleep(0.05)
        try:
            s.sendall(b"GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % sni.encode())
            f.write(http_result(read_all(s)) + "\n")
        except (OSError, ssl.SSLError) as e:
            f.write(err(e) + "\n")


def api(scheme, addr, host, reqs):
    """Requests on one kept-alive connection to addr (port 80 or 443, the
    sandbox's own trust store: no test CA), one result each:
    "<status> <body>". reqs: JSON [[method, path, {headers}, body, chunked]]."""
    import http.client
    try:
        if scheme == "https":
            c = http.client.HTTPSConnection(addr, 443, timeout=20,
                                            context=ssl.create_default_context())
        else:
            c = http.client.HTTPConnection(addr, 80, timeout=20)
        out = []
        for method, path, headers, body, chunked in json.loads(reqs):
            headers = dict(headers, Host=host)
            if chunked:
                c.request(method, path, body=iter([body.encode()[:3], body.encode()[3:]]),
                          headers=headers, encode_chunked=True)
            else:
                c.request(method, path, body=body.encode() if body else None, headers=headers)
            r = c.getresponse()
            out.append("%d %s" % (r.status, r.read().decode("utf-8", "replace").strip()))
        c.close()
        return out
    except (OSError, ssl.SSLError, http.client.HTTPException) as e:
        return err(e) if isinstance(e, (OSError, ssl.SSLError)) else type(e).__name__


def peer(addr, sni):
    """The issuer CN of the certificate addr:443 shows for sni, and the
    ALPN chosen when h2 and http/1.1 are offered."""
    ctx = ssl.create_default_context()
    ctx.load_verify_locations(CA)
    ctx.set_alpn_protocols(["h2", "http/1.1"])
    try:
        s = ctx.wrap_socket(socket.create_connection((addr, 443), timeout=10), server_hostname=sni)
        issuer = dict(x[0] for x in s.getpeercert()["issuer"])["commonName"]
        return "%s|%s" % (issuer, s.selected_alpn_protocol())
    except (OSError, ssl.SSLError) as e:
        return err(e)


def raw_https(addr, sni, payload):
    """payload (Python escapes allowed) over TLS with the sandbox's trust;
    the whole answer until the server closes."""
    try:
        s = ssl.create_default_context().wrap_socket(
            socket.create_connection((addr, 443), timeout=20), server_hostname=sni)
        s.sendall(payload.encode().decode("unicode_escape").encode("latin-1"))
        return (read_all(s) or b"").decode("latin-1")
    except (OSError, ssl.SSLError) as e:
        return err(e)


def ws(scheme, addr, host, path, sizes):
    """A WebSocket to addr (port 80 or 443, the sandbox's own trust store):
    the 101, the server's first frame, then for each of sizes (JSON) a
    binary frame of that many bytes sent and what came back compared, a
    close, and the end. Also the bytes this client sent and received in
    all (the egress log must show the same)."""
    import base64
    import os
    sent = got = 0
    try:
        raw = socket.create_connection((addr, 443 if scheme == "https" else 80), timeout=60)
        s = ssl.create_default_context().wrap_socket(raw, server_hostname=host) \
            if scheme == "https" else raw
        key = base64.b64encode(os.urandom(16)).decode()
        req = ("GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (path, host, key)).encode()
        s.sendall(req)
        sent += len(req)
        buf = b""

        def need(n):
            nonlocal buf, got
            while len(buf) < n:
                c = s.recv(1 << 20)
                if not c:
                    raise EOFError
                got += len(c)
                buf += c
            out, buf = buf[:n], buf[n:]
            return out
        while b"\r\n\r\n" not in buf:
            c = s.recv(65536)
            if not c:
                return ["eof before the 101"]
            got += len(c)
            buf += c
        head, _, buf = buf.partition(b"\r\n\r\n")
        out = [head.split(b" ")[1].decode()]

        def frame():
            b0, b1 = need(2)
            n = b1 & 127
            if n == 126:
                n = int.from_bytes(need(2), "big")
            elif n == 127:
                n = int.from_bytes(need(8), "big")
            return b0 & 15, need(n)

        def send(opcode, payload):
            nonlocal sent
            mask = os.urandom(4)
            n = len(payload)
            h = bytes([0x80 | opcode]) + (bytes([0x80 | n]) if n < 126 else
                                          bytes([0x80 | 126]) + n.to_bytes(2, "big") if n < 65536 else
                                          bytes([0x80 | 127]) + n.to_bytes(8, "big"))
            f = h + mask + bytes(x ^ mask[i % 4] for i, x in enumerate(payload))
            s.sendall(f)
            sent += len(f)
        out.append(frame()[1].decode())
        for n in json.loads(sizes):
            data = os.urandom(n)
            send(2, data)
            op, back = frame()
            out.append("echo %d %s" % (n, "same" if (op, back) == (2, data) else "DIFFERENT"))
        send(8, b"\x03\xe8")
        out.append("close" if frame()[0] == 8 else "no close")
        try:
            out.append("eof" if not s.recv(1) else "more")
        except (OSError, ssl.SSLError) as e:
            out.append(err(e))
        return out + ["sent %d got %d" % (sent, got)]
    except (OSError, ssl.SSLError, EOFError) as e:
        return [err(e) if not isinstance(e, EOFError) else "eof", "sent %d got %d" % (sent, got)]


def pipe(addr, host, n):
    """n random bytes to /pipe on port 80 while reading what comes back,
    then a half-close: "200 same sha n=N eof" when the echo and the
    server's count match, and the bytes sent and got in all."""
    import hashlib
    import os
    import select
    n = int(n)
    data = os.urandom(n)
    sent = got = 0
    back = b""
    try:
        s = socket.create_connection((addr, 80), timeout=60)
        head = b"POST /pipe HTTP/1.1\r\nHost: %s\r\n\r\n" % host.encode()
        s.sendall(head)
        sent = len(head)
        s.setblocking(False)
        off, eof, shut = 0, False, False
        while not eof:
            r, w, _ = select.select([s], [s] if not shut else [], [], 60)
            if not r and not w:
                return ["timeout", "sent %d got %d" % (sent, got)]
            try:
                if w:
                    if off < n:
                        off += s.send(data[off:off + 262144])
                    else:
                        s.shutdown(socket.SHUT_WR)
                        shut = True
                if r:
                    c = s.recv(1 << 20)
                    eof = not c
                    back += c
            except BlockingIOError:
                pass
        sent += n
        got = len(back)
        head, _, rest = back.partition(b"\r\n\r\n")
        want_tail = b"sha=%s n=%d" % (hashlib.sha256(data).hexdigest().encode(), n)
        return ["%s %s %s" % (head.split(b" ")[1].decode(), "same" if rest[:n] == data else "DIFFERENT",
                              "tail-ok" if rest[n:] == want_tail else "tail=%r" % rest[n:][:80]),
                "sent %d got %d" % (sent, got)]
    except OSError as e:
        return [err(e), "sent %d got %d" % (sent, got)]


def big(scheme, addr, host, up, down):
    """A POST of up random bytes to /big?n=down on one kept-alive
    connection, twice: "200 up=same down=same" when the server got the
    body whole and the answer is its down bytes."""
    import hashlib
    import http.client
    import os
    up, down = int(up), int(down)
    want = (bytes(range(256)) * (down // 256 + 1))[:down]
    try:
        c = http.client.HTTPSConnection(addr, 443, timeout=60, context=ssl.create_default_context()) \
            if scheme == "https" else http.client.HTTPConnection(addr, 80, timeout=60)
        out = []
        for _ in range(2):
            body = os.urandom(up)
            c.request("POST", "/big?n=%d" % down, body=body, headers={"Host": host})
            r = c.getresponse()
            data = r.read()
            out.append("%d up=%s down=%s" % (
                r.status, "same" if r.getheader("X-Got") == "%s %d" % (hashlib.sha256(body).hexdigest(), up)
                else "DIFFERENT", "same" if data == want else "DIFFERENT(%d)" % len(data)))
        c.close()
        return out
    except (OSError, ssl.SSLError, http.client.HTTPException) as e:
        return err(e) if isinstance(e, (OSError, ssl.SSLError)) else type(e).__name__


if __name__ == "__main__":
    fn = globals()[sys.argv[1]]
    args = [None if a == "-" else a for a in sys.argv[2:]]
    if fn in (dns,):
        args[1] = int(args[1])
    if fn in (udp, tcp):
        args[1] = int(args[1])
    if fn is raw_tls:
        ech = sys.argv[4] == "ech" if len(sys.argv) > 4 else False
        args = [args[0], client_hello(args[1], (0xfe0d, b"\0" * 32) if ech else None)]
    print(json.dumps(fn(*args)))
