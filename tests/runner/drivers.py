"""Prints one line per driver the runner knows: "NAME available" or
"NAME unavailable: REASON" (the runner's own probe, through its
`capabilities` op). tests/run.sh runs the sandbox-level suites once per
available driver.

Usage: drivers.py RUNNER AGENT"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rnclient as rc  # noqa: E402


def main():
    runner, agent = sys.argv[1], sys.argv[2]
    d = tempfile.mkdtemp(prefix="sbx-drv-")
    sock = d + "/r.sock"
    p = subprocess.Popen([runner, "--socket", sock, "--state-dir", d + "/state",
                          "--image-dir", os.environ.get("SANDBOX_IMAGE_DIR",
                                                        "/var/cache/sandbox/images"),
                          "--name", "drv%d" % os.getpid(), "--agent", agent],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # (30 s: the runner probes its drivers and reconciles before it
        # listens; 300 tries of 0.02 s were some 6 s, and a miss left the
        # other drivers' suite runs out)
        end = time.time() + 30
        while time.time() < end and p.poll() is None:
            if os.path.exists(sock):
                try:
                    cap = rc.request(sock, {"op": "capabilities"}, 10)
                    break
                except (OSError, EOFError):
                    pass
            time.sleep(0.02)
        else:
            print("jail unavailable: the runner did not start")
            return 1
        for x in cap["capabilities"]["isolation"]:
            if x.get("available"):
                print("%s available" % x["name"])
            else:
                print("%s unavailable: %s" % (x["name"], x.get("reason") or "?"))
        return 0
    finally:
        p.terminate()
        p.wait(30)
        shutil.rmtree(d, ignore_errors=True)


sys.exit(main())
