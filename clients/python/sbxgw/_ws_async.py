"""An asyncio WebSocket client (framing in _wsproto)."""
from __future__ import annotations

import asyncio
import ssl
from collections import deque
from typing import Deque, Dict, Optional

from ._errors import make_error
from ._wsproto import (MAX_HEAD, OP_BINARY, OP_CLOSE, OP_PONG, OP_TEXT, Closed, Dropped,
                       CloseFrame, Event, FrameReader, Message, Ping, check_upgrade, close_payload, encode_frame,
                       handshake_request, parse_head, split_url)


class AsyncSocket:
    """One open WebSocket; the asyncio twin of SyncSocket."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 early: bytes) -> None:
        self.r = reader
        self.w = writer
        self.frames = FrameReader()
        self.events: Deque[Event] = deque(self.frames.feed(early))
        self.closed = False

    @classmethod
    async def connect(cls, url: str, headers: Dict[str, str], timeout: float,
                      ssl_context: Optional[ssl.SSLContext] = None) -> "AsyncSocket":
        tls, host, port, _ = split_url(url)
        request, accept = handshake_request(url, headers)
        try:
            r, w = await asyncio.wait_for(asyncio.open_connection(
                host, port, ssl=(ssl_context or ssl.create_default_context()) if tls else None,
                server_hostname=host if tls else None, limit=MAX_HEAD * 2), timeout)
        except (OSError, asyncio.TimeoutError) as e:
            raise make_error(0, "connection_failed", f"{host}:{port}: {e!r}") from e
        try:
            w.write(request)
            head = await asyncio.wait_for(r.readuntil(b"\r\n\r\n"), timeout)
            status, reason, hdrs = parse_head(head[:-4])
            body = b""
            if status != 101:
                want = min(int(hdrs.get("content-length", "0") or 0), 1 << 16)
                body = await asyncio.wait_for(r.read(want), timeout) if want else b""
            check_upgrade(status, reason, hdrs, body, accept)
            return cls(r, w, b"")
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError,
                asyncio.LimitOverrunError) as e:
            w.close()
            raise make_error(0, "connection_failed", f"the WebSocket upgrade failed: {e!r}") from e
        except BaseException:
            w.close()
            raise

    async def recv(self) -> Message:
        while True:
            while self.events:
                ev = self.events.popleft()
                if isinstance(ev, Ping):
                    await self._send(OP_PONG, ev.payload)
                elif isinstance(ev, CloseFrame):
                    try:
                        await self._send(OP_CLOSE, close_payload(ev.code if ev.code != 1005 else 1000))
                    except Dropped:
                        pass
                    self.abort()
                    raise Closed(ev.code, ev.reason)
                else:
                    return ev
            if self.closed:
                raise Dropped("socket closed")
            try:
                data = await self.r.read(1 << 16)
            except OSError as e:
                self.abort()
                raise Dropped(str(e)) from e
            if not data:
                self.abort()
                raise Dropped("connection ended without a close frame")
            self.events.extend(self.frames.feed(data))

    async def _send(self, op: int, payload: bytes) -> None:
        if self.closed:
            raise Dropped("socket closed")
        try:
            self.w.write(encode_frame(op, payload))
            await self.w.drain()
        except OSError as e:
            self.abort()
            raise Dropped(str(e)) from e

    async def send_binary(self, data: bytes) -> None:
        await self._send(OP_BINARY, data)

    async def send_text(self, text: str) -> None:
        await self._send(OP_TEXT, text.encode())

    async def close(self, code: int = 1000) -> None:
        if not self.closed:
            try:
                await self._send(OP_CLOSE, close_payload(code))
            except Dropped:
                pass
        self.abort()

    def abort(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.w.close()
