"""The gateway's layers point one way (issue 21):

    lib < core < svc < http < {stream, api, proxy} < {mcp, vercel} < main

core: keys, owners, runners, upstreams; svc: the operations; http: the
transaction (struct gw_req, routing, responses); then the front ends; main
is the composition root (the files at the top of gateway/: main, flags,
the route rows, the embedded runner). A file may include and call only its
own layer and those below; peers do not call each other. Checked on the
includes of the sources and on the symbols the objects of build/release
use (nm).

What breaks the rule today is listed in tests/layers/debt.txt, one
"FROM TO SYMBOL-or-#include" a line: the restructuring of issue 21 removes
lines, and this check fails on a back-edge not listed (a new one) and on
a listed one that is gone (so the list only shrinks).

Also: lib includes nothing of the programs, and the gvisor driver includes
no jail file.

Usage: layers.py [--write-debt]     prints PASS/FAIL lines and the closing line."""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DEBT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "debt.txt")
RANK = {"lib": 0, "core": 1, "svc": 2, "http": 3, "proxy": 4, "stream": 4, "api": 4,
        "mcp": 5, "vercel": 5, "main": 6}

passed = failed = 0


def result(name, ok, detail=""):
    global passed, failed
    passed, failed = passed + ok, failed + (not ok)
    print("%s: %s%s" % ("PASS" if ok else "FAIL", name, (": " + detail) if detail and not ok else ""))


def layer_of(path):
    """The layer of a gateway source or object path."""
    m = re.search(r"gateway/([a-z]+)/", path)
    if m:
        return m.group(1)
    return "main" if re.search(r"gateway/[^/]+$", path) else None


def wrong(a, b):
    """1 when layer a may not use layer b."""
    return a != b and RANK[b] >= RANK[a]


def include_edges():
    out = set()
    for src in glob.glob(os.path.join(ROOT, "gateway/*/*.[ch]")) + glob.glob(os.path.join(ROOT, "gateway/*.[ch]")):
        a = layer_of(src)
        for inc in re.findall(r'#include "([^"]+)"', open(src).read()):
            tgt = os.path.normpath(os.path.join(os.path.dirname(src), inc))
            b = layer_of(tgt) if "/gateway/" in tgt else None
            if b and wrong(a, b):
                out.add("%s %s #include:%s" % (a, b, os.path.basename(tgt)))
    return out


def symbol_edges():
    objs = glob.glob(os.path.join(ROOT, "build/release/obj/gateway/*/*.o")) + \
        glob.glob(os.path.join(ROOT, "build/release/obj/gateway/*.o"))
    # an object whose source is gone (moved, deleted) is no part of the program
    objs = [o for o in objs if os.path.exists(
        o.replace(os.path.join("build", "release", "obj") + os.sep, "")[:-2] + ".c")]
    if not objs:
        return None
    defs, uses = {}, []
    for o in objs:
        a = layer_of(o)
        for line in subprocess.run(["nm", o], capture_output=True, text=True).stdout.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in "TDBR":
                defs[f[2]] = a
            elif len(f) == 2 and f[0] == "U":
                uses.append((a, f[1]))
    return {"%s %s %s" % (a, defs[s], s) for a, s in uses if s in defs and wrong(a, defs[s])}


def main():
    edges = include_edges()
    syms = symbol_edges()
    if syms is None:
        result("the gateway's objects are built (make)", False, "build/release/obj/gateway is empty")
    else:
        edges |= syms
    if "--write-debt" in sys.argv:
        with open(DEBT, "w") as f:
            f.write("# back-edges of the gateway's layers that remain (tests/layers/layers.py)\n")
            f.writelines(e + "\n" for e in sorted(edges))
        print("%d lines written" % len(edges))
        return
    debt = {l.strip() for l in open(DEBT) if l.strip() and not l.startswith("#")}
    new, gone = sorted(edges - debt), sorted(debt - edges)
    result("no new back-edge between the gateway's layers (%d listed as debt)" % len(debt),
           not new, "; ".join(new[:10]))
    result("every listed back-edge still exists (a fixed one leaves debt.txt)", not gone, "; ".join(gone[:10]))
    lib_bad = [s for s in glob.glob(os.path.join(ROOT, "lib/*.[ch]"))
               if re.search(r'#include "\.\./', open(s).read())]
    result("lib includes nothing of the programs", not lib_bad, " ".join(lib_bad))
    gv_bad = [s for s in glob.glob(os.path.join(ROOT, "runner/driver_gvisor*.[ch]"))
              if re.search(r'#include "driver_jail', open(s).read())]
    result("the gvisor driver includes no jail file", not gv_bad, " ".join(gv_bad))
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
