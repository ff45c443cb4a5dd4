"""Snapshot benchmark (bench/snapshots.sh), under each isolation this host
offers (jail, gvisor): snapshot time and disk against the writable layer's size, create-from-snapshot against a plain create in
the same run, a fork of 10 (a snapshot and 10 creates from it), pause and
resume of a sandbox holding 256 MiB (gvisor: to disk, and the checkpoint's
size). Runs its own runner on a temp state
dir; prints figure lines for bench/run.sh's table."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "runner"))
import rnclient  # noqa: E402


def figure(name, value, unit, goal="-"):
    print("figure: %s|%s|%s|%s" % (name, value, unit, goal))


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * p / 100))]


def timed(fn):
    t = time.monotonic()
    r = fn()
    return (time.monotonic() - t) * 1000, r


def du(path):
    out = subprocess.run(["du", "-sb", path], capture_output=True, text=True).stdout
    return int(out.split()[0]) if out else 0


def snapshot_figures(sock, state, req, create, made, iso):
    """Snapshot time and disk for 10 and 200 MiB layers, plain create
    against create from a snapshot (alternating), fork x10: under iso."""
    for mb in (10, 200):
        sid = create({"isolation": iso})
        rnclient.shell(sock, sid, "head -c %d /dev/urandom > big.bin" % (mb << 20), timeout=300)
        times, snap = [], None
        for _ in range(3):
            ms, r = timed(lambda: req({"op": "snapshot", "id": sid, "owner": "bench"}))
            assert r.get("ok"), r
            times.append(ms)
            snap = r["snapshot"]["id"]
        print("%s snapshot of a %d MiB writable layer: %s ms" % (iso, mb, ", ".join("%.0f" % t for t in times)))
        figure("%s snapshot, %d MiB layer (median of 3)" % (iso, mb), "%.0f" % pct(times, 50), "ms")
        figure("%s disk per snapshot, %d MiB layer" % (iso, mb), "%.1f" % (du(os.path.join(state, "snapshots", snap)) / 2**20), "MiB")
        req({"op": "stop", "id": sid})

    base = create({"isolation": iso})
    rnclient.shell(sock, base, "mkdir -p app && head -c 1048576 /dev/urandom > app/blob")
    snap = req({"op": "snapshot", "id": base, "owner": "bench"})["snapshot"]["id"]
    plain, fromsnap = [], []
    for i in range(20):  # alternating, so both see the same machine
        ms, _ = timed(lambda: create({"isolation": iso}))
        plain.append(ms)
        ms, _ = timed(lambda: create({"isolation": iso, "snapshot": snap}))
        fromsnap.append(ms)
        for sid in made[-2:]:
            req({"op": "stop", "id": sid})
    figure("%s plain create p50" % iso, "%.1f" % pct(plain, 50), "ms")
    figure("%s create from a snapshot p50" % iso, "%.1f" % pct(fromsnap, 50), "ms")
    figure("%s create from snapshot / plain create p50" % iso, "%.2f" % (pct(fromsnap, 50) / pct(plain, 50)), "ratio", "< 1.2")

    def fork10():
        s = req({"op": "snapshot", "id": base, "owner": "bench"})["snapshot"]["id"]
        return [create({"isolation": iso, "snapshot": s}) for _ in range(10)]
    ms, ids = timed(fork10)
    figure("%s fork x10 (a snapshot and 10 creates, runner)" % iso, "%.0f" % ms, "ms")
    for sid in ids + [base]:
        req({"op": "stop", "id": sid})


def main():
    runner, image_dir = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="sbx-snapbench.")
    sock, state = os.path.join(tmp, "r.sock"), os.path.join(tmp, "state")
    name = "snb%d" % (os.getpid() % 100000)
    log = open(os.path.join(tmp, "runner.log"), "w")
    p = subprocess.Popen([runner, "--name", name, "--socket", sock, "--state-dir", state,
                          "--image-dir", image_dir, "--max-snapshot-mb", "8192"],
                         stdout=log, stderr=log)
    try:
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.1)
        req = lambda o, t=300: rnclient.request(sock, o, timeout=t)  # noqa: E731
        made = []

        def create(extra=None):
            o = {"op": "create", "owner": "bench", "timeout_ms": 600000, "disk_mb": 1024}
            o.update(extra or {})
            r = req(o)
            assert r.get("ok"), r
            made.append(r["sandbox"]["id"])
            return r["sandbox"]["id"]

        def available(iso):
            caps = req({"op": "capabilities"})["capabilities"]["isolation"]
            if any(c["name"] == iso and c["available"] for c in caps):
                return True
            print("SKIP: %s is not available here" % iso)
            return False

        for iso in ("jail", "gvisor"):
            if available(iso):
                snapshot_figures(sock, state, req, create, made, iso)

        for iso in ("jail", "gvisor"):
            if not available(iso):
                continue
            sid = create({"isolation": iso, "memory_mb": 512})
            # 256 MiB of random bytes (no compression makes a checkpoint
            # of them smaller), held by a process that says when it has them
            rnclient.shell(sock, sid, "python3 -c 'import os, time; b = os.urandom(256 << 20); "
                           "open(\"/tmp/held\", \"w\").close(); time.sleep(3600)' >/dev/null 2>&1 & "
                           "while [ ! -e /tmp/held ]; do sleep 0.1; done", timeout=300)
            pt, _ = timed(lambda: req({"op": "pause", "id": sid}))
            ckpt = os.path.join(state, "sandboxes", sid, "checkpoint")
            held = du(ckpt) if os.path.isdir(ckpt) else 0
            rt, _ = timed(lambda: req({"op": "resume", "id": sid}))
            figure("%s pause, 256 MiB held" % iso, "%.0f" % pt, "ms")
            figure("%s resume, 256 MiB held" % iso, "%.0f" % rt, "ms")
            if iso == "gvisor":
                figure("gvisor checkpoint on disk, 256 MiB held", "%.1f" % (held / 2**20), "MiB")
        for sid in made:
            req({"op": "stop", "id": sid})
    finally:
        p.terminate()
        p.wait(30)
        shutil.rmtree(tmp, ignore_errors=True)


main()
