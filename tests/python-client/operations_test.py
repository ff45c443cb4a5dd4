"""The Python client's wrappers of snapshots, fork, pause/resume, images,
network policy (and its egress log) and the paged list, against the real
gateway and runner (run.sh starts them with an image dir of the suite's own,
so an imported image never lands in the shared store). Sync cases first,
then one asyncio case over the same operations. GW_URL and GW_KEY come from
run.sh."""
import os
import subprocess
import sys
import tempfile

from sbxgw import (AsyncClient, Client, ConflictError, EgressLogEntry, Fork, ImageImport,
                   InvalidError, NotFoundError, Page, SandboxError, Snapshot)
from harness import Skip, run, test

URL, KEY, TOP = os.environ["GW_URL"], os.environ["GW_KEY"], os.environ["TOP"]
client = Client(URL, KEY)
made = []  # every sandbox a case made: deleted at the end whatever happened


def eq(got, want, what=""):
    assert got == want, f"{what}: got {got!r}, want {want!r}"


def raises(cls, fn):
    try:
        fn()
    except cls as e:
        return e
    raise AssertionError(f"no {cls.__name__} raised")


def keep(*sandboxes):
    made.extend(sandboxes)
    return sandboxes[0]


def build_image(path, text):
    """A two-layer OCI layout tar (busybox and /app/hello.txt) by tests/oci's builder."""
    if not os.access("/bin/busybox", os.X_OK):
        raise Skip("no /bin/busybox to build a test image with")
    subprocess.run([sys.executable, os.path.join(TOP, "tests/oci/mkimage.py"), "good", path, text],
                   check=True)


@test("snapshot: a sandbox created from it sees the file as it was at the snapshot")
def _():
    sbx = keep(client.create(timeout_ms=300000))
    sbx.files.write("note.txt", b"before the snapshot\n")
    snap = sbx.snapshot(expires_in_ms=600000)
    assert isinstance(snap, Snapshot)
    eq(snap.sandbox_id, sbx.id, "sandbox_id")
    assert snap.expires_at is not None and snap.size > 0, snap.info
    sbx.files.write("note.txt", b"after the snapshot\n")
    new = keep(snap.create_sandbox(timeout_ms=300000))
    eq(new.info.get("source"), {"snapshot": snap.id}, "the new sandbox's source")
    eq(new.files.read("note.txt"), b"before the snapshot\n", "the file in the new sandbox")
    eq(sbx.files.read("note.txt"), b"after the snapshot\n", "the file in the old one")
    eq(client.get_snapshot(snap.id).id, snap.id, "get")
    assert snap.id in [s.id for s in client.snapshots()], "list"
    # keep_last=1: a second snapshot of the same sandbox deletes the first
    second = sbx.snapshot(keep_last=1)
    raises(NotFoundError, lambda: client.get_snapshot(snap.id))
    eq(client.delete_snapshot(second.id).id, second.id, "delete answers the snapshot")
    e = raises(NotFoundError, second.refresh)
    eq((e.status, e.code), (404, "not_found"))


@test("fork: 2 sandboxes with the source's files, which then diverge")
def _():
    sbx = keep(client.create(timeout_ms=300000, memory_mb=256))
    sbx.files.write("shared.txt", b"from the source\n")
    fork = sbx.fork(2)
    assert isinstance(fork, Fork)
    keep(*fork.sandboxes)
    eq(len(fork.sandboxes), 2, "count")
    eq(fork.snapshot.sandbox_id, sbx.id, "the fork's snapshot")
    eq([s.info.get("memory_mb") for s in fork.sandboxes], [256, 256], "the source's settings")
    a, b = fork.sandboxes
    assert a.id != b.id and sbx.id not in (a.id, b.id)
    a.files.write("shared.txt", b"changed in a\n")
    b.run("echo b only > /home/sandbox/b.txt")
    eq(a.files.read("shared.txt"), b"changed in a\n", "a")
    eq(b.files.read("shared.txt"), b"from the source\n", "b keeps the source's file")
    eq(sbx.files.read("shared.txt"), b"from the source\n", "the source")
    eq(b.run("cat b.txt").stdout, "b only\n", "b")
    eq(a.run("test -e b.txt").exit_code, 1, "a does not see b's file")
    fork.snapshot.delete()


@test("pause: a command is refused with ConflictError 'paused'; after resume it runs")
def _():
    sbx = keep(client.create(timeout_ms=300000))
    eq(sbx.pause().status, "paused")
    eq(client.get(sbx.id).status, "paused", "as the gateway sees it")
    e = raises(ConflictError, lambda: sbx.run("echo hi"))
    eq((e.status, e.code), (409, "paused"))
    raises(ConflictError, lambda: sbx.files.read("/etc/hostname"))
    eq(sbx.pause().status, "paused", "pausing again is no error")
    eq(sbx.resume().status, "running")
    eq(sbx.run("echo hi").stdout, "hi\n")


@test("stop() keeps a persistent sandbox, its next command resumes it; delete() ends it")
def _():
    sbx = keep(client.create(timeout_ms=300000, persistent=True))
    sbx.files.write("kept.txt", b"kept across the stop\n")
    sbx.stop()
    eq((sbx.status, sbx.info.get("resumable")), ("stopped", True), "kept")
    eq(sbx.run(["cat", "kept.txt"]).stdout, "kept across the stop\n", "resumed with its files")
    sbx.delete()
    eq((sbx.status, sbx.info.get("resumable")), ("stopped", False), "deleted")
    eq(raises(ConflictError, lambda: sbx.run("true")).code, "conflict")
    plain = keep(client.create(timeout_ms=300000))
    plain.stop()
    eq((plain.status, plain.info.get("persistent")), ("stopped", False), "a plain one just stops")


@test("images: import a tar by streamed upload, create from it, delete it")
def _():
    with tempfile.TemporaryDirectory() as d:
        tar = os.path.join(d, "app.tar")
        build_image(tar, "hello from the python client\n")
        with open(tar, "rb") as f:
            got = client.import_image("pyclient-app", f)
        assert isinstance(got, ImageImport)
        eq((got.name, got.source, got.layers), ("pyclient-app", "oci", 2), "import")
        assert "pyclient-app" in [i.name for i in client.images()], "listed"
        with open(tar, "rb") as f:
            e = raises(ConflictError, lambda: client.import_image("pyclient-app", f))
        eq(e.code, "conflict", "the name exists")
    sbx = keep(client.create(image="pyclient-app", timeout_ms=300000))
    eq(sbx.run(["cat", "/app/hello.txt"]).stdout, "hello from the python client\n", "its file")
    raises(ConflictError, lambda: client.delete_image("pyclient-app"))  # in use
    sbx.stop()
    client.delete_image("pyclient-app")
    assert "pyclient-app" not in [i.name for i in client.images()], "gone from the list"
    eq(raises(NotFoundError, lambda: client.delete_image("pyclient-app")).code, "not_found")
    eq(raises(InvalidError, lambda: client.import_image("Bad Name", b"x")).code, "invalid")


@test("images: a pull sends {ref, name}; a registry that is not there is pull_failed")
def _():
    e = raises(SandboxError, lambda: client.pull_image("127.0.0.1:9/nothing:1", name="pulled"))
    eq((e.status, e.code), (502, "pull_failed"))
    assert "pulled" not in [i.name for i in client.images()]


@test("network: a policy set and read back; a bad one is InvalidError and changes nothing")
def _():
    sbx = keep(client.create(timeout_ms=300000, network={"allow": ["first.example"]}))
    policy = {"allow": ["allowed.example"], "deny_cidrs": ["192.0.2.0/24"]}
    eq(sbx.set_network(policy).network, policy)
    eq(client.get(sbx.id).network, policy, "as the gateway sees it")
    e = raises(InvalidError, lambda: sbx.set_network({"allow": "not-a-list"}))
    eq((e.status, e.code), (422, "invalid"))
    eq(client.get(sbx.id).network, policy, "unchanged")


@test("network log: a denied lookup in the sandbox is an entry; since= skips what was had")
def _():
    sbx = keep(client.create(timeout_ms=300000, network={"allow": ["allowed.example"]}))
    r = sbx.run(["getent", "hosts", "denied.example"])
    eq(r.exit_code, 2, f"the lookup is refused ({r.stderr})")
    entries = list(sbx.network_log())
    assert all(isinstance(x, EgressLogEntry) for x in entries)
    denied = [x for x in entries if x.name == "denied.example"]
    assert denied, entries
    eq((denied[0].port, denied[0].verdict, denied[0].rule), (53, "denied", "not allowed"))
    last = entries[-1].seq
    eq(list(sbx.network_log(since=last)), [], "nothing after the last seq")
    eq([x.seq for x in sbx.network_log(since=denied[0].seq - 1)][:1], [denied[0].seq], "since")


@test("paged list: iter_sandboxes walks every page, each sandbox once, in id order")
def _():
    ours = [keep(client.create(timeout_ms=300000, memory_mb=128)).id for _ in range(5)]
    page = client.list_page(limit=2)
    assert isinstance(page, Page)
    eq(len(page.sandboxes), 2, "a page holds limit")
    assert page.next_cursor is not None, "more pages"
    walked = [s.id for s in client.iter_sandboxes(limit=2)]
    eq(len(walked), len(set(walked)), "each once")
    eq(walked, sorted(walked), "in id order")
    assert set(ours) <= set(walked), (ours, walked)
    assert len(walked) > 2 * 2, "more than two pages"
    eq([s.id for s in client.list()], walked, "list() is every page")
    e = raises(InvalidError, lambda: client.list_page(limit=0))
    eq(e.code, "invalid")


@test("async: snapshot, create from it, fork, pause/resume, network, log, images, pages")
async def _():
    async with AsyncClient(URL, KEY) as ac:
        sbx = keep(await ac.create(timeout_ms=300000, network={"allow": ["allowed.example"]}))
        await sbx.files.write("a.txt", b"async before\n")
        snap = await sbx.snapshot()
        await sbx.files.write("a.txt", b"async after\n")
        new = keep(await ac.create_from_snapshot(snap.id, timeout_ms=300000))
        eq(await new.files.read("a.txt"), b"async before\n", "from the snapshot")
        eq((await ac.get_snapshot(snap.id)).id, snap.id)
        assert snap.id in [s.id for s in await ac.snapshots()]
        fork = await sbx.fork()
        keep(*fork.sandboxes)
        eq(await fork.sandboxes[0].files.read("a.txt"), b"async after\n", "the fork")
        await fork.snapshot.delete()
        eq((await ac.delete_snapshot(snap.id)).id, snap.id)
        eq((await sbx.pause()).status, "paused")
        try:
            await sbx.run("true")
            raise AssertionError("a command ran in a paused sandbox")
        except ConflictError as e:
            eq(e.code, "paused")
        eq((await sbx.resume()).status, "running")
        await sbx.set_network({"allow": ["allowed.example", "*.other.example"]})
        eq(sbx.network, {"allow": ["allowed.example", "*.other.example"], "deny_cidrs": []})
        eq((await sbx.run(["getent", "hosts", "no.example"])).exit_code, 2)
        names = [e.name async for e in sbx.network_log()]
        assert "no.example" in names, names
        page = await ac.list_page(limit=1)
        eq(len(page.sandboxes), 1)
        walked = [s.id async for s in ac.iter_sandboxes(limit=1)]
        eq(len(walked), len(set(walked)), "each once")
        assert {sbx.id, new.id} <= set(walked)
        with tempfile.TemporaryDirectory() as d:
            tar = os.path.join(d, "app.tar")
            build_image(tar, "async image\n")
            with open(tar, "rb") as f:
                got = await ac.import_image("pyclient-async", f)
        eq(got.layers, 2)
        assert "pyclient-async" in [i.name for i in await ac.images()]
        await ac.delete_image("pyclient-async")
        assert "pyclient-async" not in [i.name for i in await ac.images()]


ok = run()
for s in made:  # the async case's too, by id, since its client is closed
    try:
        client.get(s.id).delete()
    except SandboxError:
        pass
client.close()
sys.exit(0 if ok else 1)
