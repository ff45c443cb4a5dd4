"""Checked by mypy --strict against the installed package (run.sh): the
public API's types are visible (py.typed) and say what the README says.
Not run."""
import asyncio
from typing import List, Optional

from sbxgw import (AsyncSandbox, Chunk, CommandResult, FileEntry, Image, LogStream,
                   NotFoundError, Sandbox, SandboxError, Terminal)


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
