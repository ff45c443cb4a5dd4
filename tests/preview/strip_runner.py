#!/usr/bin/env python3
"""A stand-in for a runner that does not report `preview_auth`: it listens
on a unix socket and relays every connection to the real runner (bytes and
passed sockets alike), removing `preview_auth` from the sandbox objects of
the first reply. tests/preview/run.sh points a gateway at it: that gateway
cannot tell whether a preview is private and must not serve it.

usage: strip_runner.py LISTEN_SOCKET REAL_RUNNER_SOCKET"""
import array, json, os, socket, struct, sys, threading

def strip(obj):
    for s in [obj.get('sandbox')] + list(obj.get('sandboxes') or []):
        if isinstance(s, dict):
            s.pop('preview_auth', None)
    return obj

def recv(sock):
    fds = array.array('i')
    data, anc, _, _ = sock.recvmsg(65536, socket.CMSG_SPACE(4 * fds.itemsize))
    for level, typ, d in anc:
        if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
            fds.frombytes(d[:len(d) - len(d) % fds.itemsize])
    return data, list(fds)

def send(sock, data, fds):
    anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', fds))] if fds else []
    sent = sock.sendmsg([data], anc)
    if sent < len(data):
        sock.sendall(data[sent:])
    for fd in fds:
        os.close(fd)

def client_to_runner(c, r):
    try:
        while True:
            d = c.recv(65536)
            if not d:
                break
            r.sendall(d)
    except OSError:
        pass
    try:
        r.shutdown(socket.SHUT_WR)
    except OSError:
        pass

def runner_to_client(r, c):
    buf, fds, first = b'', [], True
    try:
        while True:
            d, f = recv(r)
            fds += f
            if not d:
                break
            if not first:
                send(c, d, fds)
                fds = []
                continue
            buf += d
            if len(buf) < 5:
                continue
            n, typ = struct.unpack('>IB', buf[:5])
            if len(buf) < 5 + n:
                continue
            payload, rest = buf[5:5 + n], buf[5 + n:]
            if typ == 3:
                payload = json.dumps(strip(json.loads(payload))).encode()
            send(c, struct.pack('>IB', len(payload), typ) + payload + rest, fds)
            fds, first = [], False
    except OSError:
        pass
    c.close()
    r.close()

def serve(c, real):
    r = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        r.connect(real)
    except OSError:
        c.close()
        return
    threading.Thread(target=client_to_runner, args=(c, r), daemon=True).start()
    runner_to_client(r, c)

def main():
    listen, real = sys.argv[1], sys.argv[2]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(listen)
    s.listen(64)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c, real), daemon=True).start()

if __name__ == '__main__':
    main()
