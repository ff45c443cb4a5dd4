"""The blocking client: Client, Sandbox, Command."""
from __future__ import annotations

import json
import ssl
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

from ._api import Api
from ._config import command_path, image_path, sandbox_path, snapshot_path
from ._errors import NotFoundError, make_error
from ._files import Data, Files, _body
from ._logs import LogStream
from ._pty import Terminal
from ._types import (Cmd, CommandResult, EgressLogEntry, Image, ImageImport, NetworkPolicy, Page,
                     argv, drop_none, list_params, route_url, snapshot_body)


class Client:
    """One API key at one gateway. url and api_key default to SANDBOX_URL
    and SANDBOX_API_KEY. Holds a connection pool: close() it, or use `with`."""

    def __init__(self, url: Optional[str] = None, api_key: Optional[str] = None, *,
                 ssl_context: Optional[ssl.SSLContext] = None) -> None:
        self.api = Api(url, api_key, ssl_context)

    def create(self, **fields: Any) -> "Sandbox":
        """POST /v1/sandboxes; fields as the API names them (timeout_ms, ports,
        env, network, image, memory_mb, vcpus, idle_timeout_ms, isolation, ...)."""
        return Sandbox(self, self.api.call("POST", "/v1/sandboxes", json=drop_none(fields)))

    def get(self, sandbox_id: str) -> "Sandbox":
        return Sandbox(self, self.api.call("GET", sandbox_path(sandbox_id)))

    def list_page(self, limit: Optional[int] = None,
                  cursor: Optional[str] = None) -> Page["Sandbox"]:
        """One page of this key's sandboxes in id order: at most limit (1..1000,
        the gateway's default 100) whose id sorts after cursor."""
        r = self.api.call("GET", "/v1/sandboxes", params=list_params(limit, cursor))
        return Page([Sandbox(self, s) for s in r["sandboxes"]], r.get("next_cursor"),
                    [str(n) for n in r.get("unavailable_runners") or []])

    def iter_sandboxes(self, limit: Optional[int] = None) -> Iterator["Sandbox"]:
        """Every sandbox of this key, page after page (limit: a page's size)."""
        cursor: Optional[str] = None
        while True:
            page = self.list_page(limit, cursor)
            yield from page.sandboxes
            if page.next_cursor is None:
                return
            if page.next_cursor == cursor:  # a gateway that does not move on would loop forever
                raise make_error(0, "internal", f"the list did not move past {cursor!r}")
            cursor = page.next_cursor

    def list(self) -> List["Sandbox"]:
        """Every sandbox of this key (all pages)."""
        return [*self.iter_sandboxes()]

    def create_from_snapshot(self, snapshot_id: str, **fields: Any) -> "Sandbox":
        """A sandbox that starts with the snapshot's files (on its runner)."""
        return self.create(**fields, source={"snapshot": snapshot_id})

    def snapshots(self) -> List["Snapshot"]:
        return [Snapshot(self, s) for s in self.api.call("GET", "/v1/snapshots")["snapshots"]]

    def get_snapshot(self, snapshot_id: str) -> "Snapshot":
        return Snapshot(self, self.api.call("GET", snapshot_path(snapshot_id)))

    def delete_snapshot(self, snapshot_id: str) -> "Snapshot":
        """Deletes it and returns it as it was (sandboxes made from it run on)."""
        return Snapshot(self, self.api.call("DELETE", snapshot_path(snapshot_id)))

    def images(self) -> List[Image]:
        return [Image.of(i) for i in self.api.call("GET", "/v1/images")["images"]]

    def import_image(self, name: str, data: Data, size: Optional[int] = None) -> ImageImport:
        """Imports an OCI image layout tar or a `docker save` archive (plain or
        gzip) from bytes, a binary file or an iterable of `size` bytes, streamed."""
        content, n = _body(data, size)
        return ImageImport.of(self.api.call(
            "POST", "/v1/images", params={"name": name}, content=content,
            headers={"Content-Length": str(n), "Content-Type": "application/octet-stream"}))

    def pull_image(self, ref: str, name: Optional[str] = None) -> ImageImport:
        """Has the runner pull ref from a registry and import it."""
        return ImageImport.of(self.api.call("POST", "/v1/images",
                                            json=drop_none({"ref": ref, "name": name})))

    def delete_image(self, name: str) -> None:
        self.api.call("DELETE", image_path(name))

    def capabilities(self) -> Dict[str, Any]:
        return dict(self.api.call("GET", "/v1/capabilities"))

    def close(self) -> None:
        self.api.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Sandbox:
    """One sandbox; `info` is the latest object the gateway gave for it.
    `with Sandbox.create() as sbx:` stops it when the block ends."""

    def __init__(self, client: Client, info: Dict[str, Any], owns_client: bool = False) -> None:
        self.client = client
        self.info = info
        self.id: str = info["id"]
        self.files = Files(client.api, self.id)
        self._owns_client = owns_client

    # -- finding sandboxes without a Client at hand
    @classmethod
    def create(cls, *, url: Optional[str] = None, api_key: Optional[str] = None,
               **fields: Any) -> "Sandbox":
        client = Client(url, api_key)
        try:
            sbx = client.create(**fields)
        except BaseException:
            client.close()
            raise
        sbx._owns_client = True
        return sbx

    @classmethod
    def get(cls, sandbox_id: str, *, url: Optional[str] = None,
            api_key: Optional[str] = None) -> "Sandbox":
        client = Client(url, api_key)
        try:
            sbx = client.get(sandbox_id)
        except BaseException:
            client.close()
            raise
        sbx._owns_client = True
        return sbx

    @classmethod
    def list(cls, *, url: Optional[str] = None, api_key: Optional[str] = None) -> List["Sandbox"]:
        """This key's sandboxes (they share one connection pool)."""
        return Client(url, api_key).list()

    @classmethod
    def images(cls, *, url: Optional[str] = None, api_key: Optional[str] = None) -> List[Image]:
        with Client(url, api_key) as client:
            return client.images()

    # -- this sandbox
    @property
    def status(self) -> str:
        return str(self.info.get("status"))

    def _path(self, rest: str = "") -> str:
        return sandbox_path(self.id, rest)

    def refresh(self) -> "Sandbox":
        self.info = self.client.api.call("GET", self._path())
        return self

    def run(self, cmd: Cmd, args: Optional[Sequence[str]] = None, *, cwd: Optional[str] = None,
            env: Optional[Dict[str, str]] = None, sudo: Optional[bool] = None,
            timeout_ms: Optional[int] = None) -> CommandResult:
        """Runs cmd and waits for it: a str is a shell command line, a list a
        program and its arguments. stdout/stderr are capped at 1 MiB each
        (stdout_truncated says so); use exec() and logs() for more."""
        body = drop_none({**argv(cmd, args), "cwd": cwd, "env": env, "sudo": sudo,
                          "timeout_ms": timeout_ms})
        return CommandResult.of(self.client.api.call("POST", self._path("/commands"), json=body))

    def exec(self, cmd: Cmd, args: Optional[Sequence[str]] = None, *, cwd: Optional[str] = None,
             env: Optional[Dict[str, str]] = None, sudo: Optional[bool] = None,
             timeout_ms: Optional[int] = None) -> "Command":
        """Starts cmd detached and returns at once; its output comes from logs()."""
        body = drop_none({**argv(cmd, args), "cwd": cwd, "env": env, "sudo": sudo,
                          "timeout_ms": timeout_ms, "detached": True})
        return Command(self, self.client.api.call("POST", self._path("/commands"), json=body))

    def command(self, command_id: str) -> "Command":
        return Command(self, self.client.api.call("GET", command_path(self.id, command_id)))

    def commands(self) -> List["Command"]:
        r = self.client.api.call("GET", self._path("/commands"))
        return [Command(self, c) for c in r.get("commands", [])]

    def pty(self, cmd: str = "bash", cols: int = 80, rows: int = 24) -> Terminal:
        return Terminal(self.client.api.socket(self._path("/pty"),
                                               {"cmd": cmd, "cols": cols, "rows": rows}))

    def domain(self, port: int) -> str:
        """The preview URL of a port declared at creation (ports=[...])."""
        return route_url(self.info, port)

    def extend(self, duration_ms: int) -> "Sandbox":
        self.info = self.client.api.call("POST", self._path("/extend"),
                                         json={"duration_ms": duration_ms})
        return self

    def stop(self) -> "Sandbox":
        """Stops the sandbox; a persistent one is kept and its next command or
        file call resumes it (delete() ends it for good). Repeating it is not an
        error."""
        self.info = self.client.api.call("POST", self._path("/stop"))
        return self

    def delete(self) -> "Sandbox":
        """Stops and destroys the sandbox for good, a persistent one's kept
        files too; repeating it is not an error."""
        self.client.api.call("DELETE", self._path())
        try:
            return self.refresh()
        except NotFoundError:  # gone already: stopped all the same
            self.info = {**self.info, "status": "stopped"}
            return self

    def snapshot(self, expires_in_ms: Optional[int] = None,
                 keep_last: Optional[int] = None) -> "Snapshot":
        """Keeps the sandbox's files (not its processes) as a snapshot; keep_last
        N deletes this sandbox's older snapshots beyond N."""
        return Snapshot(self.client, self.client.api.call(
            "POST", self._path("/snapshots"), json=snapshot_body(expires_in_ms, keep_last)))

    def fork(self, count: int = 1) -> "Fork":
        """A snapshot and `count` new sandboxes from it, with this one's settings
        and without its env."""
        r = self.client.api.call("POST", self._path("/fork"), json={"count": count})
        return Fork(Snapshot(self.client, r["snapshot"]),
                    [Sandbox(self.client, s) for s in r["sandboxes"]])

    def pause(self) -> "Sandbox":
        """Stops every process where it stands and the timeout clock; commands and
        files answer ConflictError (code "paused") until resume()."""
        self.info = self.client.api.call("POST", self._path("/pause"))
        return self

    def resume(self) -> "Sandbox":
        self.info = self.client.api.call("POST", self._path("/resume"))
        return self

    @property
    def network(self) -> NetworkPolicy:
        value: NetworkPolicy = self.info.get("network", "deny-all")
        return value

    def set_network(self, policy: NetworkPolicy) -> "Sandbox":
        """Applies a network policy at once, without a restart."""
        self.info = self.client.api.call("PATCH", self._path("/network"), json={"network": policy})
        return self

    def network_log(self, since: int = 0) -> Iterator[EgressLogEntry]:
        """The egress log's entries after seq `since`, oldest first."""
        with self.client.api.stream("GET", self._path("/network/log"),
                                    params={"since": str(since)}) as res:
            for line in res.iter_lines():
                if line.strip():
                    yield EgressLogEntry.of(json.loads(line))

    def close(self) -> None:
        """Closes the connection pool this sandbox made (not the sandbox)."""
        if self._owns_client:
            self.client.close()

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.stop()
        finally:
            self.close()

    def __repr__(self) -> str:
        return f"Sandbox({self.id!r}, status={self.status!r})"


class Command:
    """A detached command."""

    def __init__(self, sandbox: Sandbox, info: Dict[str, Any]) -> None:
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

    def logs(self, since: int = 0, max_reconnects: int = 8) -> LogStream:
        """Its output from byte `since` on, as an iterator of Chunks; a dropped
        connection is reopened where it left off."""
        api = self.sandbox.client.api
        return LogStream(lambda at: api.socket(self._path("/stream"), {"since": at}),
                         since, max_reconnects)

    def refresh(self) -> "Command":
        self.info = self.sandbox.client.api.call("GET", self._path())
        return self

    def wait(self) -> "Command":
        """Returns once the command has ended (exit_code, signal then say how)."""
        self.info = self.sandbox.client.api.call("GET", self._path(), params={"wait": "1"})
        return self

    def kill(self, signal: str = "SIGTERM") -> None:
        self.sandbox.client.api.call("POST", self._path("/kill"), json={"signal": signal})

    def send_stdin(self, data: Union[str, bytes], eof: bool = False) -> None:
        self.sandbox.client.api.call("POST", self._path("/stdin"),
                                     params={"eof": "1"} if eof else None,
                                     content=data.encode() if isinstance(data, str) else data)

    def __repr__(self) -> str:
        return f"Command({self.id!r}, status={self.status!r})"


class Snapshot:
    """A snapshot of a sandbox's files; `info` is the gateway's object."""

    def __init__(self, client: Client, info: Dict[str, Any]) -> None:
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

    def refresh(self) -> "Snapshot":
        self.info = self.client.api.call("GET", snapshot_path(self.id))
        return self

    def create_sandbox(self, **fields: Any) -> Sandbox:
        """A new sandbox that starts with this snapshot's files."""
        return self.client.create_from_snapshot(self.id, **fields)

    def delete(self) -> None:
        self.client.api.call("DELETE", snapshot_path(self.id))

    def __repr__(self) -> str:
        return f"Snapshot({self.id!r}, sandbox_id={self.sandbox_id!r})"


@dataclass(frozen=True)
class Fork:
    """What fork() made: the snapshot, and the sandboxes started from it."""
    snapshot: Snapshot
    sandboxes: List[Sandbox]
