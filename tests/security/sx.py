"""Runs INSIDE a sandbox (uploaded to /tmp/.sec/sx.py): raw system calls
through ctypes, so a probe sees the kernel's (or seccomp's) answer itself
and not what a command-line tool makes of it. Probes end by calling out(),
which prints one 'R <json>' line the host side parses."""
import ctypes
import errno
import json
import os

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
R = {}

# x86_64 numbers (the jail allows only the native ABI)
NR = dict(mount=165, umount2=166, pivot_root=155, chroot=161, unshare=272, setns=308,
          clone=56, clone3=435, fsopen=430, open_tree=428, ptrace=101,
          process_vm_readv=310, init_module=175, finit_module=313, delete_module=176,
          keyctl=250, add_key=248, request_key=249, bpf=321, perf_event_open=298,
          userfaultfd=323, io_uring_setup=425, syslog=103, adjtimex=159,
          settimeofday=164, clock_settime=227, sethostname=170, kexec_load=246,
          open_by_handle_at=304, name_to_handle_at=303, reboot=169)


def arg(x):
    if isinstance(x, int):
        return ctypes.c_long(x)
    if isinstance(x, bytes):
        return ctypes.c_char_p(x)
    return x


def sc(name, *a):
    """The syscall's answer as 'ok:<ret>' or the errno name."""
    nr = NR[name] if isinstance(name, str) else name
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[arg(x) for x in a])
    e = ctypes.get_errno()
    return "ok:%d" % r if r >= 0 else errno.errorcode.get(e, str(e))


def tryf(fn, *a, **kw):
    """A Python call's answer as 'ok' (or 'ok:<value>') or the errno name."""
    try:
        v = fn(*a, **kw)
        return "ok" if v is None else "ok:%s" % (v,)
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


def rd(path, n=4096):
    with open(path, "rb") as f:
        return f.read(n)


def wr(path, data):
    with open(path, "wb", buffering=0) as f:
        f.write(data)


def out():
    print("R " + json.dumps(R, default=str))


def tcp(host, port, t=2.0):
    """Connect without any name lookup (AI_NUMERICHOST, so glibc's inet_aton
    forms like 0x7f.1 are parsed locally and nothing asks a DNS server).
    Returns 'OPEN' or why not."""
    import socket
    try:
        fam, typ, _, _, addr = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM, 0,
                                                  socket.AI_NUMERICHOST)[0]
    except socket.gaierror as e:
        return "resolve-error:%s" % e.errno
    s = socket.socket(fam, typ)
    s.settimeout(t)
    try:
        s.connect(addr)
        return "OPEN"
    except socket.timeout:
        return "timeout"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    finally:
        s.close()


def udp(host, port, data=b"probe"):
    import socket
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    try:
        s.sendto(data, (host, port))
        return "sent"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    finally:
        s.close()


def my_ip():
    """This sandbox's address toward the default route, without sending."""
    import socket
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("203.0.113.1", 9))
        return s.getsockname()[0]
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    finally:
        s.close()


def gateway_ip():
    import socket
    import struct
    for l in open("/proc/net/route").read().splitlines()[1:]:
        f = l.split()
        if f[1] == "00000000":
            return socket.inet_ntoa(struct.pack("<I", int(f[2], 16)))
    return None


def tcp_many(targets, t=1.0):
    """tcp() on many (host, port) pairs at once, so dropped packets cost one
    timeout in all, not one each. Returns {"host:port": answer}."""
    import threading
    res = {}

    def one(h, p):
        res["%s:%s" % (h, p)] = tcp(h, p, t)
    ts = [threading.Thread(target=one, args=hp) for hp in targets]
    for x in ts:
        x.start()
    for x in ts:
        x.join()
    return res
