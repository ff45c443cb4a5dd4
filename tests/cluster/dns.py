#!/usr/bin/env python3
"""A small DNS server for the cluster suite: the names the test controls.

usage: dns.py ADDR ZONE_FILE QUERY_LOG

Answers UDP queries on ADDR:53 from ZONE_FILE, read again whenever it
changed (the test rewrites it to add or remove a runner mid-run):

    # comment
    NAME A 10.1.2.3
    NAME AAAA fd00::3
    NAME SRV PRIORITY WEIGHT PORT TARGET

A name in the zone with no record of the asked type gets an empty NOERROR
answer (NODATA), a name not in the zone NXDOMAIN: what a resolver expects of
an authoritative server, so getaddrinfo's A and AAAA queries both end at
once. An SRV answer carries the targets' A/AAAA records as additional
records. TTLs are 0: nothing may cache an answer the test is about to change.

Every query is appended to QUERY_LOG as "NAME TYPE ANSWERS" (one line, in
order), so the test can wait until the gateway asked again after a change
instead of sleeping. Once bound it writes QUERY_LOG.ready.
"""
import os
import socket
import struct
import sys

TYPES = {1: "A", 28: "AAAA", 33: "SRV"}
CODES = {v: k for k, v in TYPES.items()}


class Zone:
    def __init__(self, path):
        self.path = path
        self.stamp = None
        self.records = {}  # name -> [(type, value)]

    def current(self):
        try:
            st = os.stat(self.path)
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            stamp = None
        if stamp != self.stamp:
            self.stamp = stamp
            self.records = self.load() if stamp else {}
        return self.records

    def load(self):
        records = {}
        with open(self.path) as f:
            for line in f:
                parts = line.split("#", 1)[0].split()
                if len(parts) < 3 or parts[1].upper() not in CODES:
                    continue
                name = parts[0].rstrip(".").lower()
                records.setdefault(name, []).append((parts[1].upper(), parts[2:]))
        return records


def encode_name(name):
    out = b""
    for label in name.rstrip(".").split("."):
        if label:
            out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def read_question(msg):
    """The first question: (name, type, end offset), or None if malformed."""
    pos, labels = 12, []
    while pos < len(msg):
        n = msg[pos]
        if n == 0:
            pos += 1
            break
        if n & 0xC0 or pos + 1 + n > len(msg):
            return None
        labels.append(msg[pos + 1:pos + 1 + n].decode("ascii", "replace"))
        pos += 1 + n
    if pos + 4 > len(msg):
        return None
    qtype, _ = struct.unpack("!HH", msg[pos:pos + 4])
    return ".".join(labels).lower(), qtype, pos + 4


def rdata(rtype, value):
    if rtype == "A":
        return socket.inet_pton(socket.AF_INET, value[0])
    if rtype == "AAAA":
        return socket.inet_pton(socket.AF_INET6, value[0])
    prio, weight, port, target = value[:4]
    return struct.pack("!HHH", int(prio), int(weight), int(port)) + encode_name(target)


def rr(owner, rtype, value):
    data = rdata(rtype, value)
    return owner + struct.pack("!HHIH", CODES[rtype], 1, 0, len(data)) + data


def answer(msg, zone):
    q = read_question(msg)
    if q is None or len(msg) < 12:
        return None, None
    name, qtype, end = q
    qid, flags = struct.unpack("!HH", msg[:4])
    records = zone.current()
    answers, extra = [], []
    rcode = 0
    if name not in records:
        rcode = 3  # NXDOMAIN
    else:
        for rtype, value in records[name]:
            if CODES[rtype] == qtype:
                answers.append(rr(b"\xc0\x0c", rtype, value))
                if rtype == "SRV":
                    target = value[3].rstrip(".").lower()
                    for ttype, tvalue in records.get(target, []):
                        if ttype in ("A", "AAAA"):
                            extra.append(rr(encode_name(target), ttype, tvalue))
    # QR, AA, RD copied from the query, RA
    rflags = 0x8000 | 0x0400 | (flags & 0x0100) | 0x0080 | rcode
    head = struct.pack("!HHHHHH", qid, rflags, 1, len(answers), 0, len(extra))
    reply = head + msg[12:end] + b"".join(answers) + b"".join(extra)
    if len(reply) > 512:  # never expected here; say so rather than send a bad packet
        reply = struct.pack("!HHHHHH", qid, rflags | 0x0200, 1, 0, 0, 0) + msg[12:end]
    return reply, "%s %s %d" % (name, TYPES.get(qtype, str(qtype)), len(answers))


def main():
    addr, zone_path, log_path = sys.argv[1:4]
    zone = Zone(zone_path)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((addr, 53))
    log = open(log_path, "a", buffering=1)
    open(log_path + ".ready", "w").close()
    while True:
        msg, peer = sock.recvfrom(4096)
        try:
            reply, line = answer(msg, zone)
        except (ValueError, OSError, IndexError) as e:  # a bad zone line: log, answer nothing
            log.write("error %s\n" % e)
            continue
        if reply is None:
            continue
        log.write(line + "\n")
        sock.sendto(reply, peer)


if __name__ == "__main__":
    main()
