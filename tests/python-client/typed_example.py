"""Checked by mypy --strict against the installed package (run.sh): the
public API's types are visible (py.typed) and say what the README says.
Not run."""
import asyncio
from typing import List, Optional

from sbxgw import (AsyncClient, AsyncFork, AsyncSandbox, AsyncSnapshot, Chunk, Client,
                   CommandResult, EgressLogEntry, FileEntry, Fork, Image, ImageImport, LogStream,
                   NetworkPolicy, NotFoundError, Page, Sandbox, SandboxError, Snapshot, Terminal)


def sync_flow() -> None:
    sbx: Sandbox = Sandbox.create(timeout_ms=60_000, ports=[3000])
    result: CommandResult = sbx.run(["echo", "hi"], cwd="/tmp", env={"A": "b"}, sudo=False)
    code: Optional[int] = result.exit_code
    out: str = result.stdout
    logs: LogStream = sbx.exec("echo hi").logs(since=0)
    for chunk in logs:
        c: Chunk = chunk
        data: bytes = c.data
        at: int = c.offset
    sbx.files.write("a.txt", b"x", mode=0o644)
    got: bytes = sbx.files.read("a.txt")
    entries: List[FileEntry] = sbx.files.list(".")
    term: Terminal = sbx.pty(cols=100, rows=30)
    term.resize(80, 24)
    piece: Optional[bytes] = term.read()
    url: str = sbx.domain(3000)
    images: List[Image] = Sandbox.images()
    try:
        Sandbox.get("sbx_x")
    except NotFoundError as e:
        status: int = e.status
        what: str = e.code
    except SandboxError as e:
        message: str = e.message
    sbx.extend(60_000).stop()
    print(code, out, data, at, got, entries, piece, url, images, status, what, message)


def operations(client: Client, sbx: Sandbox) -> None:
    snap: Snapshot = sbx.snapshot(expires_in_ms=60_000, keep_last=2)
    depth: int = snap.depth
    parent: Optional[str] = snap.parent
    copy: Sandbox = snap.create_sandbox(timeout_ms=60_000)
    again: Sandbox = client.create_from_snapshot(snap.id)
    snaps: List[Snapshot] = client.snapshots()
    gone: Snapshot = client.delete_snapshot(client.get_snapshot(snap.id).id)
    fork: Fork = sbx.fork(2)
    forked: List[Sandbox] = fork.sandboxes
    status: str = sbx.pause().resume().status
    policy: NetworkPolicy = sbx.set_network({"allow": ["example.com"]}).network
    for entry in sbx.network_log(since=0):
        e: EgressLogEntry = entry
        verdict: str = e.verdict
    with open("app.tar", "rb") as f:
        imported: ImageImport = client.import_image("app", f)
    pulled: ImageImport = client.pull_image("127.0.0.1:5000/app:1", name="app2")
    client.delete_image(imported.name)
    page: Page[Sandbox] = client.list_page(limit=10, cursor=None)
    cursor: Optional[str] = page.next_cursor
    every: List[Sandbox] = list(client.iter_sandboxes(limit=10))
    print(depth, parent, copy, again, snaps, gone, forked, status, policy, verdict, pulled,
          cursor, every)


async def async_operations(client: AsyncClient, sbx: AsyncSandbox) -> None:
    snap: AsyncSnapshot = await sbx.snapshot()
    copy: AsyncSandbox = await snap.create_sandbox()
    fork: AsyncFork = await sbx.fork(1)
    await (await sbx.pause()).resume()
    await sbx.set_network("allow-all")
    seqs: List[int] = [e.seq async for e in sbx.network_log()]
    page: Page[AsyncSandbox] = await client.list_page(limit=1)
    ids: List[str] = [s.id async for s in client.iter_sandboxes()]
    imported: ImageImport = await client.import_image("app", b"...")
    print(copy, fork.sandboxes, seqs, page.sandboxes, ids, imported.layers)


async def async_flow() -> None:
    async with await AsyncSandbox.create() as sbx:
        result: CommandResult = await sbx.run("echo hi")
        cmd = await sbx.exec(["sleep", "1"])
        async for chunk in cmd.logs():
            data: bytes = chunk.data
            print(data)
        print(result.stdout, (await cmd.wait()).exit_code)


asyncio.run(async_flow())
sync_flow()
