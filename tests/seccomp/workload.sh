#!/bin/bash
# The workload corpus of SECURITY.md "How to validate", one item per call:
#   workload.sh NAME      exit 0 when the item works
# Run by tests/seccomp/run.sh inside the image's chroot under the policy
# (or on the host for the items that need nothing from the image). Every
# fixture is made here, offline; every wait is bounded.
set -euo pipefail
export HOME=${HOME:-/root}
W=$(mktemp -d /tmp/wl.XXXXXX)
cd "$W"

# Poll url until it answers (at most ~30 s, a bound against a hang: the
# server's start is python's, which a busy machine can stretch past the
# former 5 s), then print the body.
fetch() { # url
	local _
	for _ in $(seq 1 300); do
		if curl -fsS --max-time 2 "$1"; then return 0; fi
		sleep 0.1
	done
	return 1
}

case "${1:?item}" in
python_threads)
	# From a file: the spawn start method re-imports __main__ by path.
	cat >mp.py <<'EOF'
import concurrent.futures, multiprocessing, threading
if __name__ == "__main__":
    out = []
    ts = [threading.Thread(target=out.append, args=(i,)) for i in range(8)]
    [t.start() for t in ts]; [t.join() for t in ts]
    assert sorted(out) == list(range(8)), out
    with multiprocessing.Pool(2) as p:
        assert p.map(abs, [-1, -2, -3]) == [1, 2, 3]
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=ctx) as ex:
        assert list(ex.map(pow, [2, 3], [3, 2])) == [8, 9]
    q = multiprocessing.Queue(); pr = multiprocessing.Process(target=q.put, args=(42,))
    pr.start(); assert q.get(timeout=10) == 42; pr.join()
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        assert sum(ex.map(len, ["ab", "c"])) == 3
    print("ok")
EOF
	python3 mp.py
	;;
seccomp_inherited)
	# Every thread and a double-forked daemon carry both filters.
	python3 - <<'EOF'
import os, threading, time
def status(path):
    d = dict(l.split(":", 1) for l in open(path).read().splitlines() if ":" in l)
    return d["Seccomp"].strip(), d["Seccomp_filters"].strip(), d["NoNewPrivs"].strip()
res = []
t = threading.Thread(target=lambda: res.append(status("/proc/thread-self/status")))
t.start(); t.join()
assert res[0] == ("2", "2", "1"), res
r, w = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.write(w, ("%s %s %s" % status("/proc/self/status")).encode()); os._exit(0)
    os._exit(0)
os.close(w)
got = os.read(r, 100).decode()
assert got == "2 2 1", got
print("ok")
EOF
	;;
pip_wheel)
	# A wheel made by hand (zip + dist-info) installed into a venv, offline.
	python3 - <<'EOF'
import base64, hashlib, zipfile
files = {
    "sbxdemo/__init__.py": "VALUE = 41 + 1\n",
    "sbxdemo-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: sbxdemo\nVersion: 1.0\n",
    "sbxdemo-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
rec = []
for n, c in files.items():
    d = base64.urlsafe_b64encode(hashlib.sha256(c.encode()).digest()).rstrip(b"=").decode()
    rec.append("%s,sha256=%s,%d" % (n, d, len(c)))
rec.append("sbxdemo-1.0.dist-info/RECORD,,")
files["sbxdemo-1.0.dist-info/RECORD"] = "\n".join(rec) + "\n"
with zipfile.ZipFile("sbxdemo-1.0-py3-none-any.whl", "w") as z:
    for n, c in files.items():
        z.writestr(n, c)
EOF
	python3 -m venv venv
	venv/bin/pip install --no-index --disable-pip-version-check -q ./sbxdemo-1.0-py3-none-any.whl
	venv/bin/python -c 'import sbxdemo; assert sbxdemo.VALUE == 42'
	echo ok
	;;
pip_build)
	# pip builds a wheel from a local source tree (setuptools, no network).
	mkdir -p src/sbxbuilt
	echo 'VALUE = 7' >src/sbxbuilt/__init__.py
	cat >src/setup.py <<'EOF'
from setuptools import setup
setup(name="sbxbuilt", version="0.1", packages=["sbxbuilt"])
EOF
	python3 -m pip wheel --no-deps --no-index --no-build-isolation -q -w dist ./src
	python3 -m venv venv
	venv/bin/pip install --no-index -q dist/sbxbuilt-0.1-*.whl
	venv/bin/python -c 'import sbxbuilt; assert sbxbuilt.VALUE == 7'
	echo ok
	;;
npm_local)
	# A file: dependency (symlinked) and a packed tarball (extracted).
	mkdir -p dep app tar
	cat >dep/package.json <<'EOF'
{ "name": "sbx-dep", "version": "1.0.0", "main": "index.js" }
EOF
	echo 'module.exports = () => 42;' >dep/index.js
	cat >app/package.json <<'EOF'
{ "name": "sbx-app", "version": "1.0.0", "dependencies": { "sbx-dep": "file:../dep" } }
EOF
	(cd app && npm install --offline --no-audit --no-fund --loglevel=error)
	(cd app && node -e 'if (require("sbx-dep")() !== 42) process.exit(1)')
	(cd dep && npm pack --loglevel=error >/dev/null)
	cat >tar/package.json <<'EOF'
{ "name": "sbx-tar", "version": "1.0.0" }
EOF
	(cd tar && npm install --offline --no-audit --no-fund --loglevel=error ../dep/sbx-dep-1.0.0.tgz)
	(cd tar && node -e 'if (require("sbx-dep")() !== 42) process.exit(1)')
	echo ok
	;;
git_local)
	git config --global user.email t@example.invalid
	git config --global user.name t
	git config --global init.defaultBranch main
	git init -q repo
	echo hello >repo/a.txt
	git -C repo add a.txt
	git -C repo commit -qm first
	git clone -q repo clone
	echo more >>clone/a.txt
	git -C clone commit -qam second
	git -C clone push -q origin HEAD:side
	[ "$(git -C repo log --oneline side | wc -l)" = 2 ]
	git -C repo gc -q
	echo ok
	;;
node_http)
	# A node server on 127.0.0.1 and ::1, fetched by node itself, and an
	# fs.watch event like a dev server's reload.
	node - <<'EOF'
const http = require("http"), fs = require("fs"), os = require("os"), path = require("path");
const die = (m) => { console.error(m); process.exit(1); };
setTimeout(() => die("timeout"), 10000).unref();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "w"));
const watcher = fs.watch(dir, () => { watcher.close(); serve(); });
fs.writeFileSync(path.join(dir, "x.js"), "1");
function serve() {
  let left = 2;
  for (const host of ["127.0.0.1", "::1"]) {
    const srv = http.createServer((q, s) => s.end("hi " + host));
    srv.listen(0, host, () => {
      http.get({ host, port: srv.address().port, path: "/" }, (res) => {
        let b = ""; res.on("data", (d) => (b += d));
        res.on("end", () => {
          if (b !== "hi " + host) die("bad body " + b);
          srv.close(); if (--left === 0) { console.log("ok"); process.exit(0); }
        });
      }).on("error", (e) => die(String(e)));
    });
  }
}
EOF
	;;
python_http)
	# python3 -m http.server on each address family, fetched with curl.
	echo served >index.txt
	port=18080
	for bind in 127.0.0.1 ::1 0.0.0.0 ::; do
		port=$((port + 1))
		python3 -m http.server --bind "$bind" "$port" >/dev/null 2>&1 &
		pid=$!
		case $bind in ::1 | ::) url="http://[::1]:$port/index.txt" ;; *) url="http://127.0.0.1:$port/index.txt" ;; esac
		body=$(fetch "$url") || { kill $pid; echo "no answer on $bind"; exit 1; }
		kill $pid; wait $pid 2>/dev/null || true
		[ "$body" = served ] || { echo "bad body on $bind: $body"; exit 1; }
	done
	echo ok
	;;
shell_tools)
	# Everyday tools: coreutils, ps (reads /proc), sort, tar, sh pipelines.
	bash -c 'echo a b c | tr " " "\n" | sort -r | head -1' | grep -qx c
	ps -e -o pid,comm >/dev/null
	tar czf t.tgz /etc/hostname /etc/passwd 2>/dev/null || tar czf t.tgz /etc/passwd
	tar tzf t.tgz | grep -q passwd
	dd if=/dev/zero of=z bs=1M count=4 status=none
	[ "$(stat -c %s z)" = 4194304 ]
	python3 -c 'import ssl, sqlite3, hashlib; sqlite3.connect(":memory:").execute("select 1")'
	echo ok
	;;
unshare_refused)
	# The userns escape hatch is closed, with a clear message.
	if out=$(unshare -Ur true 2>&1); then echo "unshare -Ur succeeded"; exit 1; fi
	echo "$out" | grep -q "Operation not permitted" || { echo "$out"; exit 1; }
	if out=$(unshare -m true 2>&1); then echo "unshare -m succeeded"; exit 1; fi
	echo ok
	;;
*)
	echo "unknown item $1" >&2
	exit 2
	;;
esac
rm -rf "$W"
