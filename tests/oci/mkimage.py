#!/usr/bin/env python3
"""Builds the oci suite's images by hand: an OCI image layout (or a
docker-archive) as a tar, its layers made with tarfile, every digest a
sha256 of the bytes written. `mkimage.py good OUT` is busybox-static plus
/app/hello.txt with Env and WorkingDir; `mkimage.py hostile CASE OUT` is
one case of the hostile-layer corpus (docs/security.md)."""
import gzip, hashlib, io, json, os, sys, tarfile

BUSYBOX = "/bin/busybox"
TOOLS = ["sh", "cat", "env", "pwd", "ls", "echo", "id", "stat", "test", "true"]


def entry(tf, name, data=b"", mode=0o644, type_=tarfile.REGTYPE, link="", uid=0, gid=0):
    ti = tarfile.TarInfo(name)
    ti.type, ti.mode, ti.uid, ti.gid, ti.mtime = type_, mode, uid, gid, 1700000000
    ti.linkname = link
    if type_ in (tarfile.CHRTYPE, tarfile.BLKTYPE):
        ti.devmajor, ti.devminor = 1, 3
    ti.size = len(data) if type_ == tarfile.REGTYPE else 0
    tf.addfile(ti, io.BytesIO(data) if type_ == tarfile.REGTYPE else None)


def layer(build):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tf:
        build(tf)
    return raw.getvalue()


def base_layer(tf):
    for d in ["bin", "app", "etc", "tmp"]:
        entry(tf, d + "/", type_=tarfile.DIRTYPE, mode=0o755)
    entry(tf, "bin/busybox", open(BUSYBOX, "rb").read(), mode=0o755)
    for t in TOOLS:
        entry(tf, "bin/" + t, type_=tarfile.SYMTYPE, link="busybox")


def app_layer(text):
    def build(tf):
        entry(tf, "app/", type_=tarfile.DIRTYPE, mode=0o755)
        entry(tf, "app/hello.txt", text.encode())
    return build


def blob(blobs, data):
    d = hashlib.sha256(data).hexdigest()
    blobs[d] = data
    return d


def oci(out, layers, env=None, workdir="/app", tamper=None, gz=True, diff_tamper=False):
    """layers: raw tar bytes, lowest first."""
    blobs, descs, diff = {}, [], []
    for raw in layers:
        diff.append("sha256:" + hashlib.sha256(raw).hexdigest())
        data = gzip.compress(raw, mtime=0) if gz else raw
        descs.append({"mediaType": "application/vnd.oci.image.layer.v1.tar" + ("+gzip" if gz else ""),
                      "digest": "sha256:" + blob(blobs, data), "size": len(data)})
    if diff_tamper:
        diff[-1] = "sha256:" + "0" * 64
    cfg = json.dumps({"architecture": "amd64", "os": "linux",
                      "config": {"Env": env or ["PATH=/bin", "GREETING=hello from the image"],
                                 "WorkingDir": workdir, "Cmd": ["sh"]},
                      "rootfs": {"type": "layers", "diff_ids": diff}}).encode()
    c = blob(blobs, cfg)
    man = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                      "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                                 "digest": "sha256:" + c, "size": len(cfg)},
                      "layers": descs}).encode()
    m = blob(blobs, man)
    index = json.dumps({"schemaVersion": 2, "manifests": [
        {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": "sha256:" + m,
         "size": len(man), "annotations": {"org.opencontainers.image.ref.name": "latest"}}]}).encode()
    if tamper == "layer":   # a blob whose bytes no longer match its name
        d = descs[-1]["digest"][7:]
        blobs[d] = blobs[d][:-1] + bytes([blobs[d][-1] ^ 1])
    with tarfile.open(out, "w") as tf:
        entry(tf, "oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
        if tamper == "symlink-index":
            entry(tf, "index.json", type_=tarfile.SYMTYPE, link="/etc/hostname")
        else:
            entry(tf, "index.json", index)
        entry(tf, "blobs/", type_=tarfile.DIRTYPE, mode=0o755)
        entry(tf, "blobs/sha256/", type_=tarfile.DIRTYPE, mode=0o755)
        for d, data in blobs.items():
            entry(tf, "blobs/sha256/" + d, data)


def docker(out, layers, env=None, workdir="/app"):
    diff = ["sha256:" + hashlib.sha256(r).hexdigest() for r in layers]
    cfg = json.dumps({"architecture": "amd64", "os": "linux",
                      "config": {"Env": env or ["PATH=/bin"], "WorkingDir": workdir},
                      "rootfs": {"type": "layers", "diff_ids": diff}}).encode()
    c = hashlib.sha256(cfg).hexdigest()
    with tarfile.open(out, "w") as tf:
        entry(tf, c + ".json", cfg)
        names = []
        for i, raw in enumerate(layers):
            entry(tf, "l%d/" % i, type_=tarfile.DIRTYPE, mode=0o755)
            entry(tf, "l%d/layer.tar" % i, raw)
            names.append("l%d/layer.tar" % i)
        entry(tf, "manifest.json", json.dumps([{"Config": c + ".json", "RepoTags": ["x:1"],
                                                "Layers": names}]).encode())


def hostile(case, out, escape):
    base = layer(base_layer)
    one = lambda build: oci(out, [base, layer(build)])
    if case == "absolute":
        one(lambda tf: entry(tf, escape + "/abs", b"x"))
    elif case == "dotdot":
        one(lambda tf: entry(tf, "app/../../../../../../.." + escape + "/dotdot", b"x"))
    elif case == "symlink-write":
        def b(tf):
            entry(tf, "lnk", type_=tarfile.SYMTYPE, link=escape)
            entry(tf, "lnk/through", b"x")
        one(b)
    elif case == "hardlink-outside":
        one(lambda tf: entry(tf, "h", type_=tarfile.LNKTYPE, link="../../../../etc/passwd"))
    elif case == "hardlink-lower":   # to a file of another layer: not this layer's
        one(lambda tf: entry(tf, "h", type_=tarfile.LNKTYPE, link="bin/busybox"))
    elif case == "hardlink-later":
        def b(tf):
            entry(tf, "h", type_=tarfile.LNKTYPE, link="later")
            entry(tf, "later", b"x")
        one(b)
    elif case == "device":
        one(lambda tf: entry(tf, "dev/evil", type_=tarfile.CHRTYPE, mode=0o666))
    elif case == "fifo":
        one(lambda tf: entry(tf, "fifo", type_=tarfile.FIFOTYPE))
    elif case == "whiteout-root":
        one(lambda tf: entry(tf, ".wh.", b""))
    elif case == "whiteout-dotdot":
        one(lambda tf: entry(tf, "app/.wh...", b""))
    elif case == "bomb":   # 64 MiB of zeros, a few tens of KiB compressed
        def b(tf):
            ti = tarfile.TarInfo("zeros")
            ti.size = 64 << 20
            tf.addfile(ti, io.BytesIO(bytes(64 << 20)))
        one(b)
    elif case == "bomb-many":   # 8 x 8 MiB of zeros: each entry under the cap, the sum over
        def b(tf):
            for i in range(8):
                ti = tarfile.TarInfo("zeros%d" % i)
                ti.size = 8 << 20
                tf.addfile(ti, io.BytesIO(bytes(8 << 20)))
        one(b)
    elif case == "digest":
        oci(out, [base, layer(app_layer("x"))], tamper="layer")
    elif case == "diff-id":
        oci(out, [base, layer(app_layer("x"))], diff_tamper=True)
    elif case == "symlink-index":
        oci(out, [base], tamper="symlink-index")
    else:
        sys.exit("unknown case " + case)


HOSTILE = ["absolute", "dotdot", "symlink-write", "hardlink-outside", "hardlink-lower",
           "hardlink-later", "device", "fifo", "whiteout-root", "whiteout-dotdot", "bomb", "bomb-many",
           "digest", "diff-id", "symlink-index"]

if __name__ == "__main__":
    kind = sys.argv[1]
    if kind == "good":
        oci(sys.argv[2], [layer(base_layer), layer(app_layer(sys.argv[3] if len(sys.argv) > 3 else "hello oci\n"))])
    elif kind == "docker":
        docker(sys.argv[2], [layer(base_layer), layer(app_layer("from docker-archive\n"))])
    elif kind == "whiteouts":   # a third layer removes /app/hello.txt and makes /etc opaque
        def wl(tf):
            entry(tf, "app/.wh.hello.txt", b"")
            entry(tf, "etc/", type_=tarfile.DIRTYPE, mode=0o755)
            entry(tf, "etc/.wh..wh..opq", b"")
            entry(tf, "etc/only", b"only\n")
            entry(tf, "app/suid", b"#!/bin/sh\n", mode=0o4755)
        def el(tf):
            entry(tf, "etc/", type_=tarfile.DIRTYPE, mode=0o755)
            entry(tf, "etc/gone", b"gone\n")
        oci(sys.argv[2], [layer(base_layer), layer(el), layer(app_layer("x")), layer(wl)])
    elif kind == "nosh":   # no /bin/sh: commands run by exec
        def nl(tf):
            entry(tf, "bin/", type_=tarfile.DIRTYPE, mode=0o755)
            entry(tf, "bin/busybox", open(BUSYBOX, "rb").read(), mode=0o755)
            entry(tf, "bin/cat", type_=tarfile.SYMTYPE, link="busybox")
        oci(sys.argv[2], [layer(nl), layer(app_layer("no shell here\n"))], env=["PATH=/bin"])
    elif kind == "hostile":
        hostile(sys.argv[2], sys.argv[3], sys.argv[4])
    elif kind == "cases":
        print(" ".join(HOSTILE))
