#!/usr/bin/env python3
"""REST GET .../files of files whose size at open (stat's, what a
Content-Length promises) is not their length, each read several times:
- /proc/version says 0 and has content: it comes whole, without a
  Content-Length, on a connection that then closes;
- /proc/self/pagemap says 0 and has no end: its bytes flow (3 MB read);
- a file growing while read: exactly the promised bytes, and the same
  connection answers the next request (bytes past the promise once went
  out and were read as the next response);
- an empty and a small file: exact, and the connection goes on.
Prints PASS:/FAIL: lines (tests/lib/harness.sh counts them).
Usage: reads.py URL KEY SANDBOX_ID FILE_WITH_PROC_VERSION"""
import os
import http.client
import sys
import urllib.parse

url, key, sid, version_file = sys.argv[1:5]
u = urllib.parse.urlparse(url)
HDR = {"Authorization": "Bearer " + key}
version = open(version_file, "rb").read()


def report(name, ok, why=""):
    print(("PASS: " if ok else "FAIL: ") + name + ("" if ok else ": " + why), flush=True)


def conn():
    return http.client.HTTPConnection(u.hostname, u.port, timeout=60)


def get_file(c, path):
    c.request("GET", "/v1/sandboxes/%s/files?path=%s" % (sid, urllib.parse.quote(path)), headers=HDR)
    return c.getresponse()


def healthz_on(c):
    """/healthz on the same connection: its status and body, or the error."""
    s0 = c.sock
    try:
        c.request("GET", "/healthz")
        r = c.getresponse()
        body = r.read()
        return "%s %s %s" % (r.status, body.strip().decode(errors="replace"), c.sock is s0 or "a new connection")
    except Exception as e:
        return "error: %r" % e


def each(name, times, fn):
    """fn() -> None when right, else why; one line for all the tries."""
    whys = []
    for i in range(times):
        try:
            why = fn()
        except Exception as e:
            why = "error: %r" % e
        if why:
            whys.append("try %d: %s" % (i + 1, why))
    report("%s (%d times)" % (name, times), not whys, "; ".join(whys)[:600])


def size_zero_content():
    c = conn()
    r = get_file(c, "/proc/version")
    body = r.read()
    c.close()
    got = (r.status, r.getheader("Content-Length"), r.will_close, body)
    if got != (200, None, True, version):
        return "got %r, want %r" % (got[:3] + (body[:80],), (200, None, True, version[:80]))
    return None


def endless():
    c = conn()
    r = get_file(c, "/proc/self/pagemap")
    n = 3000000
    data = b""
    while r.status == 200 and len(data) < n:
        part = r.read(n - len(data))
        if not part:
            break
        data += part
    if r.status != 200:
        data = r.read()
    c.close()
    if (r.status, r.getheader("Content-Length"), len(data)) != (200, None, n):
        return "status %s, Content-Length %s, %d bytes" % (r.status, r.getheader("Content-Length"), len(data))
    return None


def growing():
    c = conn()
    r = get_file(c, "/tmp/grow")
    body = r.read()
    promised = r.getheader("Content-Length")
    after = healthz_on(c)
    c.close()
    ok = r.status == 200 and promised is not None and int(promised) == len(body) and \
        len(body) >= 8 * 1024 * 1024 and body.count(0) == len(body)
    if not ok or after != '200 {"status":"ok"} True':
        return "status %s, Content-Length %s, %d bytes; then /healthz: %s" % (r.status, promised, len(body), after)
    return None


def exact(path, want):
    def run():
        c = conn()
        r = get_file(c, path)
        body = r.read()
        after = healthz_on(c)
        c.close()
        got = (r.status, r.getheader("Content-Length"), body, after)
        expect = (200, str(len(want)), want, '200 {"status":"ok"} True')
        return None if got == expect else "got %r, want %r" % (got, expect)
    return run


each("file-read: a file whose size says 0 (/proc/version) comes whole, no Content-Length, then the connection closes", 5, size_zero_content)
if os.environ.get("SANDBOX_TEST_ISOLATION", "jail") == "gvisor":
    # the gateway's path is the same for every driver; the jail run has it
    print("SKIP: file-read: a file whose size says 0 and has no end: gVisor's /proc has no pagemap", flush=True)
else:
    each("file-read: a file whose size says 0 and has no end (/proc/self/pagemap) streams: 3 MB of it came", 3, endless)
each("file-read: a file growing while read: its size at open, exactly; the same connection then answers /healthz", 5, growing)
each("file-read: an empty file: Content-Length 0; the same connection then answers /healthz", 3, exact("/tmp/empty", b""))
each("file-read: a small file: exact; the same connection then answers /healthz", 3, exact("/tmp/small", b"abc"))
