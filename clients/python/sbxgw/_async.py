"""The asyncio client: AsyncClient, AsyncSandbox, AsyncCommand (the twins
of _sync.py, method for method)."""
from __future__ import annotations

import json
import ssl
from dataclasses import dataclass
from typing import Any, AsyncIterator, Dict, List, Optional, Sequence, Union

from ._api import AsyncApi
from ._config import command_path, image_path, sandbox_path, snapshot_path
from ._errors import NotFoundError, make_error
from ._files import AsyncData, AsyncFiles, _abody
from ._logs import AsyncLogStream
from ._pty import AsyncTerminal
from ._types import (Cmd, CommandResult, EgressLogEntry, Image, ImageImport, NetworkPolicy, Page,
                     argv, drop_none, list_params, route_url, snapshot_body)


class AsyncClient:
    """One API key at one gateway (SANDBOX_URL, SANDBOX_API_KEY by default)."""

    def __init__(self, url: Optional[str] = None, api_key: Optional[str] = None, *,
                 ssl_context: Optional[ssl.SSLContext] = None) -> None:
        self.api = AsyncApi(url, api_key, ssl_context)

    async def create(self, **fields: Any) -> "AsyncSandbox":
        return AsyncSandbox(self, await self.api.call("POST", "/v1/sandboxes",
                                                      json=drop_none(fields)))

    async def get(self, sandbox_id: str) -> "AsyncSandbox":
        return AsyncSandbox(self, await self.api.call("GET", sandbox_path(sandbox_id)))

    async def list_page(self, limit: Optional[int] = None,
                        cursor: Optional[str] = None) -> Page["AsyncSandbox"]:
        r = await self.api.call("GET", "/v1/sandboxes", params=list_params(limit, cursor))
        return Page([AsyncSandbox(self, s) for s in r["sandboxes"]], r.get("next_cursor"),
                    [str(n) for n in r.get("unavailable_runners") or []])

    async def iter_sandboxes(self, limit: Optional[int] = None) -> AsyncIterator["AsyncSandbox"]:
        """`async for sbx in client.iter_sandboxes()`: every sandbox, page after page."""
        cursor: Optional[str] = None
        while True:
            page = await self.list_page(limit, cursor)
            for sbx in page.sandboxes:
                yield sbx
            if page.next_cursor is None:
                return
            if page.next_cursor == cursor:
                raise make_error(0, "internal", f"the list did not move past {cursor!r}")
            cursor = page.next_cursor

    async def list(self) -> List["AsyncSandbox"]:
        return [s async for s in self.iter_sandboxes()]

    async def create_from_snapshot(self, snapshot_id: str, **fields: Any) -> "AsyncSandbox":
        return await self.create(**fields, source={"snapshot": snapshot_id})

    async def snapshots(self) -> List["AsyncSnapshot"]:
        r = await self.api.call("GET", "/v1/snapshots")
        return [AsyncSnapshot(self, s) for s in r["snapshots"]]

    async def get_snapshot(self, snapshot_id: str) -> "AsyncSnapshot":
        return AsyncSnapshot(self, await self.api.call("GET", snapshot_path(snapshot_id)))

    async def delete_snapshot(self, snapshot_id: str) -> "AsyncSnapshot":
        return AsyncSnapshot(self, await self.api.call("DELETE", snapshot_path(snapshot_id)))

    async def images(self) -> List[Image]:
        return [Image.of(i) for i in (await self.api.call("GET", "/v1/images"))["images"]]

    async def import_image(self, name: str, data: AsyncData,
                           size: Optional[int] = None) -> ImageImport:
        content, n = _abody(data, size)
        return ImageImport.of(await self.api.call(
            "POST", "/v1/images", params={"name": name}, content=content,
            headers={"Content-Length": str(n), "Content-Type": "application/octet-stream"}))

    async def pull_image(self, ref: str, name: Optional[str] = None) -> ImageImport:
        return ImageImport.of(await self.api.call("POST", "/v1/images",
                                                  json=drop_none({"ref": ref, "name": name})))

    async def delete_image(self, name: str) -> None:
        await self.api.call("DELETE", image_path(name))

    async def capabilities(self) -> Dict[str, Any]:
        return dict(await self.api.call("GET", "/v1/capabilities"))

    async def aclose(self) -> None:
        await self.api.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


class AsyncSandbox:
    """`async with await AsyncSandbox.create() as sbx:` stops it when the block ends."""

    def __init__(self, client: AsyncClient, info: Dict[str, Any],
                 owns_client: bool = False) -> None:
        self.client = client
        self.info = info
        self.id: str = info["id"]
        self.files = AsyncFiles(client.api, self.id)
        self._owns_client = owns_client

    @classmethod
    async def create(cls, *, url: Optional[str] = None, api_key: Optional[str] = None,
                     **fields: Any) -> "AsyncSandbox":
        client = AsyncClient(url, api_key)
        try:
            sbx = await client.create(**fields)
        except BaseException:
            await client.aclose()
            raise
        sbx._owns_client = True
        return sbx

    @classmethod
    async def get(cls, sandbox_id: str, *, url: Optional[str] = None,
                  api_key: Optional[str] = None) -> "AsyncSandbox":
        client = AsyncClient(url, api_key)
        try:
            sbx = await client.get(sandbox_id)
        except BaseException:
            await client.aclose()
            raise
        sbx._owns_client = True
        return sbx

    @classmethod
    async def list(cls, *, url: Optional[str] = None,
                   api_key: Optional[str] = None) -> List["AsyncSandbox"]:
        return await AsyncClient(url, api_key).list()

    @classmethod
    async def images(cls, *, url: Optional[str] = None,
                     api_key: Optional[str] = None) -> List[Image]:
        async with AsyncClient(url, api_key) as client:
            return await client.images()

    @property
    def status(self) -> str:
        return str(self.info.get("status"))

    def _path(self, rest: str = "") -> str:
        return sandbox_path(self.id, rest)

    async def refresh(self) -> "AsyncSandbox":
        self.info = await self.client.api.call("GET", self._path())
        return self

    async def run(self, cmd: Cmd, args: Optional[Sequence[str]] = None, *,
                  cwd: Optional[str] = None, env: Optional[Dict[str, str]] = None,
                  sudo: Optional[bool] = None, timeout_ms: Optional[int] = None) -> CommandResult:
        body = drop_none({**argv(cmd, args), "cwd": cwd, "env": env, "sudo": sudo,
                          "timeout_ms": timeout_ms})
        return CommandResult.of(await self.client.api.call("POST", self._path("/commands"),
                                                           json=body))

    async def exec(self, cmd: Cmd, args: Optional[Sequence[str]] = None, *,
                   cwd: Optional[str] = None, env: Optional[Dict[str, str]] = None,
                   sudo: Optional[bool] = None, timeout_ms: Optional[int] = None) -> "AsyncCommand":
        body = drop_none({**argv(cmd, args), "cwd": cwd, "env": env, "sudo": sudo,
                          "timeout_ms": timeout_ms, "detached": True})
        return AsyncCommand(self, await self.client.api.call("POST", self._path("/commands"),
                                                             json=body))

    async def command(self, command_id: str) -> "AsyncCommand":
        return AsyncCommand(self, await self.client.api.call("GET",
                                                             command_path(self.id, command_id)))

    async def commands(self) -> List["AsyncCommand"]:
        r = await self.client.api.call("GET", self._path("/commands"))
        return [AsyncCommand(self, c) for c in r.get("commands", [])]

    async def pty(self, cmd: str = "bash", cols: int = 80, rows: int = 24) -> AsyncTerminal:
        return AsyncTerminal(await self.client.api.socket(
            self._path("/pty"), {"cmd": cmd, "cols": cols, "rows": rows}))

    def domain(self, port: int) -> str:
        return route_url(self.info, port)

    async def extend(self, duration_ms: int) -> "AsyncSandbox":
        self.info = await self.client.api.call("POST", self._path("/extend"),
                                               json={"duration_ms": duration_ms})
        return self

    async def stop(self) -> "AsyncSandbox":
        """Stops the sandbox; a persistent one is kept (delete() ends it for good)."""
        self.info = await self.client.api.call("POST", self._path("/stop"))
        return self

    async def delete(self) -> "AsyncSandbox":
        """Stops and destroys the sandbox for good, a persistent one's kept files too."""
        await self.client.api.call("DELETE", self._path())
        try:
            return await self.refresh()
        except NotFoundError:  # gone already: stopped all the same
            self.info = {**self.info, "status": "stopped"}
            return self

    async def snapshot(self, expires_in_ms: Optional[int] = None,
                       keep_last: Optional[int] = None) -> "AsyncSnapshot":
        return AsyncSnapshot(self.client, await self.client.api.call(
            "POST", self._path("/snapshots"), json=snapshot_body(expires_in_ms, keep_last)))

    async def fork(self, count: int = 1) -> "AsyncFork":
        r = await self.client.api.call("POST", self._path("/fork"), json={"count": count})
        return AsyncFork(AsyncSnapshot(self.client, r["snapshot"]),
                         [AsyncSandbox(self.client, s) for s in r["sandboxes"]])

    async def pause(self) -> "AsyncSandbox":
        self.info = await self.client.api.call("POST", self._path("/pause"))
        return self

    async def resume(self) -> "AsyncSandbox":
        self.info = await self.client.api.call("POST", self._path("/resume"))
        return self

    @property
    def network(self) -> NetworkPolicy:
        value: NetworkPolicy = self.info.get("network", "deny-all")
        return value

    async def set_network(self, policy: NetworkPolicy) -> "AsyncSandbox":
        self.info = await self.client.api.call("PATCH", self._path("/network"),
                                               json={"network": policy})
        return self

    async def network_log(self, since: int = 0) -> AsyncIterator[EgressLogEntry]:
        """`async for e in sbx.network_log()`: the egress log after seq `since`."""
        async with self.client.api.stream("GET", self._path("/network/log"),
                                          params={"since": str(since)}) as res:
            async for line in res.aiter_lines():
                if line.strip():
                    yield EgressLogEntry.of(json.loads(line))

    async def aclose(self) -> None:
        if self._owns_client:
            await self.client.aclose()

    async def __aenter__(self) -> "AsyncSandbox":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        try:
            await self.stop()
        finally:
            await self.aclose()

    def __repr__(self) -> str:
        return f"AsyncSandbox({self.id!r}, status={self.status!r})"


class AsyncCommand:
    def __init__(self, sandbox: AsyncSandbox, info: Dict[str, Any]) -> None:
        self.sandbox = sandbox
        self.info = info
        self.id: str = info["id"]

    def _path(self, rest: str = "") -> str:
        return command_path(self.sandbox.id, self.id, rest)

    @property
    def status(self) -> str:
        return str(self.info.get("status"))

    @property
    def exit_code(self) -> Optional[int]:
        return self.info.get("exit_code")

    @property
    def signal(self) -> Optional[str]:
        return self.info.get("signal")

    def logs(self, since: int = 0, max_reconnects: int = 8) -> AsyncLogStream:
        """`async for chunk in cmd.logs()`; resumes after a dropped connection."""
        api = self.sandbox.client.api
        return AsyncLogStream(lambda at: api.socket(self._path("/stream"), {"since": at}),
                              since, max_reconnects)

    async def refresh(self) -> "AsyncCommand":
        self.info = await self.sandbox.client.api.call("GET", self._path())
        return self

    async def wait(self) -> "AsyncCommand":
        self.info = await self.sandbox.client.api.call("GET", self._path(), params={"wait": "1"})
        return self

    async def kill(self, signal: str = "SIGTERM") -> None:
        await self.sandbox.client.api.call("POST", self._path("/kill"), json={"signal": signal})

    async def send_stdin(self, data: Union[str, bytes], eof: bool = False) -> None:
        await self.sandbox.client.api.call("POST", self._path("/stdin"),
                                           params={"eof": "1"} if eof else None,
                                           content=data.encode() if isinstance(data, str) else data)

    def __repr__(self) -> str:
        return f"AsyncCommand({self.id!r}, status={self.status!r})"


class AsyncSnapshot:
    """The asyncio twin of Snapshot."""

    def __init__(self, client: AsyncClient, info: Dict[str, Any]) -> None:
        self.client = client
        self.info = info
        self.id: str = info["id"]

    @property
    def sandbox_id(self) -> str:
        return str(self.info.get("sandbox_id"))

    @property
    def size(self) -> int:
        return int(self.info.get("size") or 0)

    @property
    def expires_at(self) -> Optional[int]:
        return self.info.get("expires_at")

    @property
    def parent(self) -> Optional[str]:
        return self.info.get("parent")

    @property
    def depth(self) -> int:
        return int(self.info.get("depth") or 1)

    async def refresh(self) -> "AsyncSnapshot":
        self.info = await self.client.api.call("GET", snapshot_path(self.id))
        return self

    async def create_sandbox(self, **fields: Any) -> AsyncSandbox:
        return await self.client.create_from_snapshot(self.id, **fields)

    async def delete(self) -> None:
        await self.client.api.call("DELETE", snapshot_path(self.id))

    def __repr__(self) -> str:
        return f"AsyncSnapshot({self.id!r}, sandbox_id={self.sandbox_id!r})"


@dataclass(frozen=True)
class AsyncFork:
    snapshot: AsyncSnapshot
    sandboxes: List[AsyncSandbox]
