"""What the API's answers hold, as typed values."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Sequence, Union

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
