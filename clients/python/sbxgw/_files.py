"""Files of a sandbox, streamed both ways (PUT/GET .../files, list, mkdir).

The gateway refuses chunked request bodies (docs/api.md: 411), so every
upload says its length: known for bytes and regular files, given by the
caller (size=) for any other iterable.
"""
from __future__ import annotations

import asyncio
import os
from typing import (IO, Any, AsyncIterable, AsyncIterator, Dict, Iterable, Iterator, List,
                    Optional, Tuple, Union)

from ._api import Api, AsyncApi
from ._config import sandbox_path
from ._types import FileEntry

PIECE = 1 << 16
Data = Union[bytes, bytearray, memoryview, str, IO[bytes], Iterable[bytes]]
AsyncData = Union[Data, AsyncIterable[bytes]]


def _params(path: str, mode: Optional[Union[int, str]] = None) -> Dict[str, str]:
    p = {"path": path}
    if mode is not None:
        p["mode"] = format(mode, "04o") if isinstance(mode, int) else mode
    return p


def _file_size(f: Any) -> int:
    try:
        return int(os.fstat(f.fileno()).st_size - f.tell())
    except (AttributeError, OSError, ValueError):
        here = f.tell()
        end = f.seek(0, os.SEEK_END)
        f.seek(here)
        return int(end - here)


def _pieces(f: Any, n: int) -> Iterator[bytes]:
    """Exactly n bytes of f: a file that shrank meanwhile ends the upload short
    (the gateway then sees the body cut and writes nothing whole)."""
    while n > 0:
        b = f.read(min(PIECE, n))
        if not b:
            return
        n -= len(b)
        yield b


def _body(data: Data, size: Optional[int]) -> Tuple[Any, int]:
    if isinstance(data, str):
        data = data.encode()
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data), len(data)
    if hasattr(data, "read"):
        n = _file_size(data) if size is None else size
        return _pieces(data, n), n
    if size is None:
        raise ValueError("an iterable of bytes needs size= (the gateway takes no chunked body)")
    return data, size


class Files:
    """sbx.files: write, read, list, mkdir."""

    def __init__(self, api: Api, sid: str) -> None:
        self._api = api
        self._path = sandbox_path(sid, "/files")

    def write(self, path: str, data: Data, mode: Optional[Union[int, str]] = None,
              size: Optional[int] = None) -> None:
        """Writes path (parents created) from bytes, a str, a binary file or
        an iterable of bytes of `size` bytes, streamed."""
        content, n = _body(data, size)
        self._api.call("PUT", self._path, params=_params(path, mode), content=content,
                       headers={"Content-Length": str(n),
                                "Content-Type": "application/octet-stream"})

    def iter_read(self, path: str) -> Iterator[bytes]:
        """The file's bytes as they arrive."""
        with self._api.stream("GET", self._path, params=_params(path)) as res:
            yield from res.iter_bytes()

    def read_into(self, path: str, dest: IO[bytes]) -> int:
        """Copies the file into dest without holding it whole; returns its size."""
        n = 0
        for b in self.iter_read(path):
            dest.write(b)
            n += len(b)
        return n

    def read(self, path: str) -> bytes:
        return b"".join(self.iter_read(path))

    def list(self, path: str = ".") -> List[FileEntry]:
        r = self._api.call("GET", self._path + "/list", params=_params(path))
        return [FileEntry.of(e) for e in r.get("entries", [])]

    def mkdir(self, path: str, parents: bool = True) -> None:
        self._api.call("POST", self._path + "/mkdir", json={"path": path, "parents": parents})


async def _apieces(f: Any, n: int) -> AsyncIterator[bytes]:
    while n > 0:
        b = await asyncio.to_thread(f.read, min(PIECE, n))  # a disk read must not hold the loop
        if not b:
            return
        n -= len(b)
        yield b


async def _aiter_sync(it: Iterable[bytes]) -> AsyncIterator[bytes]:
    for b in it:
        yield b


def _abody(data: AsyncData, size: Optional[int]) -> Tuple[Any, int]:
    if hasattr(data, "__aiter__"):
        if size is None:
            raise ValueError("an async iterable of bytes needs size=")
        return data, size
    if hasattr(data, "read"):
        n = _file_size(data) if size is None else size
        return _apieces(data, n), n
    content, n = _body(data, size)
    return (content if isinstance(content, bytes) else _aiter_sync(content)), n


class AsyncFiles:
    """The asyncio twin of Files."""

    def __init__(self, api: AsyncApi, sid: str) -> None:
        self._api = api
        self._path = sandbox_path(sid, "/files")

    async def write(self, path: str, data: AsyncData, mode: Optional[Union[int, str]] = None,
                    size: Optional[int] = None) -> None:
        content, n = _abody(data, size)
        await self._api.call("PUT", self._path, params=_params(path, mode), content=content,
                             headers={"Content-Length": str(n),
                                      "Content-Type": "application/octet-stream"})

    async def iter_read(self, path: str) -> AsyncIterator[bytes]:
        async with self._api.stream("GET", self._path, params=_params(path)) as res:
            async for b in res.aiter_bytes():
                yield b

    async def read_into(self, path: str, dest: IO[bytes]) -> int:
        n = 0
        async for b in self.iter_read(path):
            await asyncio.to_thread(dest.write, b)
            n += len(b)
        return n

    async def read(self, path: str) -> bytes:
        return b"".join([b async for b in self.iter_read(path)])

    async def list(self, path: str = ".") -> List[FileEntry]:
        r = await self._api.call("GET", self._path + "/list", params=_params(path))
        return [FileEntry.of(e) for e in r.get("entries", [])]

    async def mkdir(self, path: str, parents: bool = True) -> None:
        await self._api.call("POST", self._path + "/mkdir", json={"path": path, "parents": parents})
