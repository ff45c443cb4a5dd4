#!/usr/bin/env python3
"""Host side of the vsock backend's checks (tests/vm/run.sh): each command
dials the backend's hybrid socket and prints one line the suite compares.
  echo SOCK               bytes through the guest's echo, compared
  flood SOCK BYTES        the guest's pattern, compared byte by byte
  stall SOCK              how much a host writer got in before it was paused,
                          and whether another connection still echoes
  many SOCK N             N connections open at once, each its own bytes
  refused SOCK PORT       a port nobody listens on: closed without OK
  badline SOCK            not a CONNECT line: closed
  hold SOCK               open an echo connection, print ready, wait for EOF
  guestclose SOCK         the guest closes while the host writes: the host's
                          end is closed (EOF or reset), never left hanging
  dialhost SOCK           the guest's line on how its connect to the host ended
"""
import os
import socket
import sys
import threading

def dial(path, port, timeout=120):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.sendall(b"CONNECT %d\n" % port)
    s.settimeout(timeout)
    line = b""
    while not line.endswith(b"\n"):
        c = s.recv(1)
        if not c:
            raise ConnectionError("closed after %r" % line)
        line += c
    if line != b"OK %d\n" % port:
        raise ConnectionError("answer %r" % line)
    return s

def recv_all(s, n):
    out = bytearray()
    while len(out) < n:
        b = s.recv(min(1 << 20, n - len(out)))
        if not b:
            break
        out.extend(b)
    return bytes(out)

def echo(path):
    s = dial(path, 1024)
    data = os.urandom(1 << 20)
    got = []
    t = threading.Thread(target=lambda: got.append(recv_all(s, len(data))))
    t.start()
    s.sendall(data)
    t.join()
    print("echoed" if got[0] == data else "differs at %d bytes" % len(got[0]))

def flood(path, n):
    s = dial(path, 1026)
    s.sendall(b"%d\n" % n)
    got = bytearray()
    while True:
        b = s.recv(1 << 20)
        if not b:
            break
        got.extend(b)
    want = bytes(i % 251 for i in range(251)) * (n // 251 + 1)
    print("received %d, %s" % (len(got), "pattern ok" if got == want[:n] else "pattern differs"))

def stall(path):
    s = dial(path, 1025)
    s.setblocking(False)
    sent = 0
    chunk = b"x" * 65536
    # keep writing until the kernel refuses for a while: the writer is paused
    for _ in range(3):
        try:
            while sent < (256 << 20):
                sent += s.send(chunk)
        except BlockingIOError:
            pass
        threading.Event().wait(1)
    paused = sent < (64 << 20)
    e = dial(path, 1024)
    e.sendall(b"still here\n")
    other = recv_all(e, 11) == b"still here\n"
    print("paused %s, other connection %s" % ("yes" if paused else "no (%d bytes taken)" % sent,
                                              "echoes" if other else "stuck"))

def many(path, n):
    socks = [dial(path, 1024) for _ in range(n)]
    for i, s in enumerate(socks):
        s.sendall(b"connection %05d\n" % i)
    ok = sum(1 for i, s in enumerate(socks) if recv_all(s, 17) == b"connection %05d\n" % i)
    print("%d of %d echoed" % (ok, n))

def refused(path, port):
    try:
        dial(path, port, timeout=60)
        print("answered")
    except ConnectionError as e:
        print("closed" if "closed after b''" in str(e) else str(e))

def badline(path):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.sendall(b"CONNECT x\n")
    s.settimeout(30)
    try:
        print("closed" if s.recv(10) == b"" else "answered")
    except ConnectionResetError:
        print("closed")

def hold(path):
    s = dial(path, 1024)
    print("ready", flush=True)
    s.settimeout(300)
    try:
        b = s.recv(10)
        print("eof" if b == b"" else "data %r" % b)
    except OSError as e:
        print("reset" if isinstance(e, ConnectionResetError) else "error %s" % e)

def guestclose(path):
    s = dial(path, 1028)
    s.settimeout(120)
    sent = 0
    try:
        s.sendall(b"x")
        # more than the guest's credit: a backend that kept the connection
        # would block this writer until the timeout
        while sent < (64 << 20):
            sent += s.send(b"y" * 65536)
        print("hang: %d bytes taken" % sent)
    except socket.timeout:
        print("hang: the writer blocked after %d bytes" % sent)
    except (BrokenPipeError, ConnectionResetError):
        print("closed")
    else:
        return
    s.close()

def dialhost(path):
    s = dial(path, 1029)
    print(recv_all(s, 200).decode().strip())

cmd, path = sys.argv[1], sys.argv[2]
args = [int(a) for a in sys.argv[3:]]
{"echo": echo, "flood": flood, "stall": stall, "many": many, "refused": refused,
 "badline": badline, "hold": hold, "guestclose": guestclose,
 "dialhost": dialhost}[cmd](path, *args)
