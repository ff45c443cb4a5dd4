"""A command's output over GET .../commands/{cid}/stream, resumed after a drop.

Wire format (docs/api.md, "Streams"): binary messages are a tag byte (1
stdout, 2 stderr) and the bytes; text messages are {"type":"truncated"},
{"type":"error"} and {"type":"exit"}, the last one before a close 1000.
`since` counts chunk bytes of both streams, which is what `received`
counts here, so a stream reopened with since=received gets the very next
byte: nothing lost, nothing twice.
"""
from __future__ import annotations

import asyncio
import json
import time
from typing import Any, AsyncIterator, Callable, Awaitable, Dict, Iterator, Optional, Union

from ._errors import SandboxError, make_error
from ._ws_async import AsyncSocket
from ._ws_sync import SyncSocket
from ._wsproto import Closed, Dropped, Message, error_of_close
from ._types import Chunk

STREAM_OF_TAG = {1: "stdout", 2: "stderr"}
TAG_STDIN = b"\x00"


class _Resume:
    """What the stream knows whatever drives its socket: where it is, how
    it ended, and whether a lost socket is worth reopening."""

    def __init__(self, since: int, max_reconnects: int) -> None:
        self.received = since
        self.max_reconnects = max_reconnects
        self.reconnects = 0      # sockets reopened after a drop
        self.failures = 0        # reopenings in a row that brought nothing
        self.truncated = 0       # bytes lost to the agent's retention bound
        self.exit: Optional[Dict[str, Any]] = None
        self.last_error: Optional[Dict[str, Any]] = None
        self.done = False

    def message(self, msg: Message) -> Optional[Chunk]:
        if isinstance(msg, str):
            try:
                m = json.loads(msg)
            except ValueError:
                return None
            kind = m.get("type")
            if kind == "exit":
                self.exit = m
            elif kind == "error":
                self.last_error = m.get("error") or {}
            elif kind == "truncated":
                n = int(m.get("bytes") or 0)
                self.received += n  # gone for good: a resume starts after them
                self.truncated += n
            return None
        stream = STREAM_OF_TAG.get(msg[0]) if msg else None
        if stream is None:
            return None
        chunk = Chunk(stream, bytes(msg[1:]), self.received)
        self.received += len(chunk.data)
        self.failures = 0
        return chunk

    def lost(self, why: BaseException) -> float:
        """The socket is gone: seconds to wait before reopening, or the error
        that ends the stream (the stream is then done)."""
        if self.exit is not None:
            self.done = True
            return -1.0
        if isinstance(why, Closed) and 4400 <= why.code < 4500:
            self.done = True
            raise error_of_close(why.code, why.reason, self.last_error) from why
        if isinstance(why, SandboxError) and 400 <= why.status < 500:
            self.done = True
            raise why
        if self.failures >= self.max_reconnects:
            self.done = True
            raise make_error(0, "connection_failed",
                             f"command stream lost after {self.failures} attempts: {why}") from why
        delay = min(2.0, 0.1 * 2.0 ** self.failures)
        self.failures += 1
        self.reconnects += 1
        return delay

    @property
    def exit_code(self) -> Optional[int]:
        return None if self.exit is None else self.exit.get("exit_code")

    @property
    def signal(self) -> Optional[str]:
        return None if self.exit is None else self.exit.get("signal")


def _stdin(data: Union[str, bytes]) -> bytes:
    return TAG_STDIN + (data.encode() if isinstance(data, str) else bytes(data))


class LogStream(_Resume):
    """Iterate for the command's Chunks, in the order it wrote them; the
    iteration ends when the command has (exit_code, signal then say how).
    write/end/kill reach the command through the same socket."""

    def __init__(self, connect: Callable[[int], SyncSocket], since: int = 0,
                 max_reconnects: int = 8) -> None:
        super().__init__(since, max_reconnects)
        self._connect = connect
        self.ws: Optional[SyncSocket] = None

    def _socket(self) -> SyncSocket:
        if self.ws is None:
            self.ws = self._connect(self.received)
        return self.ws

    def __iter__(self) -> Iterator[Chunk]:
        try:
            while not self.done:
                try:
                    msg = self._socket().recv()
                except (Closed, Dropped, SandboxError) as e:
                    self.ws = None
                    delay = self.lost(e)
                    if delay > 0:
                        time.sleep(delay)
                    continue
                chunk = self.message(msg)
                if chunk is not None:
                    yield chunk
        finally:
            # A loop left early lets the socket go; iterating again resumes at `received`.
            if self.ws is not None:
                self.ws.close()
                self.ws = None

    def read_all(self) -> bytes:
        """Every remaining byte of both streams, in order."""
        return b"".join(c.data for c in self)

    def write(self, data: Union[str, bytes]) -> None:
        """Bytes for the command's stdin (a str is sent as UTF-8)."""
        self._socket().send_binary(_stdin(data))

    def end(self) -> None:
        """Closes the command's stdin."""
        self._socket().send_text(json.dumps({"type": "stdin_eof"}))

    def kill(self, signal: str = "SIGINT") -> None:
        self._socket().send_text(json.dumps({"type": "kill", "signal": signal}))

    def reconnect(self) -> None:
        """Drops the socket as a network cut would; the iteration resumes on a new one."""
        if self.ws is not None:
            self.ws.abort()

    def close(self) -> None:
        """Stops reading; the command itself keeps running."""
        self.done = True
        if self.ws is not None:
            self.ws.close()
            self.ws = None


class AsyncLogStream(_Resume):
    """The asyncio twin of LogStream: `async for chunk in stream`."""

    def __init__(self, connect: Callable[[int], Awaitable[AsyncSocket]], since: int = 0,
                 max_reconnects: int = 8) -> None:
        super().__init__(since, max_reconnects)
        self._connect = connect
        self.ws: Optional[AsyncSocket] = None

    async def _socket(self) -> AsyncSocket:
        if self.ws is None:
            self.ws = await self._connect(self.received)
        return self.ws

    async def __aiter__(self) -> AsyncIterator[Chunk]:
        try:
            while not self.done:
                try:
                    msg = await (await self._socket()).recv()
                except (Closed, Dropped, SandboxError) as e:
                    self.ws = None
                    delay = self.lost(e)
                    if delay > 0:
                        await asyncio.sleep(delay)
                    continue
                chunk = self.message(msg)
                if chunk is not None:
                    yield chunk
        finally:
            if self.ws is not None:
                self.ws.abort()  # no await in a finalizer an event loop may run late
                self.ws = None

    async def read_all(self) -> bytes:
        return b"".join([c.data async for c in self])

    async def write(self, data: Union[str, bytes]) -> None:
        await (await self._socket()).send_binary(_stdin(data))

    async def end(self) -> None:
        await (await self._socket()).send_text(json.dumps({"type": "stdin_eof"}))

    async def kill(self, signal: str = "SIGINT") -> None:
        await (await self._socket()).send_text(json.dumps({"type": "kill", "signal": signal}))

    def reconnect(self) -> None:
        if self.ws is not None:
            self.ws.abort()

    async def aclose(self) -> None:
        self.done = True
        if self.ws is not None:
            await self.ws.close()
            self.ws = None
