"""Benchmark of the runner's isolation drivers side by side, in one run
(bench/drivers.sh): for every driver the runner finds available,
1. create-to-ready p50/p99 (the create reply comes once the agent answers
   its handshake), sandboxes created and stopped one at a time; bwrap
   running `echo hi` on the same image as the unsandboxed-runtime peer;
2. host memory per idle sandbox: D idle sandboxes at once, the drop in the
   host's free memory divided by D;
3. streaming throughput: `head -c 256M /dev/zero` in a sandbox, its output
   read through the runner's connect (agent -> runner splice -> client),
   best of 3.
Prints "figure: <name>|<value>|<unit>|<goal or ->" lines.

Usage: bench_drivers.py RUNNER AGENT"""
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rnclient as rc  # noqa: E402

RUNNER, AGENT = sys.argv[1], sys.argv[2]
N = int(os.environ.get("BENCH_DRIVERS_N", "30"))
D = int(os.environ.get("BENCH_DRIVERS_IDLE", "10"))
STREAM = 256 << 20
IMAGE_DIR = os.environ.get("SANDBOX_IMAGE_DIR", "/var/cache/sandbox/images")
ROOTFS = IMAGE_DIR + "/default/rootfs"
GOALS = {"gvisor create-to-ready p50": "< 250", "gvisor host memory per idle sandbox": "< 16",
         "gvisor/jail streaming throughput": ">= 0.5"}


def figure(name, value, unit):
    print("figure: %s|%s|%s|%s" % (name, value, unit, GOALS.get(name, "-")))
    sys.stdout.flush()


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def used_memory():
    m = {}
    with open("/proc/meminfo") as f:
        for line in f:
            k, v = line.split(":")
            m[k] = int(v.split()[0]) * 1024
    return m["MemTotal"] - m["MemFree"] - m.get("Buffers", 0) - m.get("Cached", 0) + m.get("Shmem", 0)


def create(sock, drv):
    rep = rc.request(sock, {"op": "create", "isolation": drv, "timeout_ms": 600000}, 60)
    if not rep.get("ok"):
        raise RuntimeError("create %s: %s" % (drv, rep))
    return rep["sandbox"]["id"]


def stream(sock, sid):
    """MiB/s of STREAM bytes of stdout through the runner's connect."""
    s, rep = rc.connect(sock, sid, 1024)
    s.settimeout(120)
    rc.send_frame(s, {"op": "exec", "cmd": "head", "args": ["-c", str(STREAM), "/dev/zero"],
                      "uid": 1000, "gid": 1000, "attach": True})
    t0 = time.perf_counter()
    rc.recv_frame(s)
    got, buf = 0, bytearray(1 << 20)
    view = memoryview(buf)
    while True:
        hdr = rc.recv_exact(s, 5)
        n, t = struct.unpack(">IB", hdr)
        if t == 3:
            p = rc.recv_exact(s, n)
            if b'"exit"' in p:
                break
            continue
        left = n
        while left:
            k = s.recv_into(view, min(left, len(buf)))
            if not k:
                raise EOFError("stream ended early")
            left -= k
        if t == 1:
            got += n
    dt = time.perf_counter() - t0
    s.close()
    if got != STREAM:
        raise RuntimeError("stream: %d of %d bytes" % (got, STREAM))
    return STREAM / dt / 2**20


def bench_driver(sock, drv, res):
    ready = []
    for _ in range(N):
        t0 = time.perf_counter()
        sid = create(sock, drv)
        ready.append((time.perf_counter() - t0) * 1000)
        rc.request(sock, {"op": "stop", "id": sid}, 60)
    figure("%s create-to-ready p50" % drv, "%.0f" % pct(ready, 50), "ms")
    figure("%s create-to-ready p99" % drv, "%.0f" % pct(ready, 99), "ms")
    sid = create(sock, drv)
    best = max(stream(sock, sid) for _ in range(3))
    rc.request(sock, {"op": "stop", "id": sid}, 60)
    res[drv] = best
    figure("%s streaming throughput" % drv, "%.0f" % best, "MiB/s")
    time.sleep(1.0)
    base = used_memory()
    ids = [create(sock, drv) for _ in range(D)]
    time.sleep(2.0)
    per = (used_memory() - base) / D / 2**20
    for sid in ids:
        rc.request(sock, {"op": "stop", "id": sid}, 60)
    figure("%s host memory per idle sandbox" % drv, "%.1f" % per, "MiB")


def bwrap():
    t = []
    for _ in range(N):
        t0 = time.perf_counter()
        out = subprocess.run(["bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", ROOTFS,
                              "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
                              "--uid", "1000", "--gid", "1000", "echo", "hi"], capture_output=True)
        if out.stdout != b"hi\n":
            return
        t.append((time.perf_counter() - t0) * 1000)
    figure("bwrap echo (peer) p50", "%.0f" % pct(t, 50), "ms")


def main():
    d = tempfile.mkdtemp(prefix="sbx-bd-")
    sock = d + "/r.sock"
    log = open(d + "/runner.log", "w")
    p = subprocess.Popen([RUNNER, "--socket", sock, "--state-dir", d + "/state", "--image-dir",
                          IMAGE_DIR, "--name", "bdrv", "--agent", AGENT,
                          "--max-memory-mb", str(1 << 30)], stdout=log, stderr=log)
    try:
        cap = None
        for _ in range(300):
            if os.path.exists(sock):
                try:
                    cap = rc.request(sock, {"op": "capabilities"}, 10)["capabilities"]
                    break
                except OSError:
                    pass
            time.sleep(0.02)
        if not cap:
            print("runner did not start")
            return 1
        res = {}
        for x in cap["isolation"]:
            if not x["available"]:
                print("SKIP: %s figures: %s" % (x["name"], x["reason"]))
                continue
            bench_driver(sock, x["name"], res)
        bwrap()
        if "jail" in res and "gvisor" in res:
            figure("gvisor/jail streaming throughput", "%.2f" % (res["gvisor"] / res["jail"]), "x")
        return 0
    finally:
        p.terminate()
        try:
            p.wait(60)
        except subprocess.TimeoutExpired:
            p.kill()
        log.close()


sys.exit(main())
