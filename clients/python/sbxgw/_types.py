"""What the API's answers hold, as typed values."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Generic, List, Optional, Sequence, TypeVar, Union

from ._errors import make_error

Cmd = Union[str, Sequence[str]]


def argv(cmd: Cmd, args: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """cmd as the API's {cmd, args}: a string is a shell command line (sh -c),
    a sequence is a program and its arguments, run without a shell."""
    if isinstance(cmd, str):
        if args:
            return {"cmd": cmd, "args": list(args)}
        return {"cmd": "sh", "args": ["-c", cmd]}
    items = list(cmd) + list(args or [])
    if not items:
        raise ValueError("cmd is empty")
    return {"cmd": items[0], "args": items[1:]}


@dataclass(frozen=True)
class CommandResult:
    """A command that ended: its exit code (None when a signal ended it)."""
    exit_code: Optional[int]
    signal: Optional[str]
    stdout: str
    stderr: str
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    info: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, info: Dict[str, Any]) -> "CommandResult":
        return cls(info.get("exit_code"), info.get("signal"), info.get("stdout") or "",
                   info.get("stderr") or "", bool(info.get("stdout_truncated")),
                   bool(info.get("stderr_truncated")), info)


@dataclass(frozen=True)
class Chunk:
    """Output of a command as it wrote it: stream is "stdout" or "stderr",
    offset the position of data's first byte in the command's output (both
    streams counted together; a gap means bytes lost to the retention bound)."""
    stream: str
    data: bytes
    offset: int

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


@dataclass(frozen=True)
class FileEntry:
    name: str
    type: str  # "file", "dir" or "link"
    size: int
    mode: int
    mtime: int

    @classmethod
    def of(cls, e: Dict[str, Any]) -> "FileEntry":
        mode = e.get("mode", 0)
        if isinstance(mode, str):
            mode = int(mode, 8)
        return cls(e["name"], e.get("type", "file"), int(e.get("size") or 0), int(mode),
                   int(e.get("mtime") or 0))


@dataclass(frozen=True)
class Image:
    name: str
    created_at: Optional[int]
    os: Optional[str]
    runtimes: Dict[str, str]

    @classmethod
    def of(cls, e: Dict[str, Any]) -> "Image":
        return cls(e["name"], e.get("created_at"), e.get("os"), dict(e.get("runtimes") or {}))


def route_url(info: Dict[str, Any], port: int) -> str:
    for r in info.get("routes") or []:
        if int(r.get("port", -1)) == int(port):
            return str(r["url"])
    raise make_error(0, "no_route", f"port {port} was not declared when the sandbox was created")


def drop_none(d: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


@dataclass(frozen=True)
class ImageImport:
    """What POST /v1/images made of an archive or a pull: its layers, how many
    of them (and bytes) were new to the runner's store, setuid bits removed."""
    name: str
    source: str  # "oci" or "docker-archive"
    layers: int
    layers_new: int
    bytes_new: int
    setuid_stripped: int

    @classmethod
    def of(cls, e: Dict[str, Any]) -> "ImageImport":
        return cls(str(e["name"]), str(e.get("source")), int(e.get("layers") or 0),
                   int(e.get("layers_new") or 0), int(e.get("bytes_new") or 0),
                   int(e.get("setuid_stripped") or 0))


@dataclass(frozen=True)
class EgressLogEntry:
    """One decision of a sandbox's resolver (port 53) or egress proxy (80,
    443): verdict "allowed" or "denied", rule the pattern that allowed it or
    why not; a proxied connection's bytes each way once it ended."""
    seq: int
    time_ms: int
    name: str
    port: int
    verdict: str
    rule: str
    bytes_out: int
    bytes_in: int

    @classmethod
    def of(cls, e: Dict[str, Any]) -> "EgressLogEntry":
        return cls(int(e["seq"]), int(e.get("time_ms") or 0), str(e.get("name") or ""),
                   int(e.get("port") or 0), str(e.get("verdict")), str(e.get("rule") or ""),
                   int(e.get("bytes_out") or 0), int(e.get("bytes_in") or 0))


T = TypeVar("T")


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of GET /v1/sandboxes: next_cursor is None on the last page;
    unavailable_runners are runners whose sandboxes the page lacks."""
    sandboxes: List[T]
    next_cursor: Optional[str]
    unavailable_runners: List[str]


# A network policy: "deny-all", "allow-all" or {"allow": [...], "deny_cidrs": [...]}.
NetworkPolicy = Union[str, Dict[str, Any]]


def list_params(limit: Optional[int], cursor: Optional[str]) -> Dict[str, str]:
    p: Dict[str, str] = {}
    if limit is not None:
        p["limit"] = str(limit)
    if cursor is not None:
        p["cursor"] = cursor
    return p


def snapshot_body(expires_in_ms: Optional[int], keep_last: Optional[int]) -> Dict[str, Any]:
    return drop_none({"expires_in_ms": expires_in_ms, "keep_last": keep_last})
