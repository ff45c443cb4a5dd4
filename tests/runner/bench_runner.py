"""Benchmark of sandbox-runner's jail driver (run by bench/runner.sh).

Usage: bench_runner.py RUNNER AGENT KIND   (KIND: agent | shell)
1. create-to-ready and create-to-first-output of `echo hi`, p50/p99 over
   N sandboxes (created and stopped one at a time), against bwrap running
   the same command on the same image in comparable namespaces;
2. density: D idle sandboxes at once, host memory per sandbox."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rnclient as rc  # noqa: E402

RUNNER, AGENT, KIND = sys.argv[1], sys.argv[2], sys.argv[3]
N = int(os.environ.get("BENCH_N", "100"))
D = int(os.environ.get("BENCH_DENSITY", "200"))
IMAGE_DIR = os.environ.get("SANDBOX_IMAGE_DIR", "/var/cache/sandbox/images")
ROOTFS = IMAGE_DIR + "/default/rootfs"


def figure(name, value, unit, goal="-"):
    """A figure line for bench/run.sh's closing table."""
    print("figure: %s|%s|%s|%s" % (name, value, unit, goal))


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def first_output(sock, sid):
    if KIND == "shell":
        s, rep = rc.connect(sock, sid, 1024)
        s.sendall(b"echo hi\n")
        buf = b""
        while b"hi" not in buf:
            d = s.recv(4096)
            if not d:
                break
            buf += d
        s.close()
        return b"hi" in buf
    s, rep = rc.connect(sock, sid, 1024)
    rc.send_frame(s, {"op": "exec", "cmd": "echo", "args": ["hi"], "uid": 1000, "gid": 1000,
                      "attach": True})
    rc.recv_frame(s)
    while True:
        t, p = rc.recv_frame(s)
        if t == 1:
            s.close()
            return b"hi" in p


def meminfo():
    m = {}
    with open("/proc/meminfo") as f:
        for line in f:
            k, v = line.split(":")
            m[k] = int(v.split()[0]) * 1024
    return m["MemTotal"] - m["MemFree"] - m.get("Buffers", 0) - m.get("Cached", 0) + m.get("Shmem", 0)


def rss(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def start_runner(d, name, extra):
    sock = d + "/%s.sock" % name
    log = open(d + "/%s.log" % name, "w")
    p = subprocess.Popen([RUNNER, "--socket", sock, "--state-dir", d + "/" + name, "--image-dir",
                          IMAGE_DIR, "--name", name, "--agent", AGENT,
                          "--max-memory-mb", str(1 << 30)] + extra, stdout=log, stderr=log)
    for _ in range(300):
        if os.path.exists(sock):
            break
        time.sleep(0.01)
    return p, sock, log


def pool_full(sock):
    """Wait (up to 10 s) until the runner's warm pool is full again."""
    for _ in range(1000):
        st = rc.request(sock, {"op": "status"})["runner"]
        if st["warm_ready"] >= st["warm_pool"]:
            return
        time.sleep(0.01)


def one_create(sock):
    """(create-to-ready, create-to-first-output) in ms, or None."""
    t0 = time.perf_counter()
    rep = rc.request(sock, {"op": "create"})
    t1 = time.perf_counter()
    if not rep.get("ok"):
        print("create failed:", rep)
        return None
    ok = first_output(sock, rep["sandbox"]["id"])
    t2 = time.perf_counter()
    rc.request(sock, {"op": "stop", "id": rep["sandbox"]["id"]})
    if not ok:
        print("no output from sandbox")
        return None
    return (t1 - t0) * 1000, (t2 - t0) * 1000


def one_bwrap():
    t0 = time.perf_counter()
    out = subprocess.run(["bwrap", "--unshare-all", "--die-with-parent",
                          "--ro-bind", ROOTFS, "/", "--proc", "/proc", "--dev", "/dev",
                          "--tmpfs", "/tmp", "--uid", "1000", "--gid", "1000",
                          "echo", "hi"], capture_output=True)
    if out.stdout != b"hi\n":
        print("bwrap failed:", out)
        return None
    return (time.perf_counter() - t0) * 1000


def main():
    d = tempfile.mkdtemp(prefix="sbx-bench-")
    # the density run holds D idle sandboxes of the default 512 MiB at once:
    # far more memory_mb than admission allows on a small host, on purpose
    # (it measures what an idle sandbox really costs). Two runners: one
    # without a warm pool (every create cold), one with --warm-pool 2.
    p, sock, log = start_runner(d, "bench", [])
    pw, wsock, wlog = start_runner(d, "benchw", ["--warm-pool", "2"])
    try:
        time.sleep(0.1)
        # rounds interleaved (cold, warm, bwrap) so that the machine's load
        # weighs on the three alike; before a warm create the pool has
        # refilled (a create arriving faster than one refill, ~25 ms, finds
        # it short and goes cold: that is the cold figure)
        ready, first, warm, bw = [], [], [], []
        for i in range(N):
            r = one_create(sock)
            pool_full(wsock)
            w = one_create(wsock)
            b = one_bwrap()
            if r is None or w is None:
                return 1
            ready.append(r[0])
            first.append(r[1])
            warm.append(w[1])
            if b is not None:
                bw.append(b)
        print("jail create-to-ready      (%s agent, n=%d): p50 %.1f ms  p99 %.1f ms" %
              (KIND, N, pct(ready, 50), pct(ready, 99)))
        print("jail create-to-first-output of echo hi:      p50 %.1f ms  p99 %.1f ms" %
              (pct(first, 50), pct(first, 99)))
        print("  with a warm pool (--warm-pool 2, refilled): p50 %.1f ms  p99 %.1f ms" %
              (pct(warm, 50), pct(warm, 99)))
        figure("jail create-to-ready p50", "%.1f" % pct(ready, 50), "ms")
        figure("jail create-to-ready p99", "%.1f" % pct(ready, 99), "ms")
        figure("jail create-to-first-output p50", "%.1f" % pct(first, 50), "ms")
        figure("jail create-to-first-output p99", "%.1f" % pct(first, 99), "ms")
        figure("jail create-to-first-output, warm pool p50", "%.1f" % pct(warm, 50), "ms")
        figure("jail create-to-first-output, warm pool p99", "%.1f" % pct(warm, 99), "ms")
        if len(bw) == N:
            print("bwrap --unshare-all echo hi (peer, n=%d):     p50 %.1f ms  p99 %.1f ms" %
                  (N, pct(bw, 50), pct(bw, 99)))
            print("ratio jail first-output / bwrap: p50 %.2fx cold, %.2fx warm pool" %
                  (pct(first, 50) / pct(bw, 50), pct(warm, 50) / pct(bw, 50)))
            figure("bwrap echo hi p50 (peer)", "%.1f" % pct(bw, 50), "ms")
            figure("jail first-output / bwrap p50", "%.2f" % (pct(first, 50) / pct(bw, 50)), "ratio",
                   "<= 1")
            figure("jail first-output, warm pool / bwrap p50",
                   "%.2f" % (pct(warm, 50) / pct(bw, 50)), "ratio", "<= 1")
        pw.terminate()
        try:
            pw.wait(30)
        except subprocess.TimeoutExpired:
            pw.kill()
            pw.wait()
        # density
        time.sleep(0.5)
        base = meminfo()
        base_rss = rss(p.pid)
        ids = []
        t0 = time.perf_counter()
        for i in range(D):
            rep = rc.request(sock, {"op": "create"})
            if not rep.get("ok"):
                print("density: create %d failed: %s" % (i, rep))
                break
            ids.append(rep["sandbox"]["id"])
        t_create = time.perf_counter() - t0
        time.sleep(1.0)
        used = meminfo() - base
        cg = 0
        for sid in ids:
            try:
                with open("/sys/fs/cgroup/memory/sandbox/%s/memory.usage_in_bytes" % sid) as f:
                    cg += int(f.read())
            except OSError:
                pass
        n = max(1, len(ids))
        print("density: %d idle sandboxes created in %.2f s; host memory +%.1f MiB = %.2f MiB "
              "per sandbox (cgroup-charged %.2f MiB each; runner RSS +%.1f MiB)" %
              (len(ids), t_create, used / 2**20, used / n / 2**20, cg / n / 2**20,
               (rss(p.pid) - base_rss) / 2**20))
        figure("host memory per idle sandbox (%d)" % len(ids), "%.2f" % (used / n / 2**20), "MiB")
        for sid in ids:
            rc.request(sock, {"op": "stop", "id": sid})
        return 0
    finally:
        for q in (pw, p):
            if q.poll() is None:
                q.terminate()
        for q in (pw, p):
            try:
                q.wait(30)
            except subprocess.TimeoutExpired:
                q.kill()
                q.wait()
        wlog.close()
        log.close()
        # never delete through a mount a killed runner may have left
        with open("/proc/self/mountinfo") as f:
            if not any(line.split()[4].startswith(d + "/") for line in f):
                shutil.rmtree(d, ignore_errors=True)


sys.exit(main())
