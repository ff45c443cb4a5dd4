"""A blocking WebSocket client over a socket (framing in _wsproto)."""
from __future__ import annotations

import socket
import ssl
import threading
from collections import deque
from typing import Deque, Dict, Optional

from ._errors import make_error
from ._wsproto import (MAX_HEAD, OP_BINARY, OP_CLOSE, OP_PONG, OP_TEXT, Closed, Dropped,
                       CloseFrame, Event, FrameReader, Message, Ping, check_upgrade, close_payload, encode_frame,
                       handshake_request, parse_head, split_url)


class SyncSocket:
    """One open WebSocket. recv() gives the next message; Closed when the
    peer closed it, Dropped when the connection ended without a close."""

    def __init__(self, sock: socket.socket, reader: FrameReader, early: bytes) -> None:
        self.sock = sock
        self.reader = reader
        self.events: Deque[Event] = deque(reader.feed(early))
        self.send_lock = threading.Lock()  # a terminal may be written from another thread
        self.closed = False

    @classmethod
    def connect(cls, url: str, headers: Dict[str, str], timeout: float,
                ssl_context: Optional[ssl.SSLContext] = None) -> "SyncSocket":
        tls, host, port, _ = split_url(url)
        request, accept = handshake_request(url, headers)
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as e:
            raise make_error(0, "connection_failed", f"{host}:{port}: {e}") from e
        try:
            if tls:
                sock = (ssl_context or ssl.create_default_context()).wrap_socket(
                    sock, server_hostname=host)
            sock.sendall(request)
            buf = b""
            while b"\r\n\r\n" not in buf:
                data = sock.recv(4096)
                if not data or len(buf) > MAX_HEAD:
                    raise make_error(0, "connection_failed", "the WebSocket upgrade got no answer")
                buf += data
            head, rest = buf.split(b"\r\n\r\n", 1)
            status, reason, hdrs = parse_head(head)
            if status != 101:
                want = min(int(hdrs.get("content-length", "0") or 0), 1 << 16)
                while len(rest) < want:
                    data = sock.recv(want - len(rest))
                    if not data:
                        break
                    rest += data
            check_upgrade(status, reason, hdrs, rest, accept)
            sock.settimeout(None)  # a quiet command is not a dead one; the gateway pings
            return cls(sock, FrameReader(), rest)
        except OSError as e:
            sock.close()
            raise make_error(0, "connection_failed", f"{host}:{port}: {e}") from e
        except BaseException:
            sock.close()
            raise

    def recv(self) -> Message:
        while True:
            while self.events:
                ev = self.events.popleft()
                if isinstance(ev, Ping):
                    self._send(OP_PONG, ev.payload)
                elif isinstance(ev, CloseFrame):
                    try:
                        self._send(OP_CLOSE, close_payload(ev.code if ev.code != 1005 else 1000))
                    except Dropped:
                        pass
                    self.abort()
                    raise Closed(ev.code, ev.reason)
                else:
                    return ev
            if self.closed:
                raise Dropped("socket closed")
            try:
                data = self.sock.recv(1 << 16)
            except OSError as e:
                self.abort()
                raise Dropped(str(e)) from e
            if not data:
                self.abort()
                raise Dropped("connection ended without a close frame")
            self.events.extend(self.reader.feed(data))

    def _send(self, op: int, payload: bytes) -> None:
        if self.closed:
            raise Dropped("socket closed")
        try:
            with self.send_lock:
                self.sock.sendall(encode_frame(op, payload))
        except OSError as e:
            self.abort()
            raise Dropped(str(e)) from e

    def send_binary(self, data: bytes) -> None:
        self._send(OP_BINARY, data)

    def send_text(self, text: str) -> None:
        self._send(OP_TEXT, text.encode())

    def close(self, code: int = 1000) -> None:
        """A close frame, then the socket goes (no wait for the peer's answer)."""
        if not self.closed:
            try:
                self._send(OP_CLOSE, close_payload(code))
            except Dropped:
                pass
        self.abort()

    def abort(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
