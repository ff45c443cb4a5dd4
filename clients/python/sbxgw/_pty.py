"""A terminal in a sandbox over GET .../pty (WebSocket): binary both ways is
terminal bytes; text messages resize, pause and resume; the server's text
{"type":"exit"} says the program ended. Closing the terminal hangs it up."""
from __future__ import annotations

import json
from typing import Any, Dict, Optional, Union

from ._ws_async import AsyncSocket
from ._ws_sync import SyncSocket
from ._wsproto import Closed, Dropped, Message, error_of_close


class _Screen:
    def __init__(self) -> None:
        self.exit: Optional[Dict[str, Any]] = None
        self.last_error: Optional[Dict[str, Any]] = None
        self.ended = False

    def message(self, msg: Message) -> Optional[bytes]:
        if isinstance(msg, bytes):
            return msg
        try:
            m = json.loads(msg)
        except ValueError:
            return None
        if m.get("type") == "exit":
            self.exit = m
        elif m.get("type") == "error":
            self.last_error = m.get("error") or {}
        return None

    def gone(self, why: Exception) -> None:
        """The socket ended: fine after the exit message or a normal close;
        a 44xx close is the API's refusal."""
        self.ended = True
        if isinstance(why, Closed) and 4000 <= why.code < 5000 and self.exit is None:
            raise error_of_close(why.code, why.reason, self.last_error) from why

    @property
    def exit_code(self) -> Optional[int]:
        return None if self.exit is None else self.exit.get("exit_code")


def _keys(data: Union[str, bytes]) -> bytes:
    return data.encode() if isinstance(data, str) else bytes(data)


class Terminal(_Screen):
    """read() gives the next piece of output (None once the terminal ended);
    write() types; resize() changes its size. Usable as a context manager."""

    def __init__(self, ws: SyncSocket) -> None:
        super().__init__()
        self.ws = ws

    def read(self) -> Optional[bytes]:
        while not self.ended:
            try:
                out = self.message(self.ws.recv())
            except (Closed, Dropped) as e:
                self.gone(e)
                return None
            if out is not None:
                return out
        return None

    def write(self, data: Union[str, bytes]) -> None:
        self.ws.send_binary(_keys(data))

    def resize(self, cols: int, rows: int) -> None:
        self.ws.send_text(json.dumps({"type": "resize", "cols": cols, "rows": rows}))

    def pause(self) -> None:
        """The gateway stops reading the terminal until resume()."""
        self.ws.send_text('{"type":"pause"}')

    def resume(self) -> None:
        self.ws.send_text('{"type":"resume"}')

    def close(self) -> None:
        self.ended = True
        self.ws.close()

    def __enter__(self) -> "Terminal":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class AsyncTerminal(_Screen):
    """The asyncio twin of Terminal."""

    def __init__(self, ws: AsyncSocket) -> None:
        super().__init__()
        self.ws = ws

    async def read(self) -> Optional[bytes]:
        while not self.ended:
            try:
                out = self.message(await self.ws.recv())
            except (Closed, Dropped) as e:
                self.gone(e)
                return None
            if out is not None:
                return out
        return None

    async def write(self, data: Union[str, bytes]) -> None:
        await self.ws.send_binary(_keys(data))

    async def resize(self, cols: int, rows: int) -> None:
        await self.ws.send_text(json.dumps({"type": "resize", "cols": cols, "rows": rows}))

    async def pause(self) -> None:
        await self.ws.send_text('{"type":"pause"}')

    async def resume(self) -> None:
        await self.ws.send_text('{"type":"resume"}')

    async def close(self) -> None:
        self.ended = True
        await self.ws.close()

    async def __aenter__(self) -> "AsyncTerminal":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()
