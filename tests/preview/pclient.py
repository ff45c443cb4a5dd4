#!/usr/bin/env python3
"""Raw-socket clients for tests/preview/run.sh: what curl cannot send or
measure (ambiguous heads, pipelining, slow heads, WebSocket frames, SSE
events one by one). Each mode prints one short result line."""
import base64, os, re, socket, ssl, struct, sys, time

def connect(port, tls_host=None):
    s = socket.create_connection(('127.0.0.1', port), timeout=10)
    if tls_host:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        s = ctx.wrap_socket(s, server_hostname=tls_host)
    return s

def read_all(s, limit=10.0):
    s.settimeout(limit)
    out = b''
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
    except (socket.timeout, ConnectionResetError):
        pass
    return out

def status_codes(out):
    """the status codes of the responses in out, as one line ('closed' for
    none); a status line may follow a body that ends in a bare LF (node's
    "hello from node\\n")"""
    codes = [c.decode() for c in re.findall(rb'(?:^|\n)HTTP/1\.[01] (\d{3})', out)]
    return ' '.join(codes) if codes else 'closed'

def raw(port, data):
    """send bytes (Python escapes allowed), print the status codes seen"""
    s = connect(port)
    s.sendall(data.encode('latin-1').decode('unicode_escape').encode('latin-1'))
    print(status_codes(read_all(s, 5)))

def ws(port, host, tls=False):
    s = connect(port, host if tls else None)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall((f'GET /ws HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n'
               f'Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n'
               'Sec-WebSocket-Version: 13\r\n\r\n').encode())
    head = b''
    while b'\r\n\r\n' not in head:
        d = s.recv(4096)
        if not d:
            print('closed'); return
        head += d
    rest = head.split(b'\r\n\r\n', 1)[1]
    msgs = []
    for payload in (b'hello websocket', os.urandom(3000)):
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i & 3] for i, b in enumerate(payload))
        op = 0x81 if payload.startswith(b'hello') else 0x82
        hdr = bytes([op, 0x80 | len(payload)]) if len(payload) < 126 else \
            bytes([op, 0x80 | 126, len(payload) >> 8, len(payload) & 255])
        s.sendall(hdr + mask + masked)
        want = (2 if len(payload) < 126 else 4) + len(payload)
        while len(rest) < want:
            d = s.recv(65536)
            if not d:
                break
            rest += d
        got, rest = rest[:want], rest[want:]
        msgs.append(got[(2 if len(payload) < 126 else 4):] == payload)
    print(head.split(b'\r\n')[0].decode().split(' ')[1], 'echo-ok' if all(msgs) else 'echo-bad')

def sse(port, host):
    """four events, each of which the server sends only once we asked for it
    (GET /sse-next) having received the one before: they arrive one by one,
    or (a proxy that holds the stream back) the first never comes"""
    s = connect(port)
    s.sendall(f'GET /sse HTTP/1.1\r\nHost: {host}\r\n\r\n'.encode())
    s.settimeout(10)
    got, buf = 0, b''
    try:
        while got < 4:
            d = s.recv(65536)
            if not d:
                break
            buf += d
            while b'data: ' in buf and b'\n\n' in buf.split(b'data: ', 1)[1]:
                buf = buf.split(b'data: ', 1)[1].split(b'\n\n', 1)[1]
                got += 1
                if got < 4:
                    n = connect(port)
                    n.sendall(f'GET /sse-next HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n'.encode())
                    read_all(n, 10)
                    n.close()
    except socket.timeout:
        pass
    print('one by one' if got == 4 else f'{got} of 4 events')

def slowloris(port, host, early=False):
    """a head that never ends; early: the Host line comes whole at once
    (the proxy times it out), else byte by byte (the front door does)"""
    s = connect(port)
    t0 = time.monotonic()
    s.sendall(b'GET / HTTP/1.1\r\n' + (f'Host: {host}\r\n'.encode() if early else b''))
    try:
        for i in range(60):
            time.sleep(0.25)
            s.sendall(b'X-a: b\r\n' if early else f'Host: {host}'.encode()[i:i + 1])
    except (BrokenPipeError, ConnectionResetError):
        pass
    out = read_all(s, 1)
    print(f'closed after {time.monotonic() - t0:.0f}s', out.split(b'\r\n')[0].decode(errors='replace') or '-')

def pipeline(port, host):
    s = connect(port)
    req = f'GET / HTTP/1.1\r\nHost: {host}\r\n\r\n'.encode()
    s.sendall(req + req)
    s.settimeout(5)
    out = b''
    while out.count(b'hello from node') < 2:
        d = s.recv(65536)
        if not d:
            break
        out += d
    print(out.count(b'HTTP/1.1 200'))

def insequence(port, host, n):
    """n requests on one connection, each sent once the answer to the one
    before came whole; print how many were answered 200"""
    s = connect(port)
    s.settimeout(10)
    req = f'GET / HTTP/1.1\r\nHost: {host}\r\n\r\n'.encode()
    ok = 0
    for _ in range(n):
        s.sendall(req)
        out = b''
        while b'hello from' not in out:
            d = s.recv(65536)
            if not d:
                print(ok)
                return
            out += d
        ok += out.count(b'HTTP/1.1 200')
    print(ok)

def drain(port, host, other):
    """a 5 MB response, then (pipelined) a request for another host: the
    whole response arrives, then the connection closes"""
    s = connect(port)
    s.sendall(f'GET /download?mb=5 HTTP/1.1\r\nHost: {host}\r\n\r\n'
              f'GET / HTTP/1.1\r\nHost: {other}\r\n\r\n'.encode())
    out = read_all(s, 10)
    head, _, body = out.partition(b'\r\n\r\n')
    print(head.split(b'\r\n')[0].decode(errors='replace'), len(body))

def rss_kb(pid):
    with open(f'/proc/{pid}/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    return 0

def slowread(port, host, pid):
    """a client that stops reading a 50 MB download: the gateway must stop
    reading the guest (its memory stays flat), then deliver every byte"""
    s = connect(port)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    s.sendall(f'GET /download?mb=50 HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n'.encode())
    got = len(s.recv(65536))
    time.sleep(1.0)
    r0 = rss_kb(pid)
    time.sleep(2.0)
    r1 = rss_kb(pid)
    total = got
    s.settimeout(30)
    while True:
        d = s.recv(1 << 20)
        if not d:
            break
        total += len(d)
    print('flat' if r1 - r0 < 2048 else f'grew {r1 - r0} KiB',
          'whole' if total > 50 * 1024 * 1024 else f'short {total}')

def idle(port, host, n):
    """n idle connections before any byte, n/4 idle after a request: the
    gateway keeps answering at once"""
    conns = []
    for _ in range(n):
        conns.append(connect(port))
    req = f'GET / HTTP/1.1\r\nHost: {host}\r\n\r\n'.encode()
    for _ in range(n // 4):
        c = connect(port)
        c.sendall(req)
        c.settimeout(10)
        c.recv(4096)
        conns.append(c)
    t0 = time.monotonic()
    c = connect(port)
    c.sendall(req)
    c.settimeout(10)
    ok = b'hello from node' in c.recv(4096)
    dt = time.monotonic() - t0
    for x in conns:
        x.close()
    # a gateway held up by idle connections would serve this one only after
    # theirs (each waits for its 2 s header timeout at least): 5 s leaves a
    # busy machine room (a gateway stopped for a moment answers late)
    print('answered' if ok and dt < 5.0 else f'slow {dt:.2f}s ok={ok}')

def reset(port, host):
    """the client resets the connection mid-download"""
    s = connect(port)
    s.sendall(f'GET /download?mb=50 HTTP/1.1\r\nHost: {host}\r\n\r\n'.encode())
    s.settimeout(30)
    n = 0
    while n < (1 << 20):
        d = s.recv(65536)
        if not d:   # the server (or a suite killed meanwhile) closed first
            print(f'closed after {n} bytes')
            return
        n += len(d)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
    s.close()
    print('reset')

def unescape(data):
    return data.encode('latin-1').decode('unicode_escape').encode('latin-1')

def location(port, data):
    """send one request, print its status and Location ('-' when none)"""
    s = connect(port)
    s.sendall(unescape(data))
    head = read_all(s, 5).split(b'\r\n\r\n', 1)[0].split(b'\r\n')
    if not head[0].startswith(b'HTTP/1.'):
        print('closed'); return
    loc = [l.split(b':', 1)[1].strip().decode('latin-1') for l in head[1:]
           if l.lower().startswith(b'location:')]
    print(head[0].split(b' ')[1].decode(), loc[0] if loc else '-')

def upgrade_then(port, host, second):
    """an Upgrade request, its whole answer, then `second` on the same
    connection; print the status codes of everything that came back"""
    s = connect(port)
    s.sendall((f'GET /up HTTP/1.1\r\nHost: {host}\r\nConnection: Upgrade\r\n'
               'Upgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n'
               'Sec-WebSocket-Version: 13\r\n\r\n').encode())
    got = b''
    s.settimeout(10)
    while b'\r\n\r\nok' not in got:   # the guest's 200 (its body is "ok")
        d = s.recv(65536)
        if not d:
            break
        got += d
    # the proxy saw the guest's status line before these bytes reached us
    try:
        s.sendall(unescape(second))
    except OSError:
        pass
    got += read_all(s, 3)
    codes = [l.split(b' ')[1].decode() for l in got.split(b'\r\n') if l.startswith(b'HTTP/1.')]
    print(' '.join(codes) if codes else 'closed')

def crlf_keepalive(port, host, wait):
    """a request and its whole answer, then a lone CRLF (RFC 9112 2.2: an
    empty line before the next request line), `wait` seconds (past the
    header timeout), then a second request on the same connection; print
    the status codes of everything that came back"""
    s = connect(port)
    req = f'GET / HTTP/1.1\r\nHost: {host}\r\n\r\n'.encode()
    s.sendall(req)
    got = b''
    s.settimeout(10)
    while b'hello from node' not in got:
        d = s.recv(65536)
        if not d:
            break
        got += d
    try:
        s.sendall(b'\r\n')
        time.sleep(wait)
        s.sendall(req.replace(b'\r\n\r\n', b'\r\nConnection: close\r\n\r\n'))
    except OSError:
        pass
    got += read_all(s, 5)
    print(status_codes(got))

if __name__ == '__main__':
    mode, port = sys.argv[1], int(sys.argv[2])
    args = sys.argv[3:]
    if mode == 'raw':
        raw(port, args[0])
    elif mode == 'drain':
        drain(port, args[0], args[1])
    elif mode == 'slowread':
        slowread(port, args[0], int(args[1]))
    elif mode == 'insequence':
        insequence(port, args[0], int(args[1]))
    elif mode == 'idle':
        idle(port, args[0], int(args[1]))
    elif mode == 'slowloris':
        slowloris(port, args[0], len(args) > 1)
    elif mode == 'location':
        location(port, args[0])
    elif mode == 'upgrade_then':
        upgrade_then(port, args[0], args[1])
    elif mode == 'crlf_keepalive':
        crlf_keepalive(port, args[0], float(args[1]))
    elif mode == 'ws':
        ws(port, args[0], len(args) > 1)
    else:
        globals()[mode](port, args[0])
