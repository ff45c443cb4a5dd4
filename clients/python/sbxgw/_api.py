"""The REST calls and WebSocket openings of one key at one gateway.

httpx gives the sync and the async client the same request and streaming
API, so the two variants differ only in `await`.
"""
from __future__ import annotations

import contextlib
import ssl
from typing import Any, AsyncIterator, Dict, Iterator, Optional

import httpx

from ._config import resolve, ws_url
from ._errors import SandboxError, error_from_body, make_error
from ._ws_async import AsyncSocket
from ._ws_sync import SyncSocket

# Waited commands and followed reads last as long as the command: no read timeout.
CONNECT_TIMEOUT = 30.0


def _timeout() -> httpx.Timeout:
    return httpx.Timeout(None, connect=CONNECT_TIMEOUT)


def _transport_error(e: Exception) -> SandboxError:
    return make_error(0, "connection_failed", f"{type(e).__name__}: {e}")


def _result(res: httpx.Response) -> Any:
    if res.status_code >= 400:
        raise error_from_body(res.status_code, res.content, res.reason_phrase)
    if not res.content:
        return None
    return res.json()


class Api:
    """Blocking: one connection pool, closed with close()."""

    def __init__(self, url: Optional[str] = None, api_key: Optional[str] = None,
                 ssl_context: Optional[ssl.SSLContext] = None) -> None:
        self.base, self.key = resolve(url, api_key)
        self.ssl_context = ssl_context
        self.auth = {"Authorization": f"Bearer {self.key}"}
        self.http = httpx.Client(base_url=self.base, headers=self.auth, timeout=_timeout(),
                                 verify=ssl_context or True)

    def call(self, method: str, path: str, json: Any = None, **kw: Any) -> Any:
        try:
            res = self.http.request(method, path, json=json, **kw)
        except httpx.TransportError as e:
            raise _transport_error(e) from e
        return _result(res)

    @contextlib.contextmanager
    def stream(self, method: str, path: str, **kw: Any) -> Iterator[httpx.Response]:
        """The response with its body unread (an error is raised with its body read)."""
        try:
            with self.http.stream(method, path, **kw) as res:
                if res.status_code >= 400:
                    res.read()
                    raise error_from_body(res.status_code, res.content, res.reason_phrase)
                yield res
        except httpx.TransportError as e:
            raise _transport_error(e) from e

    def socket(self, path: str, params: Dict[str, object]) -> SyncSocket:
        return SyncSocket.connect(ws_url(self.base, path, params), self.auth, CONNECT_TIMEOUT,
                                  self.ssl_context)

    def close(self) -> None:
        self.http.close()


class AsyncApi:
    """The asyncio twin of Api."""

    def __init__(self, url: Optional[str] = None, api_key: Optional[str] = None,
                 ssl_context: Optional[ssl.SSLContext] = None) -> None:
        self.base, self.key = resolve(url, api_key)
        self.ssl_context = ssl_context
        self.auth = {"Authorization": f"Bearer {self.key}"}
        self.http = httpx.AsyncClient(base_url=self.base, headers=self.auth, timeout=_timeout(),
                                      verify=ssl_context or True)

    async def call(self, method: str, path: str, json: Any = None, **kw: Any) -> Any:
        try:
            res = await self.http.request(method, path, json=json, **kw)
        except httpx.TransportError as e:
            raise _transport_error(e) from e
        return _result(res)

    @contextlib.asynccontextmanager
    async def stream(self, method: str, path: str, **kw: Any) -> AsyncIterator[httpx.Response]:
        try:
            async with self.http.stream(method, path, **kw) as res:
                if res.status_code >= 400:
                    await res.aread()
                    raise error_from_body(res.status_code, res.content, res.reason_phrase)
                yield res
        except httpx.TransportError as e:
            raise _transport_error(e) from e

    async def socket(self, path: str, params: Dict[str, object]) -> AsyncSocket:
        return await AsyncSocket.connect(ws_url(self.base, path, params), self.auth,
                                         CONNECT_TIMEOUT, self.ssl_context)

    async def aclose(self) -> None:
        await self.http.aclose()
