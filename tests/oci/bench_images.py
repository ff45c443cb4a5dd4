"""Image benchmark (bench/images.sh), in one run:
1. import time and disk per image: two images built by tests/oci/mkimage.py
   (busybox-static as their base layer, a file of each one's own above it)
   imported with `sandbox-runner image import` into a store of the run's
   own; the disk each adds (du, hardlinks counted once);
2. two images sharing a base store it once: the layer directories of the
   store, and the base's file one inode in both rootfs;
3. create-to-ready from the imported image against the default image, in
   the same run, alternating (a busy host's drift hits both alike), the
   runner's create reply coming once the agent answers; the ratio's goal
   is 1.1. And the machine's load while it ran.
Prints "figure: <name>|<value>|<unit>|<goal or ->" lines.

Usage: bench_images.py RUNNER IMAGE-STORE"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "runner"))
import rnclient as rc  # noqa: E402

RUNNER, STORE = sys.argv[1], sys.argv[2]
N = int(os.environ.get("BENCH_IMAGES_N", "20"))
MK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mkimage.py")


def figure(name, value, unit, goal="-"):
    print("figure: %s|%s|%s|%s" % (name, value, unit, goal))
    sys.stdout.flush()


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def du(path):
    """Bytes on disk under path, each hardlinked inode once, links not followed."""
    out = subprocess.run(["du", "-s", "-B1", path], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0])


def create(sock, image):
    t0 = time.perf_counter()
    rep = rc.request(sock, {"op": "create", "image": image, "timeout_ms": 600000}, 60)
    ms = (time.perf_counter() - t0) * 1000
    if not rep.get("ok"):
        raise RuntimeError("create %s: %s" % (image, rep))
    rc.request(sock, {"op": "stop", "id": rep["sandbox"]["id"]}, 60)
    return ms


def main():
    d = tempfile.mkdtemp(prefix="bench-images.")
    images = d + "/images"
    os.mkdir(images)
    os.symlink(STORE + "/default", images + "/default")   # the store is only read
    load0 = os.getloadavg()[0]
    try:
        base = du(images)
        added, took = {}, {}
        for name in ("one", "two"):
            tar = "%s/%s.tar" % (d, name)
            subprocess.run([sys.executable, MK, "good", tar, "the image called " + name], check=True)
            t0 = time.perf_counter()
            subprocess.run([RUNNER, "image", "import", tar, name, "--image-dir", images], check=True,
                           stdout=subprocess.DEVNULL)
            took[name] = (time.perf_counter() - t0) * 1000
            now = du(images)
            added[name], base = now - base, now
        print("import: %.0f ms and %.0f KiB for the first image; %.0f ms and %.0f KiB for the "
              "second, whose base is stored already" %
              (took["one"], added["one"] / 1024, took["two"], added["two"] / 1024))
        figure("image import time, first image (busybox base + 1 layer)", "%.0f" % took["one"], "ms")
        figure("image import time, second image (base shared)", "%.0f" % took["two"], "ms")
        figure("image disk, first image", "%.0f" % (added["one"] / 1024), "KiB")
        figure("image disk, second image sharing the base", "%.0f" % (added["two"] / 1024), "KiB")
        figure("image disk second / first (the base once)", "%.2f" % (added["two"] / added["one"]),
               "ratio", "< 0.5")
        layers = sorted(os.listdir(images + "/.layers/sha256"))
        named = set()
        for name in ("one", "two"):
            with open("%s/%s/config.json" % (images, name)) as f:
                named.update(x[7:] for x in json.load(f)["layers"])
        same = (os.stat(images + "/one/rootfs/bin/busybox").st_ino ==
                os.stat(images + "/two/rootfs/bin/busybox").st_ino)
        print("layer store: %d directories for 4 layers named (%d distinct); the base's busybox "
              "one inode in both rootfs: %s" % (len(layers), len(named), same))
        figure("layer dirs stored for two images sharing a base (4 layers)", len(layers), "dirs", "<= 3")

        sock = d + "/runner.sock"
        log = open(d + "/runner.log", "w")
        p = subprocess.Popen([RUNNER, "--socket", sock, "--state-dir", d + "/state", "--image-dir",
                              images, "--name", "bimg", "--max-memory-mb", str(1 << 30)],
                             stdout=log, stderr=log)
        try:
            for _ in range(500):
                if os.path.exists(sock):
                    break
                time.sleep(0.02)
            create(sock, "default")   # warm both: the first create pays for caches
            create(sock, "one")
            ready = {"default": [], "one": []}
            for _ in range(N):
                for img in ("default", "one"):
                    ready[img].append(create(sock, img))
        finally:
            p.terminate()
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()
        a, b = pct(ready["default"], 50), pct(ready["one"], 50)
        load1 = os.getloadavg()[0]
        print("create-to-ready p50 (jail, %d each, alternating): default %.0f ms, imported %.0f ms, "
              "ratio %.2f; load average %.2f before, %.2f after, on %d CPUs" %
              (N, a, b, b / a, load0, load1, os.cpu_count()))
        figure("create-to-ready p50, default image", "%.0f" % a, "ms")
        figure("create-to-ready p50, imported OCI image", "%.0f" % b, "ms")
        figure("create-to-ready imported / default", "%.2f" % (b / a), "ratio", "<= 1.1")
        figure("load average (1 min) during the image bench", "%.2f" % load1, "load")
    finally:
        shutil.rmtree(d, ignore_errors=True)


main()
