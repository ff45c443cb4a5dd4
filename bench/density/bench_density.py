"""Density: one runner and one gateway, COUNT sandboxes of memory_mb MB
created PARALLEL at a time through the REST API, then the figures of issue
26 with all of them up: create p50/p99 per hundred, host memory per idle
sandbox (the sandboxes' cgroups, and the host's MemAvailable), /healthz
p99, an `echo` command's p50/p99 in random sandboxes, the paged list's
time, the runner's and gateway's RSS and CPU while idle, the time to
delete them all, and what is left (cgroups, mounts, uid slots, state dirs).

Usage: bench_density.py RUNNER GATEWAY ISOLATION COUNT [GOALS 0|1]
Prints "figure: name|value|unit|goal" lines (bench/run.sh's format)."""
import http.client
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

RUNNER, GATEWAY, ISO, COUNT = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
GOALS = len(sys.argv) > 5 and sys.argv[5] == "1"
MEMORY_MB, PARALLEL, KEY = 256, 8, "density-key"
IMAGE_DIR = os.environ.get("SANDBOX_IMAGE_DIR", "/var/cache/sandbox/images")
NAME = "dens%d" % (os.getpid() % 100000)
procs = []


def figure(name, value, unit, goal="-"):
    print("figure: %s %s|%s|%s|%s" % (ISO, name, value, unit, goal))
    sys.stdout.flush()


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))] if xs else float("nan")


def meminfo(key):
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) << 10
    return 0


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Api:
    """One keep-alive connection per thread."""
    def __init__(self, port):
        self.port = port
        self.local = threading.local()

    def req(self, method, path, body=None, timeout=120):
        for attempt in range(2):
            c = getattr(self.local, "c", None)
            if c is None:
                c = self.local.c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
            try:
                hdr = {"Authorization": "Bearer " + KEY}
                data = None
                if body is not None:
                    data = json.dumps(body).encode()
                    hdr["Content-Type"] = "application/json"
                c.request(method, path, data, hdr)
                r = c.getresponse()
                raw = r.read()
                return r.status, (json.loads(raw) if raw and raw[:1] in b"{[" else raw)
            except (OSError, http.client.HTTPException):
                c.close()
                self.local.c = None
                if attempt:
                    raise
        return 0, None


def run_parallel(items, fn):
    out, lock, it = [], threading.Lock(), iter(list(enumerate(items)))

    def worker():
        while True:
            with lock:
                nxt = next(it, None)
            if nxt is None:
                return
            res = fn(*nxt)
            with lock:
                out.append(res)
    ts = [threading.Thread(target=worker) for _ in range(PARALLEL)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return out


def leftovers(state, runner_pid):
    left = []
    prefix = "sbx_%s_" % NAME
    for root, dirs, _ in os.walk("/sys/fs/cgroup"):
        for d in dirs:
            if d.startswith(prefix):
                left.append("cgroup " + os.path.join(root, d))
        if root.count("/") > 6:
            dirs[:] = []
    with open("/proc/self/mountinfo") as f:
        left += ["mount " + l.split()[4] for l in f if prefix in l or state in l]
    sbx = os.path.join(state, "sandboxes")
    if os.path.isdir(sbx):
        left += ["state dir " + d for d in os.listdir(sbx)]
    fds = "/proc/%d/fd" % runner_pid
    if os.path.isdir(fds):
        for fd in os.listdir(fds):
            try:
                if os.readlink(os.path.join(fds, fd)).startswith("/run/sandbox/slots/"):
                    left.append("uid slot held (fd %s)" % fd)
            except OSError:
                pass
    return left


def main():
    tmp = tempfile.mkdtemp(prefix="sbx-density-")
    sock, state = tmp + "/r.sock", tmp + "/state"
    log = open(tmp + "/log", "ab")
    load0 = os.getloadavg()
    # the limits of COUNT sandboxes under F x RAM, with room to spare
    ram_mb = meminfo("MemTotal") >> 20
    over = max(1.0, min(1000.0, (COUNT * MEMORY_MB * 1.1) / ram_mb))
    rn = subprocess.Popen([RUNNER, "--socket", sock, "--state-dir", state, "--image-dir", IMAGE_DIR,
                           "--name", NAME, "--default-isolation", ISO,
                           "--memory-overcommit", "%.1f" % over], stdout=log, stderr=log)
    procs.append(rn)
    for _ in range(300):
        if os.path.exists(sock):
            break
        time.sleep(0.05)
    port = free_port()
    gw = subprocess.Popen([GATEWAY, "--runner-socket", sock, "--port", str(port),
                           "--max-sandboxes-per-key", str(COUNT + 100)],
                          env=dict(os.environ, SANDBOX_API_KEYS=KEY), stdout=log, stderr=log)
    procs.append(gw)
    api = Api(port)
    for _ in range(300):
        try:
            if api.req("GET", "/healthz", timeout=2)[0] == 200:
                break
        except OSError:
            pass
        time.sleep(0.1)
    print("density %s: %d sandboxes of memory_mb %d, %d at a time, --memory-overcommit %.1f "
          "(RAM %d MiB); load before %.2f %.2f %.2f" % (ISO, COUNT, MEMORY_MB, PARALLEL, over,
                                                        ram_mb, *load0))
    time.sleep(2)
    avail0 = meminfo("MemAvailable")
    t0 = time.time()

    retries = [0]

    def create(i, _):
        # a runner too busy to answer its status in time is 503
        # runner_unavailable: a client tries again (counted), never past 3
        for attempt in range(4):
            t = time.time()
            st, d = api.req("POST", "/v1/sandboxes", {"memory_mb": MEMORY_MB, "timeout_ms": 3600000})
            if st != 503 or (d or {}).get("error", {}).get("code") != "runner_unavailable" or attempt == 3:
                return i, (time.time() - t) * 1000, st, d
            retries[0] += 1
            time.sleep(1)
    made = sorted(run_parallel(range(COUNT), create))
    create_s = time.time() - t0
    ok = [d["id"] for _, _, st, d in made if st == 201]
    errors = {}
    for _, _, st, d in made:
        if st != 201:
            k = "%s %s" % (st, (d or {}).get("error", {}).get("message", d) if isinstance(d, dict) else d)
            errors[k[:160]] = errors.get(k[:160], 0) + 1
    print("created %d of %d in %.1f s (%d tries again after 503 runner_unavailable)%s" %
          (len(ok), COUNT, create_s, retries[0], "; refused: %s" % errors if errors else ""))
    for h in range(0, COUNT, 100):
        lat = [ms for i, ms, st, _ in made if h <= i < h + 100 and st == 201]
        print("  creates %4d-%4d: p50 %.1f ms, p99 %.1f ms" % (h + 1, h + 100, pct(lat, 0.5), pct(lat, 0.99)))
    lat = [ms for _, ms, st, _ in made if st == 201]
    figure("density: admitted", len(ok), "n", ">= %d" % COUNT if GOALS else "-")
    figure("density: create p50", "%.1f" % pct(lat, 0.5), "ms")
    figure("density: create p99", "%.1f" % pct(lat, 0.99), "ms")
    time.sleep(10)
    avail1 = meminfo("MemAvailable")
    cg_bytes = 0
    for sid in ok:
        for base in ("/sys/fs/cgroup/memory/sandbox", "/sys/fs/cgroup/memory/sandbox/gvisor_" + NAME,
                     "/sys/fs/cgroup/sandbox", "/sys/fs/cgroup/sandbox/gvisor_" + NAME):
            for f in ("memory.usage_in_bytes", "memory.current"):
                p = "%s/%s/%s" % (base, sid, f)
                if os.path.exists(p):
                    with open(p) as fh:
                        cg_bytes += int(fh.read())
    n = max(1, len(ok))
    print("host memory per idle sandbox: %.2f MiB by their cgroups, %.2f MiB by MemAvailable "
          "(%d -> %d MiB; other work on the host moves it)" % (cg_bytes / n / 1048576.0,
          (avail0 - avail1) / n / 1048576.0, avail0 >> 20, avail1 >> 20))
    figure("density: memory per idle sandbox (cgroup)", "%.2f" % (cg_bytes / n / 1048576.0), "MiB")
    figure("density: memory per idle sandbox (MemAvailable)", "%.2f" % ((avail0 - avail1) / n / 1048576.0), "MiB")
    # idle: 10 s of nothing
    c0 = (cpu_ticks(rn.pid), cpu_ticks(gw.pid))
    time.sleep(10)
    c1 = (cpu_ticks(rn.pid), cpu_ticks(gw.pid))
    hz = os.sysconf("SC_CLK_TCK")
    for who, pid, i in (("runner", rn.pid, 0), ("gateway", gw.pid, 1)):
        cpu = (c1[i] - c0[i]) * 100.0 / hz / 10
        print("%s idle with %d up: RSS %.1f MiB, CPU %.2f %%" % (who, len(ok), rss_mib(pid), cpu))
        figure("density: %s RSS idle" % who, "%.1f" % rss_mib(pid), "MiB")
        figure("density: %s CPU idle" % who, "%.2f" % cpu, "%")
    hz_lat = []
    for _ in range(300):
        t = time.time()
        api.req("GET", "/healthz")
        hz_lat.append((time.time() - t) * 1000)
    print("/healthz with %d up: p50 %.2f ms, p99 %.2f ms" % (len(ok), pct(hz_lat, 0.5), pct(hz_lat, 0.99)))
    figure("density: /healthz p99", "%.2f" % pct(hz_lat, 0.99), "ms", "< 50" if GOALS else "-")
    rnd = random.Random(26)
    ex_lat, ex_bad = [], 0
    for _ in range(200 if ok else 0):
        sid = rnd.choice(ok)
        t = time.time()
        st, d = api.req("POST", "/v1/sandboxes/%s/commands" % sid, {"cmd": "echo", "args": ["hi"]})
        ex_lat.append((time.time() - t) * 1000)
        if st != 200 or (d or {}).get("stdout") != "hi\n":
            ex_bad += 1
    print("echo in random sandboxes: p50 %.1f ms, p99 %.1f ms, %d wrong" % (pct(ex_lat, 0.5), pct(ex_lat, 0.99), ex_bad))
    figure("density: echo p50", "%.1f" % pct(ex_lat, 0.5), "ms")
    figure("density: echo p99", "%.1f" % pct(ex_lat, 0.99), "ms", "< 100" if GOALS else "-")
    figure("density: echo wrong", ex_bad, "n", "< 1" if GOALS else "-")
    t = time.time()
    seen, cursor, pages = 0, None, 0
    while pages < 100:
        st, d = api.req("GET", "/v1/sandboxes?limit=1000" + ("&cursor=" + cursor if cursor else ""))
        if st != 200:
            break
        seen += len(d.get("sandboxes", []))
        pages += 1
        cursor = d.get("next_cursor")
        if not cursor:
            break
    list_ms = (time.time() - t) * 1000
    print("list: %d sandboxes in %d page(s), %.1f ms" % (seen, pages, list_ms))
    figure("density: list all", "%.1f" % list_ms, "ms")
    load1 = os.getloadavg()
    t = time.time()

    def delete(i, sid):
        for attempt in range(60):
            st, _ = api.req("DELETE", "/v1/sandboxes/" + sid)
            if st in (200, 204, 404) or st != 503:
                return st, attempt
            time.sleep(1)
        return st, attempt
    dels = run_parallel(ok, delete)
    del_s = time.time() - t
    bad = [st for st, _ in dels if st not in (200, 204)]
    print("deleted %d in %.1f s (%d answered 503 first and were tried again; %d not deleted)" %
          (len(ok), del_s, sum(1 for _, a in dels if a), len(bad)))
    figure("density: delete all", "%.1f" % del_s, "s")
    t = time.time()
    left = leftovers(state, rn.pid)
    while left and time.time() - t < 30:
        time.sleep(0.5)
        left = leftovers(state, rn.pid)
    print("left after deleting: %s (looked for %.1f s)" % (left[:10] or "nothing", time.time() - t))
    figure("density: left after delete", len(left) + len(bad), "n", "< 1" if GOALS else "-")
    print("load during: %.2f %.2f %.2f (after the creates), %.2f now" % (*load1, os.getloadavg()[0]))
    for p in (gw, rn):
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
    if not left:
        subprocess.run(["rm", "-rf", tmp])


try:
    main()
finally:
    for p in procs:
        if p.poll() is None:
            p.kill()
