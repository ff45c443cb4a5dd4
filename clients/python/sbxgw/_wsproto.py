"""RFC 6455 client framing without I/O, shared by the sync and async sockets.

Debian 12's python3-websockets (10.4) has no synchronous client, so one
small implementation of the part a client needs serves both: the upgrade
request and its answer, masked frames out, frames in (fragments joined,
pings answered by the caller with the pong this returns).
"""
from __future__ import annotations

import base64
import hashlib
import os
import struct
from typing import Any, Dict, List, Optional, Tuple, Union
from urllib.parse import urlsplit

from ._errors import SandboxError, error_from_body, make_error

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0, 1, 2, 8, 9, 10
MAX_MESSAGE = 64 << 20  # the gateway sends at most 64 KiB a message; a bound all the same
MAX_HEAD = 16 << 10


class Closed(Exception):
    """The peer closed the WebSocket with a close frame (code, reason)."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(f"WebSocket closed ({code}{': ' + reason if reason else ''})")
        self.code = code
        self.reason = reason


class Dropped(Exception):
    """The connection ended without a close frame (network cut, peer gone)."""


Message = Union[str, bytes]


class Ping:
    def __init__(self, payload: bytes) -> None:
        self.payload = payload


class CloseFrame:
    def __init__(self, code: int, reason: str) -> None:
        self.code = code
        self.reason = reason


# What the reader makes of the bytes: a whole message, a ping to answer, a close.
Event = Union[str, bytes, Ping, CloseFrame]


def split_url(url: str) -> Tuple[bool, str, int, str]:
    """(tls, host, port, path+query) of an http(s):// or ws(s):// URL."""
    u = urlsplit(url)
    tls = u.scheme in ("https", "wss")
    if u.scheme not in ("http", "https", "ws", "wss") or not u.hostname:
        raise ValueError(f"not an http(s) URL: {url!r}")
    port = u.port or (443 if tls else 80)
    path = (u.path or "/") + (f"?{u.query}" if u.query else "")
    return tls, u.hostname, port, path


def handshake_request(url: str, headers: Dict[str, str]) -> Tuple[bytes, str]:
    """The upgrade request for url and the Sec-WebSocket-Accept it must get."""
    tls, host, port, path = split_url(url)
    key = base64.b64encode(os.urandom(16)).decode()
    bare = f"[{host}]" if ":" in host else host  # an IPv6 address
    host_header = bare if port == (443 if tls else 80) else f"{bare}:{port}"
    lines = [f"GET {path} HTTP/1.1", f"Host: {host_header}", "Upgrade: websocket",
             "Connection: Upgrade", f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    accept = base64.b64encode(hashlib.sha1(key.encode() + GUID).digest()).decode()
    return ("\r\n".join(lines) + "\r\n\r\n").encode(), accept


def parse_head(head: bytes) -> Tuple[int, str, Dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[1].isdigit():
        raise make_error(0, "connection_failed", f"not an HTTP answer: {lines[0][:80]!r}")
    hdrs: Dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            hdrs[k.strip().lower()] = v.strip()
    return int(parts[1]), parts[2] if len(parts) > 2 else "", hdrs


def check_upgrade(status: int, reason: str, hdrs: Dict[str, str], body: bytes,
                  accept: str) -> None:
    """Raises the API's error for a refused upgrade (401, 404, ... with its JSON body)."""
    if status != 101:
        raise error_from_body(status, body, reason)
    if hdrs.get("sec-websocket-accept") != accept:
        raise make_error(0, "connection_failed", "WebSocket upgrade answered with a wrong accept key")


def encode_frame(opcode: int, payload: bytes) -> bytes:
    """One final, masked frame (a client must mask every frame)."""
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
    elif n < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
    mask = os.urandom(4)
    return head + mask + apply_mask(mask, payload)


def apply_mask(mask: bytes, payload: bytes) -> bytes:
    n = len(payload)
    if not n:
        return b""
    m = (mask * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(m, "big")).to_bytes(n, "big")


def close_payload(code: int, reason: str = "") -> bytes:
    return struct.pack("!H", code) + reason.encode()[:120]


class FrameReader:
    """Bytes in, Events out; an incomplete frame waits for more bytes."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.parts: List[bytes] = []
        self.part_op: Optional[int] = None

    def feed(self, data: bytes) -> List[Event]:
        self.buf += data
        out: List[Event] = []
        while True:
            frame = self._frame()
            if frame is None:
                return out
            fin, op, payload = frame
            if op == OP_PING:
                out.append(Ping(payload))
            elif op == OP_PONG:
                continue
            elif op == OP_CLOSE:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
                out.append(CloseFrame(code, payload[2:].decode("utf-8", "replace")))
            else:
                if op != OP_CONT:
                    self.part_op, self.parts = op, []
                elif self.part_op is None:
                    raise Dropped("continuation frame without a first frame")
                self.parts.append(payload)
                if sum(len(p) for p in self.parts) > MAX_MESSAGE:
                    raise Dropped("WebSocket message over the client's bound")
                if fin:
                    whole = b"".join(self.parts)
                    msg: Message = whole.decode("utf-8") if self.part_op == OP_TEXT else whole
                    self.part_op, self.parts = None, []
                    out.append(msg)

    def _frame(self) -> Optional[Tuple[bool, int, bytes]]:
        b = self.buf
        if len(b) < 2:
            return None
        fin, op, masked, n = bool(b[0] & 0x80), b[0] & 0x0F, bool(b[1] & 0x80), b[1] & 0x7F
        at = 2
        if n == 126:
            if len(b) < 4:
                return None
            n, at = struct.unpack_from("!H", b, 2)[0], 4
        elif n == 127:
            if len(b) < 10:
                return None
            n, at = struct.unpack_from("!Q", b, 2)[0], 10
        if n > MAX_MESSAGE:
            raise Dropped("WebSocket frame over the client's bound")
        mask = b""
        if masked:  # servers do not mask; accepted all the same
            if len(b) < at + 4:
                return None
            mask, at = bytes(b[at:at + 4]), at + 4
        if len(b) < at + n:
            return None
        payload = bytes(b[at:at + n])
        del b[:at + n]
        if mask:
            payload = apply_mask(mask, payload)
        return fin, op, payload


def error_of_close(code: int, reason: str,
                   last_error: Optional[Dict[str, Any]]) -> SandboxError:
    """A close 4000 + status (docs/api.md) as the API's error, with the code and
    message of the error message that came before it."""
    status = code - 4000 if 4000 <= code < 5000 else 0
    err = last_error or {}
    return make_error(status, str(err.get("code") or f"ws_{code}"),
                      str(err.get("message") or reason or f"WebSocket closed with {code}"))
