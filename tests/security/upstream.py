"""A fake internet host for the network probes, run by /usr/bin/python3 in
the network namespace `sbxsecup` that probes_b.py creates. It listens on
TCP 80 and 8080 and UDP 53 and 9999 on every address of the namespace
(203.0.113.1, and 169.254.169.254 / 100.100.100.200 on lo, which stand in
for cloud metadata services) and logs one line per connection or datagram
(protocol, port, destination, source) so a probe can prove nothing arrived.
On UDP 53 it answers A queries for the names in NAMES (a hostile DNS
server pointing names at metadata and loopback; probe 38), NXDOMAIN else.
Usage: upstream.py LOGFILE SECONDS"""
import select
import socket
import sys
import time

NAMES = {b"allowed.example": "169.254.169.254", b"local.example": "127.0.0.1",
         b"up.example": "203.0.113.1"}


def dns_answer(q):
    """The reply to query q (one question), or None for garbage."""
    if len(q) < 17:
        return None
    i, labels = 12, []
    while i < len(q) and q[i]:
        labels.append(q[i + 1:i + 1 + q[i]])
        i += 1 + q[i]
    end = i + 5                      # the 0 byte, type, class
    if end > len(q):
        return None
    ip = NAMES.get(b".".join(labels).lower())
    if not ip or q[i + 1:i + 3] != b"\0\1":
        return q[:2] + b"\x81\x83" + b"\0\1\0\0\0\0\0\0" + q[12:end]
    return (q[:2] + b"\x81\x80" + b"\0\1\0\1\0\0\0\0" + q[12:end] +
            b"\xc0\x0c\0\1\0\1\0\0\0\x3c\0\4" + socket.inet_aton(ip))


log = open(sys.argv[1], "a", buffering=1)
end = time.time() + float(sys.argv[2])
socks = []
for port in (80, 8080):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(128)
    socks.append(("tcp", port, s))
for port in (53, 9999):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("0.0.0.0", port))
    socks.append(("udp", port, u))
log.write("ready\n")
while time.time() < end:
    r, _, _ = select.select([x[2] for x in socks], [], [], 1)
    for kind, port, s in socks:
        if s not in r:
            continue
        if kind == "tcp":
            c, a = s.accept()
            log.write("tcp %d %s %s\n" % (port, c.getsockname()[0], a[0]))
            try:
                c.sendall(b"HTTP/1.0 200 OK\r\n\r\nupstream")
            except OSError:
                pass
            c.close()
        else:
            d, a = s.recvfrom(4096)
            log.write("udp %d ? %s\n" % (port, a[0]))
            reply = dns_answer(d) if port == 53 else None
            if reply:
                s.sendto(reply, a)
